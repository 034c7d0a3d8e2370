// The thread `runner report` audits its run on (run-audit.ts, startAuditThread), started ahead: as
// soon as the command is known, before the report's own modules load (src/cli/commands.ts), so
// that the thread's start — a V8 isolate of its own compiling Node's modules and the audit's, 60 to
// 130 ms here — overlaps theirs instead of following it. The audit is the longer of the report's two
// threads: its start is the report's. A thread started ahead does not keep the process alive until it
// is taken: a report refused before it is (where there is no project) exits as it did, and the thread
// with it.
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";

/**
 * The bundle's folder, dist/, above the chunk this module is in, which holds the thread's program
 * (audit-thread.cjs) and its loader (load.mjs, src/load-bundle.ts: the thread's code starts from V8's
 * code cache as the CLI's does). In the sources under test there is none, and the audit runs on the
 * caller's thread.
 */
const DIST = fileURLToPath(new URL("..", import.meta.url));
const THREAD_FILE = path.join(DIST, "audit-thread.cjs");
const LOADER_FILE = path.join(DIST, "load.mjs");

interface Started {
  worker: Worker;
  /** It failed or ended before it was taken (then it is of no use). */
  gone: boolean;
}

let ahead: Started | undefined;

function start(): Started | undefined {
  if (!existsSync(THREAD_FILE) || !existsSync(LOADER_FILE)) return undefined;
  // (a young generation of 4 MB: the thread's objects are short-lived versions of the tree, and
  // V8's default of up to 48 MB is resident memory of the whole command — 159 → 142 MB measured)
  const program = `import(${JSON.stringify(pathToFileURL(LOADER_FILE).href)}).then((loader) => loader.loadBundle(${JSON.stringify(DIST)}, "audit-thread.cjs"));`;
  const worker = new Worker(program, { eval: true, resourceLimits: { maxYoungGenerationSizeMb: 4 } });
  const started: Started = { worker, gone: false };
  // (listened to from the start: an "error" nobody listens to would end the process)
  worker.once("error", () => (started.gone = true));
  worker.once("exit", () => (started.gone = true));
  worker.unref();
  return started;
}

/** Starts the audit's thread now, for the report about to load (once). */
export function startAuditThreadAhead(): void {
  ahead ??= start();
}

/**
 * The audit's thread, from now on keeping the process alive until it ends: the one started ahead
 * (once, unless it failed meanwhile), else a new one; undefined where there is no program for it.
 */
export function takeAuditThread(): Worker | undefined {
  const taken = ahead !== undefined && !ahead.gone ? ahead : start();
  ahead = undefined;
  taken?.worker.ref();
  return taken?.worker;
}
