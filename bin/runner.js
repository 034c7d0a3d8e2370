#!/usr/bin/env node
// Thin entry: the CLI is one bundled module (dist/runner.mjs, built by scripts/bundle.mjs); run it
// and exit with its code (src/exit-codes.ts). Where Node has a compile cache (22.1+), it is used.
import module from "node:module";
import { fileURLToPath } from "node:url";

module.enableCompileCache?.();
let cli;
try {
  cli = await import("../dist/runner.mjs");
} catch (error) {
  if (error?.code !== "ERR_MODULE_NOT_FOUND" || !String(error.message).includes("runner.mjs")) throw error;
  const root = fileURLToPath(new URL("..", import.meta.url));
  process.stderr.write(
    `runner is not built (${root}dist/runner.mjs is missing): run \`npm run build\` (or \`npm ci\`) in ${root.replace(/\/$/, "")}.\n`,
  );
  process.exit(1);
}
process.exitCode = await cli.main(process.argv.slice(2));
