// 5. Long run: one real `runner run` of many iterations (default 1,000) over a 1,000-node tree with
// the no-op agent and a guard that fails every 25th iteration on purpose. Reports the runner's own
// time per iteration (first and last 100, from each iteration's meta.json), the bytes of local logs
// per iteration (the agent's and guard's own output apart), and the time and peak RSS of the
// commands a person uses in the morning — status, log, audit, report — against `node -e 0`, at a
// checkpoint early in the run and at its end (so growth with the number of iterations shows); and
// the size of .git at the end against its size after `git gc` (the runner packs as it goes).
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { log, median, run, RUNNER_BIN, summary, timeRun } from "./lib/common.mjs";
import { benchConfig, makeTree, runRepo } from "./lib/fixtures.mjs";

const GNU_TIME = "/usr/bin/time";
/** Every FAIL_EVERY-th iteration's guard fails (a failed attempt is committed like any other). */
const FAIL_EVERY = 25;

const CONFIG = benchConfig({ guard: ["sh", "guard.sh"], limits: ["max_stalled_iterations = 1000"] });

const GUARD_SCRIPT = `# Bench guard: green, except on every ${FAIL_EVERY}th iteration.
echo "guard: iteration $RUNNER_ITERATION"
test $((RUNNER_ITERATION % ${FAIL_EVERY})) -ne 0
`;

/** A tree of `nodes` nodes with every leaf open (so a run of ~`nodes` iterations does not finish early). */
function openTree(nodes) {
  const tree = makeTree(nodes);
  const reset = (node) => {
    node.passes = false;
    node.attempts = 0;
    node.children.forEach(reset);
  };
  reset(tree.root);
  return tree;
}

function makeLongRepo(nodes) {
  return runRepo("runner-bench-long-", { config: CONFIG, tree: openTree(nodes), runId: "long", files: { "guard.sh": GUARD_SCRIPT } });
}

/** Time and peak RSS (GNU time's %M) of one command. */
function measure(repo, argv) {
  const { ms, result } = timeRun([GNU_TIME, "-f", "BENCH_MAXRSS_KB=%M", ...argv], { cwd: repo.dir, env: repo.env, allowFail: true });
  const match = /BENCH_MAXRSS_KB=(\d+)/.exec(result.stderr);
  if (!match) throw new Error(`${argv.join(" ")}: no RSS figure\n${result.stderr}`);
  if (result.status !== 0) throw new Error(`${argv.join(" ")} exited ${result.status}\n${result.stdout.slice(-2000)}\n${result.stderr.slice(-2000)}`);
  return { ms, mb: Number(match[1]) / 1024 };
}

const COMMANDS = {
  status: ["status"],
  log: ["log"],
  audit: ["audit"],
  report: ["report"],
  runs: ["runs"],
};

/** Each command `reps` times, alternating with `node -e 0`: median time, ratio, peak RSS. */
function measureCommands(repo, reps) {
  const rows = {};
  const floor = [];
  const samples = Object.fromEntries(Object.keys(COMMANDS).map((name) => [name, []]));
  measure(repo, ["node", "-e", "0"]);
  for (let i = 0; i < reps; i++) {
    for (const [name, args] of Object.entries(COMMANDS)) {
      samples[name].push(measure(repo, ["node", RUNNER_BIN, ...args]));
      floor.push(measure(repo, ["node", "-e", "0"]));
    }
  }
  const floorMs = median(floor.map((s) => s.ms));
  for (const [name, list] of Object.entries(samples)) {
    const ms = summary(
      list.map((s) => s.ms),
      0,
    );
    rows[name] = { ms, ratio: Number((ms.median / floorMs).toFixed(2)), peakRssMb: Math.round(Math.max(...list.map((s) => s.mb))) };
  }
  rows["node -e 0"] = {
    ms: summary(
      floor.map((s) => s.ms),
      0,
    ),
    ratio: 1,
    peakRssMb: Math.round(Math.max(...floor.map((s) => s.mb))),
  };
  const reportFile = path.join(repo.dir, ".runner", "iterations", "long", "report.html");
  return { commands: rows, reportBytes: statSync(reportFile).size };
}

