// Builds what ships: the CLI bundled from the TypeScript sources into ES modules, dist/runner.mjs
// (bin/runner.js imports it) and its chunks in dist/chunks/, and the demo agent into
// dist/demo-agent.mjs. A few bundled files instead of about a hundred: Node's module loader
// resolves, reads and links each file of an import graph on its own, which cost about 100 ms per
// process on the `runner step` path (docs/performance.md). tsc only type-checks; nothing else is
// emitted.
//
// Left out of the bundle: @hpcc-js/wasm-graphviz (SVG only, with its WebAssembly), imported from
// node_modules when a diagram is rendered as SVG, and ajv's small runtime helpers, which the
// generated validators require from node_modules.
import { build } from "rolldown";
import { readdirSync, rmSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const dist = path.join(root, "dist");
rmSync(dist, { recursive: true, force: true });

const common = {
  platform: "node",
  external: [/^@hpcc-js\//, /^ajv\/dist\/runtime\//],
  // A warning here means code that would not work bundled: fail the build.
  onwarn(warning) {
    throw new Error(`bundle: ${warning.message}`);
  },
};
// The commands are imported lazily: each becomes a chunk of its own (with what it alone needs), so
// `runner next` loads neither the iteration machine nor the git adapters (measured in
// docs/performance.md: one file cost `next --json` about 10 ms more).
await build({
  ...common,
  // (audit-thread: the program of the thread `runner report` audits the run on, src/adapters/audit-thread.ts)
  input: { runner: path.join(root, "src", "cli", "main.ts"), "audit-thread": path.join(root, "src", "adapters", "audit-thread.ts") },
  output: { dir: dist, format: "esm", entryFileNames: "[name].mjs", chunkFileNames: "chunks/[name]-[hash].mjs" },
});
await build({
  ...common,
  input: path.join(root, "src", "demo", "agent.ts"),
  output: { file: path.join(dist, "demo-agent.mjs"), format: "esm", codeSplitting: false },
});
if (process.argv.includes("--verbose")) {
  const chunks = readdirSync(path.join(dist, "chunks"));
  const size = chunks.reduce((sum, name) => sum + statSync(path.join(dist, "chunks", name)).size, 0);
  console.log(
    `dist/runner.mjs and ${chunks.length} chunks: ${(size / 1024).toFixed(0)} KB; dist/demo-agent.mjs: ${(statSync(path.join(dist, "demo-agent.mjs")).size / 1024).toFixed(0)} KB`,
  );
}
