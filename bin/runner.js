#!/usr/bin/env node
// Thin entry: the CLI is a bundle of CommonJS files (dist/runner.cjs and its chunks, built by
// scripts/bundle.mjs), which dist/load.mjs compiles with V8's code cache (src/load-bundle.ts); run it
// and exit with its code (src/exit-codes.ts).
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const dist = fileURLToPath(new URL("../dist/", import.meta.url));
const missing = ["runner.cjs", "load.mjs"].find((file) => !existsSync(`${dist}${file}`));
if (missing !== undefined) {
  const root = fileURLToPath(new URL("..", import.meta.url));
  process.stderr.write(`runner is not built (${dist}${missing} is missing): run \`npm run build\` (or \`npm ci\`) in ${root.replace(/\/$/, "")}.\n`);
  process.exit(1);
}
const { loadBundle } = await import("../dist/load.mjs");
process.exitCode = await loadBundle(dist, "runner.cjs").main(process.argv.slice(2));
