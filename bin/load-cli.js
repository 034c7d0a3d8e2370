// Loads the CLI for bin/runner.js (and the benchmark's start-up diagnostic).
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
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import vm from "node:vm";

export const BUNDLE = fileURLToPath(new URL("../dist/runner.cjs", import.meta.url));

/**
 * Reads, compiles and evaluates the bundle; `command` names its code cache (undefined: no cache).
 * Returns the bundle's exports, a `keepCache()` that writes the cache when there was none (or V8
 * rejected it), and the time each part took (ms).
 */
export function loadCli(command) {
  const started = performance.now();
  let source;
  try {
    source = readFileSync(BUNDLE, "utf8");
  } catch (error) {
    if (error?.code !== "ENOENT") throw error;
    process.stderr.write(`runner is not built (${BUNDLE} is missing): run \`npm run build\` (or \`npm ci\`) in ${path.dirname(path.dirname(BUNDLE))}.\n`);
    process.exit(1);
  }
  const hash = createHash("sha256").update(source).digest("hex").slice(0, 16);
  const cacheFile = command === undefined ? undefined : path.join(path.dirname(BUNDLE), "code-cache", `${command}-${hash}-${process.version}-${process.arch}.bin`);
  let cachedData;
  try {
    cachedData = cacheFile === undefined ? undefined : readFileSync(cacheFile);
  } catch {
    cachedData = undefined;
  }
  const read = performance.now();
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, { filename: BUNDLE, cachedData });
  const compiled = performance.now();
  // yargs (help) and graphviz (SVG) stay in node_modules as ES modules: the bundle imports them
  // through this (src/external-import.ts), resolved from here, the same package.
  globalThis[Symbol.for("runner.hostImport")] = (specifier) => import(specifier);
  const cli = { exports: {} };
  script.runInThisContext()(cli.exports, createRequire(BUNDLE), cli, BUNDLE, path.dirname(BUNDLE));
  const evaluated = performance.now();

  const keepCache = () => {
    if (cacheFile === undefined || (cachedData !== undefined && !script.cachedDataRejected)) return;
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
  };
  return {
    cli: cli.exports,
    keepCache,
    cache: cachedData === undefined ? "none" : script.cachedDataRejected ? "rejected" : "used",
    ms: { read: read - started, compile: compiled - read, evaluate: evaluated - compiled },
  };
}
