// Loads the CLI's bundle (dist/runner.cjs and its chunks in dist/chunks/, CommonJS built by
// scripts/bundle.mjs) with V8's code cache. Built alone into dist/load.mjs, which bin/runner.js and
// the audit's thread (src/adapters/audit/thread-ahead.ts) import. Node 20 caches compiled code for no
// module of its own loaders (`module.enableCompileCache` came in Node 22.1, and its default folder is
// under the system's temporary folder, where any process of the user can write); so each file of the
// bundle is compiled here as a `node:vm` script, from the cached data a process that loaded the same
// file kept in dist/cache/. Measured on `runner step`: about 55 ms less per process, most of it the
// functions V8 would compile lazily while the step runs (docs/performance.md).
//
// What the cache may change: nothing that runs. A file's cache is named by the sha-256 of the file's
// text (V8 itself checks only the text's length, its own version and its flags, and ignores data it
// rejects); a cache that is missing or rejected is written anew when the process exits, atomically,
// and silently not where dist/ cannot be written. It lives beside the code it was compiled from:
// whoever can write it can write the code itself (docs/decisions.md).
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { threadId } from "node:worker_threads";
import vm from "node:vm";
import { HOST_IMPORT, SAVE_CODE_CACHE } from "./bundle-keys.js";

interface LoadedModule {
  exports: unknown;
}

/** The files loaded, by absolute path (each is evaluated once, as `require` would). */
const loaded = new Map<string, LoadedModule>();
/** Scripts compiled without usable cached data: their cache is written at exit. */
const uncached: { script: vm.Script; cacheFile: string }[] = [];

/** The exports of `file` (a file of the bundle in `dist`), loaded and evaluated once. */
export function loadBundle(dist: string, file: string): unknown {
  const absolute = path.resolve(dist, file);
  const known = loaded.get(absolute);
  if (known !== undefined) return known.exports;
  const module: LoadedModule = { exports: {} };
  loaded.set(absolute, module);
  const text = readFileSync(absolute, "utf8");
  const cacheFile = path.join(dist, "cache", `${path.basename(absolute)}-${createHash("sha256").update(text).digest("hex").slice(0, 32)}.bin`);
  let cachedData: Buffer | undefined;
  try {
    cachedData = readFileSync(cacheFile);
  } catch {
    cachedData = undefined;
  }
  // (the wrapper is CommonJS's own, on the file's first line: line numbers in stack traces stay the file's)
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${text}\n})`, {
    filename: absolute,
    cachedData,
  });
  if (cachedData === undefined || script.cachedDataRejected === true) {
    if (uncached.length === 0) process.once("exit", saveCodeCache);
    uncached.push({ script, cacheFile });
  }
  const dir = path.dirname(absolute);
  let outside: NodeRequire | undefined;
  // A chunk requires its sibling chunks by relative path; Node's modules and node_modules go to Node.
  // (the bundle calls `require` alone: no require.resolve, require.cache or require.main in it)
  const require = (id: string) =>
    id.startsWith("./") || id.startsWith("../") ? loadBundle(dist, path.join(dir, id)) : (outside ??= createRequire(absolute))(id);
  (script.runInThisContext() as (...args: unknown[]) => void)(module.exports, require, module, absolute, dir);
  return module.exports;
}

/** Writes the cache of every file compiled without one (with the functions compiled since), once. */
export function saveCodeCache(): void {
  for (const { script, cacheFile } of uncached.splice(0)) {
    const temporary = `${cacheFile}.${process.pid}-${threadId}.tmp`;
    try {
      mkdirSync(path.dirname(cacheFile), { recursive: true });
      writeFileSync(temporary, script.createCachedData());
      renameSync(temporary, cacheFile);
    } catch {
      // (dist/ cannot be written here: the next process compiles without a cache, as this one did)
    }
  }
}

(globalThis as Record<symbol, unknown>)[SAVE_CODE_CACHE] = saveCodeCache;
// The bundle's import() of an ES module in node_modules (src/external-import.ts): this module's own,
// as a script's would need a host callback Node 20 gives only behind an experimental warning.
(globalThis as Record<symbol, unknown>)[HOST_IMPORT] = (specifier: string) => import(specifier);
