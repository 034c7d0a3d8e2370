// Builds what ships: the CLI bundled from the TypeScript sources into one ES module,
// dist/runner.mjs (bin/runner.js imports it), and the demo agent into dist/demo-agent.mjs. One file
// instead of about a hundred: Node's module loader resolves, reads and links each file of an
// import graph on its own, which cost about 100 ms per process on the `runner step` path
// (docs/performance.md). tsc only type-checks (`npm run typecheck`); nothing else is emitted.
//
// Left out of the bundle: @hpcc-js/wasm-graphviz (SVG only, with its WebAssembly), imported from
// node_modules when a diagram is rendered as SVG, and ajv's small runtime helpers, which the
// generated validators require from node_modules.
import { build } from "rolldown";
import { rmSync, statSync } from "node:fs";
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
await build({ ...common, input: path.join(root, "src", "cli", "main.ts"), output: { file: path.join(dist, "runner.mjs"), format: "esm", codeSplitting: false } });
await build({ ...common, input: path.join(root, "src", "demo", "agent.ts"), output: { file: path.join(dist, "demo-agent.mjs"), format: "esm", codeSplitting: false } });
if (process.argv.includes("--verbose")) {
  for (const file of ["runner.mjs", "demo-agent.mjs"]) console.log(`dist/${file}: ${(statSync(path.join(dist, file)).size / 1024).toFixed(0)} KB`);
}
