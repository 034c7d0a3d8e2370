// 1. Step overhead: the whole `runner step` process against the floor (node -e 0 plus the git
// commands any runner must run for the same iteration, back to back in one shell script), on a grid
// of repository sizes × tree sizes. Every measured step is a real committed iteration; the repository
// is reset to its base commit between runs, outside the timing. Step and floor runs alternate.
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { log, run, RUNNER_BIN, summary, tempDir, timeRun } from "./lib/common.mjs";
import { resetRepo } from "./lib/fixtures.mjs";

const FLOOR_SCRIPT = `set -e
node -e 0
git status --porcelain > /dev/null
RUNNER_OUTPUT_FILE="$BENCH_FLOOR_OUTPUT" RUNNER_ITERATION=1 sh agent.sh < /dev/null
git status --porcelain > /dev/null
git add -A
git commit -q -m x
`;

let floorFile;
export function floorScript() {
  if (!floorFile) {
    floorFile = path.join(tempDir("runner-bench-floor-"), "floor.sh");
    writeFileSync(floorFile, FLOOR_SCRIPT);
  }
  return floorFile;
}

function stepOnce(repo, base) {
  resetRepo(repo, base);
  const spawnedAt = Date.now();
  const { ms, cpuMs, result } = timeRun(["node", RUNNER_BIN, "step"], { cwd: repo.dir, env: repo.env });
  // A real committed iteration: the leaf passed and HEAD moved.
  if (!/guard=pass/.test(result.stdout)) throw new Error(`step did not commit a passing iteration: ${result.stdout}${result.stderr}`);
  return { ms, cpuMs, toMachineMs: machineStart(repo) - spawnedAt };
}

/** When the last step's machine started (its first transition in events.jsonl, ms since the epoch). */
function machineStart(repo) {
  const events = stepEvents(repo);
  return Date.parse(events[events.findLastIndex((e) => e.from === "(start)")].time);
}

function stepEvents(repo) {
  const lines = readFileSync(path.join(repo.dir, ".runner", "iterations", "bench", "events.jsonl"), "utf8")
    .trim()
    .split("\n");
  return lines.slice(-20).map((line) => JSON.parse(line));
}

function floorOnce(repo, base) {
  resetRepo(repo, base);
  const env = { ...repo.env, BENCH_FLOOR_OUTPUT: path.join(repo.dir, ".runner", "iterations", "floor-output.json") };
  run(["mkdir", "-p", path.join(repo.dir, ".runner", "iterations")]);
  const { ms, cpuMs } = timeRun(["sh", floorScript()], { cwd: repo.dir, env });
  return { ms, cpuMs };
}

/** The last step's time per machine state, from its events.jsonl (ms resolution). */
function lastStepPhases(repo) {
  const events = stepEvents(repo);
  const start = events.findLastIndex((e) => e.from === "(start)");
  const mine = events.slice(start);
  const phases = {};
  for (let i = 0; i < mine.length - 1; i++)
    phases[mine[i].to] = (phases[mine[i].to] ?? 0) + (Date.parse(mine[i + 1].time) - Date.parse(mine[i].time));
  return phases;
}

/** One cell of the grid: `reps` steps and `reps` floors, alternating, after one warm-up of each. */
export function measureCell(repo, base, reps) {
  stepOnce(repo, base);
  floorOnce(repo, base);
  const steps = [];
  const floors = [];
  const ratios = [];
  for (let i = 0; i < reps; i++) {
    const s = stepOnce(repo, base);
    const f = floorOnce(repo, base);
    steps.push(s);
    floors.push(f);
    ratios.push(s.ms / f.ms);
  }
  stepOnce(repo, base);
  const phases = lastStepPhases(repo);
  const step = summary(steps.map((s) => s.ms));
  const floor = summary(floors.map((f) => f.ms));
  const cpu =
    steps.every((s) => s.cpuMs !== undefined) && floors.every((f) => f.cpuMs !== undefined)
      ? {
          step: summary(
            steps.map((s) => s.cpuMs),
            0,
          ),
          floor: summary(
            floors.map((f) => f.cpuMs),
            0,
          ),
        }
      : undefined;
  if (cpu) cpu.ratio = Number((cpu.step.median / cpu.floor.median).toFixed(2));
  // From spawning `node` to the machine's first state: Node's start, loading the code, the lock, the
  // configuration; the rest of the step is the machine's.
  const toMachine = summary(
    steps.map((s) => s.toMachineMs),
    0,
  );
  return { step, floor, ratio: Number((step.median / floor.median).toFixed(2)), ratioOfPairs: summary(ratios, 2), cpu, toMachine, phases };
}

export function stepOverhead(repos, treeSizes, repsFor) {
  const cells = [];
  for (const [files, repo] of repos) {
    for (const nodes of treeSizes) {
      const reps = repsFor(files, nodes);
      log(`  step overhead: ${files} files × ${nodes} nodes, ${reps} runs`);
      const cell = measureCell(repo, repo.bases[nodes], reps);
      cells.push({ files, nodes, reps, ...cell });
    }
  }
  return cells;
}
