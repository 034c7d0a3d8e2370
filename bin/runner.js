#!/usr/bin/env node
// Thin entry: load the CLI (bin/load-cli.js: the bundle, with V8's code cache), run it, and exit
// with its code (0 ok, 1 refused or bad input, 2 internal error, 3 stopped early).
import { loadCli } from "./load-cli.js";

const args = process.argv.slice(2);

/** The command word (it names the code cache): the first argument that is not an option or -C's folder. */
function commandWord() {
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "-C") i += 1;
    else if (!args[i].startsWith("-")) return /^[a-z]+$/.test(args[i]) ? args[i] : "none";
  }
  return "none";
}

const { cli, keepCache } = loadCli(commandWord());
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
