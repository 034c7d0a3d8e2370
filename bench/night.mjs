// 7. A night near the floor (issue 33): `runner run` for N iterations (default 1,000) over a plan of
// as many open leaves, against the bash loop that does the same work per iteration — spawns the same
// agent script and the guard, rewrites the tree file (one leaf passed), adds and commits. Both run in
// twin repositories, alternated in chunks (so a change in the machine's load hits both alike); the
// figure is the runner's total wall time over the loop's. What the runner pays beyond the loop is its
// own bookkeeping: containment, the checks, the journal, the logs, the lock.
//
//   node bench/night.mjs [--iterations=N] [--chunk=N]
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { log, RUNNER_BIN, tempDir, timeRun } from "./lib/common.mjs";
import { benchConfig, runRepo } from "./lib/fixtures.mjs";

/** Records the runner's own CPU time at its exit (its threads, not the processes it starts). */
const OWN_CPU_HOOK = fileURLToPath(new URL("./lib/own-cpu.mjs", import.meta.url));

const CONFIG = benchConfig({ limits: ["max_iterations = 1000000", "max_stalled_iterations = 0"] });

/** One iteration of the floor: the agent, the guard, the tree with its next open leaf passed, add, commit. */
const LOOP_SCRIPT = `set -e
i=$1; end=$2
while [ "$i" -le "$end" ]; do
  RUNNER_OUTPUT_FILE="$PWD/.runner/iterations/output.json" RUNNER_ITERATION=$i sh agent.sh < /dev/null
  /bin/true
  sed -i '0,/"passes": false/s//"passes": true/' .runner/state/tree.json
  git add -A
  git commit -q -m "iteration $i"
  i=$((i + 1))
done
`;

/** A flat plan: a root over `leaves` open leaves. */
function flatTree(leaves) {
  const node = (id, order, title, children) => ({
    id,
    order,
    title,
    goal: "",
    acceptance: [],
    passes: false,
    attempts: 0,
    max_attempts: 3,
    children,
  });
  const children = Array.from({ length: leaves }, (_, i) => node(`leaf-${String(i).padStart(5, "0")}`, i, `Leaf ${i}`, []));
  return { version: 1, root: node("root", 0, "Benchmark project", children) };
}

function twinRepo(label, leaves) {
  return runRepo(`runner-bench-night-${label}-`, { config: CONFIG, tree: flatTree(leaves), runId: "night" });
}

export function night({ iterations = 1_000, chunk = 100 } = {}) {
  log(`  night: twin repositories with ${iterations} open leaves…`);
  const runnerRepo = twinRepo("runner", iterations);
  const loopRepo = twinRepo("loop", iterations);
  const scratch = tempDir("runner-bench-night-script-");
  const loopFile = path.join(scratch, "loop.sh");
  const ownCpuFile = path.join(scratch, "own-cpu.jsonl");
  writeFileSync(loopFile, LOOP_SCRIPT);
  mkdirSync(path.join(loopRepo.dir, ".runner", "iterations"), { recursive: true });
  let runnerMs = 0;
  let loopMs = 0;
  let runnerCpuMs = 0;
  let loopCpuMs = 0;
  const chunks = [];
  for (let done = 0; done < iterations; done += chunk) {
    const size = Math.min(chunk, iterations - done);
    const r = timeRun(["node", "--import", OWN_CPU_HOOK, RUNNER_BIN, "run", "--max-iterations", String(size)], {
      cwd: runnerRepo.dir,
      env: { ...runnerRepo.env, BENCH_OWN_CPU_FILE: ownCpuFile },
      allowFail: true,
    });
    if (r.result.status !== 3 && r.result.status !== 0) throw new Error(`runner run exited ${r.result.status}: ${r.result.stderr.slice(-2000)}`);
    const l = timeRun(["sh", loopFile, String(done + 1), String(done + size)], { cwd: loopRepo.dir, env: loopRepo.env });
    runnerMs += r.ms;
    loopMs += l.ms;
    runnerCpuMs += r.cpuMs ?? Number.NaN;
    loopCpuMs += l.cpuMs ?? Number.NaN;
    chunks.push({ iterations: size, runnerMs: Math.round(r.ms), loopMs: Math.round(l.ms) });
    log(`  night: ${done + size}/${iterations} — runner ${Math.round(r.ms / size)} ms, loop ${Math.round(l.ms / size)} ms per iteration`);
  }
  // The runner's own CPU (both threads of each `runner run`), and what its processes took: git, the
  // agent's and the guard's, their containment wrappers (/proc/self/stat's children times, 10 ms steps).
  const ownCpuMs = readFileSync(ownCpuFile, "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line))
    .reduce((sum, usage) => sum + usage.userMs + usage.systemMs, 0);
  const perIteration = (ms) => Number((ms / iterations).toFixed(1));
  return {
    iterations,
    chunk,
    runnerMsPerIteration: perIteration(runnerMs),
    loopMsPerIteration: perIteration(loopMs),
    cpuMsPerIteration: { runnerOwn: perIteration(ownCpuMs), runnerProcesses: perIteration(runnerCpuMs - ownCpuMs), loop: perIteration(loopCpuMs) },
    ratio: Number((runnerMs / loopMs).toFixed(2)),
    chunks,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const arg = (name, fallback) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split("=")[1] ?? fallback);
  console.log(JSON.stringify(night({ iterations: arg("iterations", 1_000), chunk: arg("chunk", 100) }), null, 2));
}
