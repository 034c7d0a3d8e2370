#!/usr/bin/env node
// Thin entry: load the CLI (bin/load-cli.js: the bundle, with V8's code cache), run it, and exit
// with its code (0 ok, 1 refused or bad input, 2 internal error, 3 stopped early).
import { loadCli } from "./load-cli.js";

const args = process.argv.slice(2);
const { cli, keepCache } = loadCli(args.find((arg) => /^[a-z]+$/.test(arg)) ?? "none");
const code = await cli.main(args);
// A command that succeeded has compiled what it needed: keep that for the next process, once.
if (code === 0) keepCache();

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
