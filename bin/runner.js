#!/usr/bin/env node
// Thin entry: load the CLI, run it, and exit with its code (0 ok, 1 refused or bad input, 2 internal
// error, 3 stopped early).
//
// The CLI is dist/runner.cjs: tsc's output bundled into one file (scripts/bundle.mjs). It is
// compiled here with V8's code cache, which Node 20 offers for scripts (node:vm) but not for ES
// modules: a command's functions, once compiled, are kept in dist/code-cache/ and reused by the
// next process instead of being parsed and compiled again. The cache is named by the bundle's
// content hash, the Node version and the command, and V8 checks it again on load (a cache it
// rejects is ignored and written anew), so it can only make a start faster, never change what runs.
// Where dist/ cannot be written, the runner runs without it.
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import vm from "node:vm";

const bundle = fileURLToPath(new URL("../dist/runner.cjs", import.meta.url));
const source = readFileSync(bundle, "utf8");
const args = process.argv.slice(2);
const command = args.find((arg) => /^[a-z]+$/.test(arg)) ?? "none";
const hash = createHash("sha256").update(source).digest("hex").slice(0, 16);
const cacheFile = path.join(path.dirname(bundle), "code-cache", `${command}-${hash}-${process.version}-${process.arch}.bin`);

let cachedData;
try {
  cachedData = readFileSync(cacheFile);
} catch {
  cachedData = undefined;
}
const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
  filename: bundle,
  cachedData,
});
// yargs (help) and graphviz (SVG) stay in node_modules as ES modules: the bundle imports them
// through this (src/external-import.ts), resolved from here, the same package.
globalThis[Symbol.for("runner.hostImport")] = (specifier) => import(specifier);
const cli = { exports: {} };
script.runInThisContext()(cli.exports, createRequire(bundle), cli, bundle, path.dirname(bundle));

const code = await cli.exports.main(args);

// A command that succeeded has compiled what it needed: keep that for the next process, once.
if (code === 0 && (cachedData === undefined || script.cachedDataRejected)) {
  const temp = `${cacheFile}.${process.pid}.tmp`;
  try {
    mkdirSync(path.dirname(cacheFile), { recursive: true });
    writeFileSync(temp, script.createCachedData());
    renameSync(temp, cacheFile);
  } catch {
    try {
      rmSync(temp, { force: true });
    } catch {
      // nothing was written
    }
  }
}

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
