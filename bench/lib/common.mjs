// Shared helpers of the benchmark: timing, statistics, environment, temp folders.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
/** The runner under test: this checkout, or another build (BENCH_RUNNER_ROOT) to compare a candidate change. */
export const RUNNER_ROOT = process.env.BENCH_RUNNER_ROOT ? path.resolve(process.env.BENCH_RUNNER_ROOT) : PROJECT_ROOT;
export const RUNNER_BIN = path.join(RUNNER_ROOT, "bin", "runner.js");
export const DIST = path.join(RUNNER_ROOT, "dist");

/** Child environment: the user's git config isolated, a fixed identity, no colour or pager. */
export function benchEnv(extra = {}) {
  const env = { ...process.env };
  for (const key of Object.keys(env)) if (key.startsWith("GIT_")) delete env[key];
  delete env.NODE_OPTIONS;
  Object.assign(env, {
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_AUTHOR_NAME: "Bench Author",
    GIT_AUTHOR_EMAIL: "bench@example.com",
    GIT_COMMITTER_NAME: "Bench Author",
    GIT_COMMITTER_EMAIL: "bench@example.com",
    GIT_TERMINAL_PROMPT: "0",
    LC_ALL: "C",
    NO_COLOR: "1",
    // The runner's own state (its index, the journal) in a temp folder, never the user's.
    RUNNER_STATE_DIR: benchStateDir(),
  });
  return { ...env, ...extra };
}

let stateDir;
function benchStateDir() {
  stateDir ??= tempDir("runner-bench-state-");
  return stateDir;
}

const made = [];
export function tempDir(prefix) {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}
export function removeTempDirs() {
  if (process.env.BENCH_KEEP) return;
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** Runs a command synchronously; throws with its output when it fails. */
export function run(argv, options = {}) {
  const result = spawnSync(argv[0], argv.slice(1), { encoding: "utf8", maxBuffer: 256 * 1024 * 1024, ...options });
  if (result.error) throw result.error;
  if (result.status !== 0 && !options.allowFail) {
    throw new Error(`${argv.join(" ")} exited ${result.status ?? result.signal}\n${result.stdout}\n${result.stderr}`);
  }
  return result;
}

/** CPU time (user + system, ms) of this process's waited-for children so far, from /proc (Linux); undefined elsewhere. */
function childrenCpuMs() {
  try {
    const stat = readFileSync("/proc/self/stat", "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // fields[0] is field 3 (state): cutime and cstime are fields 16 and 17, in clock ticks (USER_HZ = 100 on Linux).
    return ((Number(fields[13]) + Number(fields[14])) * 1000) / 100;
  } catch {
    return undefined;
  }
}

/**
 * Wall-clock milliseconds of one synchronous child process (spawn to exit), and the CPU time it and
 * its descendants used (10 ms resolution; less sensitive than wall time to other load on the machine).
 */
export function timeRun(argv, options = {}) {
  const cpuBefore = childrenCpuMs();
  const start = process.hrtime.bigint();
  const result = run(argv, options);
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  const cpuAfter = childrenCpuMs();
  return { ms, cpuMs: cpuBefore === undefined || cpuAfter === undefined ? undefined : cpuAfter - cpuBefore, result };
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Median, min, max and the spread between the quartiles, rounded. */
export function summary(values, digits = 1) {
  const sorted = [...values].sort((a, b) => a - b);
  const q = (p) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.round(p * (sorted.length - 1))))];
  const r = (x) => Number(x.toFixed(digits));
  return { median: r(median(values)), min: r(sorted[0]), max: r(sorted[sorted.length - 1]), q1: r(q(0.25)), q3: r(q(0.75)), n: values.length };
}

export function log(...args) {
  process.stderr.write(`${args.join(" ")}\n`);
}
