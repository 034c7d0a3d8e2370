#!/usr/bin/env node
// Thin entry: run the CLI and exit with its code (0 ok, 1 refused or bad input, 2 internal error, 3 stopped early).
// dist/runner.mjs is tsc's output bundled into one module (scripts/bundle.mjs): one file to load.
import { main } from "../dist/runner.mjs";

const code = await main(process.argv.slice(2));
// Nothing is left to do once main returns; leave as soon as stdout and stderr are flushed instead of
// waiting for the event loop to wind down (a measurable part of a short command).
let pending = 2;
const flushed = () => {
  pending -= 1;
  if (pending === 0) process.exit(code);
};
process.exitCode = code;
process.stdout.write("", flushed);
process.stderr.write("", flushed);