/** The iterations' folders: runner time (total − agent − guard) and bytes, in iteration order. */
function iterationFacts(repo) {
  const dir = path.join(repo.dir, ".runner", "iterations", "long");
  const folders = readdirSync(dir)
    .filter((name) => /^\d{4,}$/.test(name))
    .sort((a, b) => Number(a) - Number(b));
  return folders.map((name) => {
    const folder = path.join(dir, name);
    const meta = JSON.parse(readFileSync(path.join(folder, "meta.json"), "utf8"));
    const d = meta.durations ?? {};
    const bytes = { tree: 0, output: 0, other: 0 };
    for (const file of readdirSync(folder)) {
      const size = statSync(path.join(folder, file)).size;
      if (file.startsWith("tree.")) bytes.tree += size;
      else if (file === "executor.log" || file === "guard.log" || file === "output.json") bytes.output += size;
      else bytes.other += size;
    }
    return { iteration: Number(name), runnerMs: (d.total_ms ?? 0) - (d.agent_ms ?? 0) - (d.guard_ms ?? 0), bytes };
  });
}

/** Bytes a folder takes on disk (du), as `.git` grows by files. */
function duBytes(folder) {
  return Number(run(["du", "-s", "-B1", folder]).stdout.split(/\s/)[0]);
}

const mean = (values) => values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);

export function longRun({ iterations, nodes, checkpoint, reps }) {
  if (!statSync(GNU_TIME, { throwIfNoEntry: false })) throw new Error(`the long run needs GNU time at ${GNU_TIME} for peak RSS`);
  const repo = makeLongRepo(nodes);
  const runTo = (count) => {
    const started = Date.now();
    const result = run(["node", RUNNER_BIN, "run", "--max-iterations", String(count)], { cwd: repo.dir, env: repo.env, allowFail: true });
    if (result.status !== 0 && result.status !== 3) throw new Error(`runner run exited ${result.status}\n${result.stderr.slice(-2000)}`);
    return Date.now() - started;
  };
  log(`  long run: ${checkpoint} iterations over ${nodes} nodes…`);
  const firstMs = runTo(checkpoint);
  log(`  long run: commands at ${checkpoint} iterations (${reps} runs each)…`);
  const early = measureCommands(repo, reps);
  log(`  long run: iterations ${checkpoint + 1} to ${iterations}…`);
  const restMs = runTo(iterations - checkpoint);
  log(`  long run: commands at ${iterations} iterations (${reps} runs each)…`);
  const late = measureCommands(repo, reps);
  const facts = iterationFacts(repo);
  if (facts.length !== iterations) throw new Error(`expected ${iterations} iteration logs, found ${facts.length}`);
  const first = facts.slice(0, 100).map((f) => f.runnerMs);
  const last = facts.slice(-100).map((f) => f.runnerMs);
  const bytes = (pick) => Math.round(mean(facts.map((f) => pick(f.bytes))));
  const gitBytes = duBytes(path.join(repo.dir, ".git"));
  run(["git", "gc", "-q"], { cwd: repo.dir, env: repo.env });
  const gitBytesAfterGc = duBytes(path.join(repo.dir, ".git"));
  const eventsBytes = statSync(path.join(repo.dir, ".runner", "iterations", "long", "events.jsonl")).size;
  return {
    iterations,
    nodes,
    checkpoint,
    failEvery: FAIL_EVERY,
    runSeconds: Math.round((firstMs + restMs) / 1000),
    runnerMsPerIteration: { first100: summary(first, 1), last100: summary(last, 1) },
    growth: Number((median(last) / median(first)).toFixed(2)),
    logBytesPerIteration: {
      total: bytes((b) => b.tree + b.output + b.other) + Math.round(eventsBytes / iterations),
      trees: bytes((b) => b.tree),
      agentAndGuardOutput: bytes((b) => b.output),
      rest: bytes((b) => b.other) + Math.round(eventsBytes / iterations),
    },
    at: { [checkpoint]: early, [iterations]: late },
    git: { bytes: gitBytes, bytesAfterGc: gitBytesAfterGc, ratio: Number((gitBytes / gitBytesAfterGc).toFixed(2)) },
  };
}
