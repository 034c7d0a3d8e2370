// 4. Memory: peak resident set of `runner step` on the 100,000-node tree (one committed iteration).
// GNU time's %M (max RSS of the waited-for process, in KiB) when /usr/bin/time exists; otherwise
// VmHWM from /proc/<pid>/status, polled every 5 ms until the process exits.
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { clearInterval, setInterval } from "node:timers";
import { log, RUNNER_BIN, summary, timeRun } from "./lib/common.mjs";
import { resetRepo } from "./lib/fixtures.mjs";

const GNU_TIME = "/usr/bin/time";

function hasGnuTime() {
  if (!existsSync(GNU_TIME)) return false;
  try {
    const { result } = timeRun([GNU_TIME, "-f", "%M", "true"], { allowFail: true });
    return result.status === 0 && /^\d+\s*$/.test(result.stderr.trim().split("\n").pop());
  } catch {
    return false;
  }
}

function withGnuTime(repo) {
  const { ms, result } = timeRun([GNU_TIME, "-f", "BENCH_MAXRSS_KB=%M", "node", RUNNER_BIN, "step"], { cwd: repo.dir, env: repo.env });
  if (!/guard=pass/.test(result.stdout)) throw new Error(`step did not commit: ${result.stdout}${result.stderr}`);
  const kb = Number(/BENCH_MAXRSS_KB=(\d+)/.exec(result.stderr)[1]);
  return { ms, mb: kb / 1024 };
}

function withProcPolling(repo) {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    const child = spawn("node", [RUNNER_BIN, "step"], { cwd: repo.dir, env: repo.env, stdio: ["ignore", "pipe", "pipe"] });
    let peakKb = 0;
    let out = "";
    child.stdout.on("data", (chunk) => (out += chunk));
    child.stderr.on("data", (chunk) => (out += chunk));
    const poll = setInterval(() => {
      try {
        const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"));
        if (match) peakKb = Math.max(peakKb, Number(match[1]));
      } catch {
        // exited between polls
      }
    }, 5);
    child.on("error", reject);
    child.on("exit", () => {
      clearInterval(poll);
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      if (!/guard=pass/.test(out)) reject(new Error(`step did not commit: ${out}`));
      else resolve({ ms, mb: peakKb / 1024 });
    });
  });
}

export async function memory(repo, base, reps) {
  const gnu = hasGnuTime();
  const method = gnu ? "/usr/bin/time -f %M (max RSS)" : "VmHWM polled from /proc/<pid>/status every 5 ms";
  log(`  memory: runner step on ${base.nodes} nodes, ${reps} runs (${method})`);
  const mbs = [];
  const mss = [];
  for (let i = 0; i < reps; i++) {
    resetRepo(repo, base.sha);
    const { ms, mb } = gnu ? withGnuTime(repo) : await withProcPolling(repo);
    mbs.push(mb);
    mss.push(ms);
  }
  return { method, nodes: base.nodes, treeBytes: base.bytes, peakRssMb: summary(mbs), stepMs: summary(mss, 0) };
}
