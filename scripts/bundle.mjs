// Bundles the CLI (tsc's output under dist/) into one file, dist/runner.cjs, which bin/runner.js
// loads. One file instead of about a hundred: Node's module loader resolves, reads and links each
// file of an import graph on its own, and on the `runner step` path that cost about 100 ms per
// process (docs/performance.md). The code is tsc's, unchanged and unminified; modules a command
// imports lazily stay lazy (they are wrapped, and run when first imported). The format is CommonJS
// so that bin/runner.js can compile it with V8's code cache (node:vm), which Node 20 offers for
// scripts but not for ES modules; the cache of an older build is removed here.
//
// Left out of the bundle and loaded from node_modules when needed: yargs (help and usage errors
// only) and @hpcc-js/wasm-graphviz (SVG only, with its WebAssembly).
import { build } from "rolldown";
import { existsSync, rmSync, statSync } from "node:fs";
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
  // A warning here means code that would not work bundled (import.meta in CommonJS, say): fail the build.
  onwarn(warning) {
    throw new Error(`bundle: ${warning.message}`);
  },
  output: {
    file: path.join(root, "dist", "runner.cjs"),
    format: "cjs",
    // tsc's output is ES modules, which are strict: so is the bundle.
    banner: '"use strict";',
    codeSplitting: false,
  },
});
rmSync(path.join(root, "dist", "runner.mjs"), { force: true }); // the ES-module bundle of earlier builds
rmSync(path.join(root, "dist", "code-cache"), { recursive: true, force: true });
const size = statSync(path.join(root, "dist", "runner.cjs")).size;
if (process.argv.includes("--verbose")) console.log(`dist/runner.cjs: ${(size / 1024).toFixed(0)} KB`);
