// Bundles the CLI (tsc's output under dist/) into one ES module, dist/runner.mjs, which
// bin/runner.js loads. One file instead of about a hundred: Node's module loader resolves, reads and
// links each file of an import graph on its own, and on the `runner step` path that cost about
// 100 ms per process (docs/performance.md). The code is tsc's, unchanged and unminified; modules a
// command imports lazily stay lazy (they are wrapped, and run when first imported).
//
// Left out of the bundle and loaded from node_modules when needed: yargs (help and usage errors
// only) and @hpcc-js/wasm-graphviz (SVG only, with its WebAssembly).
import { build } from "rolldown";
import { existsSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const entry = path.join(root, "dist", "src", "cli", "main.js");
if (!existsSync(entry)) {
  console.error(`bundle: ${path.relative(root, entry)} is missing; run tsc first (npm run build does both).`);
  process.exit(1);
}

await build({
  input: entry,
  platform: "node",
  external: [/^yargs(\/|$)/, /^@hpcc-js\//],
  logLevel: "warn",
  output: {
    file: path.join(root, "dist", "runner.mjs"),
    format: "esm",
    codeSplitting: false,
  },
});
const size = statSync(path.join(root, "dist", "runner.mjs")).size;
if (process.argv.includes("--verbose")) console.log(`dist/runner.mjs: ${(size / 1024).toFixed(0)} KB`);
