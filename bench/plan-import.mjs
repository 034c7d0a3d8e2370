// Plans as people have them (issue 30, docs/plans.md): what importing a big plan costs, and what a
// half-done plan costs in guard runs.
//
//   npm run build && node bench/plan-import.mjs [--quick]
//
// 1. `runner init --plan` of a 10,000-item plan of each format (half of the items finished), and of
//    15,000 items all titled "task" (ids from titles, issue 28 item 8), against `runner init --goal`
//    on the same repository: the median wall time of each, and the import's own share (plan − goal).
// 2. The guard runs a plan with 40 finished items and 2 open ones spends in `runner run` (a bash
//    agent, a bash guard that checks every leaf it is given): one for the 40, one per open leaf.
// Prints a table and writes bench/results/plan-import.json.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { benchEnv, log, PROJECT_ROOT, removeTempDirs, run, RUNNER_BIN, summary, tempDir, timeRun } from "./lib/common.mjs";

const quick = process.argv.includes("--quick");
const REPS = quick ? 3 : 7;
const ITEMS = 10_000;

/** Every other item finished: a half-done plan. */
const finished = (i) => i % 2 === 0;

function markdownPlan() {
  const lines = ["# A big plan", "", "The plan's goal.", ""];
  for (let i = 0; i < ITEMS; i++) {
    if (i % 100 === 0) lines.push(`## Section ${i / 100 + 1}`, "", "What this section is about.", "");
    lines.push(`- [${finished(i) ? "x" : " "}] Item number ${i + 1}`, "  - its criterion");
  }
  return lines.join("\n");
}

function specKitPlan() {
  const lines = ["# Tasks: A big feature", "", "## Format: `[ID] [P?] [Story] Description`", "", "- **[P]**: parallel", ""];
  for (let i = 0; i < ITEMS; i++) {
    if (i % 100 === 0) lines.push("---", "", `## Phase ${i / 100 + 1}: Part ${i / 100 + 1}`, "", "**Purpose**: a part", "");
    lines.push(`- [${finished(i) ? "x" : " "}] T${String(i + 1).padStart(5, "0")} [P] [US${(i % 7) + 1}] Build piece ${i + 1} in src/p${i}.ts`);
    if (i % 100 === 99) lines.push("", "**Checkpoint**: the part works", "");
  }
  lines.push("## Parallel Example", "", "```bash", "# Launch the tests together:", 'Task: "tests"', "```");
  return lines.join("\n");
}

function kiroPlan() {
  const lines = ["# Implementation Plan", ""];
  for (let i = 0; i < ITEMS / 10; i++) {
    lines.push(`- [${finished(i) ? "x" : " "}] ${i + 1}. Task ${i + 1}`, "  - _Requirements: 1.1_", "");
    for (let j = 1; j < 10; j++)
      lines.push(`- [${finished(j) ? "x" : " "}] ${i + 1}.${j} Subtask ${i + 1}.${j}`, "  - a detail", `  - _Requirements: ${j}.1_`);
  }
  return lines.join("\n");
}

function taskMasterPlan() {
  const tasks = [];
  for (let i = 1; i <= ITEMS / 10; i++) {
    const subtasks = Array.from({ length: 9 }, (_, j) => ({
      id: j + 1,
      title: `Subtask ${i}.${j + 1}`,
      description: "a step",
      dependencies: j > 0 ? [j] : [],
      status: finished(j) ? "done" : "pending",
    }));
    tasks.push({
      id: i,
      title: `Task ${i}`,
      description: "a task",
      details: "how",
      testStrategy: "a test",
      priority: ["high", "medium", "low"][i % 3],
      dependencies: i > 1 ? [i - 1] : [],
      status: finished(i) ? "done" : "pending",
      subtasks,
    });
  }
  return JSON.stringify({ master: { tasks, metadata: { created: "2026-11-26T00:00:00.000Z" } } }, null, 2);
}

function ralphPlan() {
  const userStories = Array.from({ length: ITEMS }, (_, i) => ({
    id: `US-${String(i + 1).padStart(5, "0")}`,
    title: `Story ${i + 1}`,
    description: "As a user I can do it.",
    acceptanceCriteria: ["it works", "Typecheck passes"],
    priority: (i % 5) + 1,
    passes: finished(i),
    notes: "",
    ...(i > 0 && i % 3 === 0 ? { dependsOn: [`US-${String(i).padStart(5, "0")}`] } : {}),
  }));
  return JSON.stringify({ project: "A big project", branchName: "ralph/big", description: "Everything.", userStories }, null, 2);
}

const sameTitles = () => `# Same\n\n${"- [ ] task\n".repeat(15_000)}`;

const PLANS = [
  ["Markdown checklist", "plan.md", markdownPlan],
  ["spec-kit tasks.md", "tasks.md", specKitPlan],
  ["Kiro tasks.md", "kiro.md", kiroPlan],
  ["task-master tasks.json", "tasks.json", taskMasterPlan],
  ["ralph prd.json", "prd.json", ralphPlan],
  ['15,000 items titled "task"', "same.md", sameTitles],
];

/** A fresh repository for one `runner init`. */
function freshRepo(env) {
  const dir = tempDir("runner-bench-plan-");
  run(["git", "init", "-q", dir], { env });
  return dir;
}

function importTimes(env) {
  const rows = [];
  const folder = tempDir("runner-bench-plans-");
  const goal = [];
  const goalCpu = [];
  for (let i = 0; i < REPS; i++) {
    const timed = timeRun(["node", RUNNER_BIN, "init", "--goal", "x", "--executor", "demo"], { cwd: freshRepo(env), env });
    goal.push(timed.ms);
    goalCpu.push(timed.cpuMs ?? Number.NaN);
  }
  const goalMs = summary(goal);
  const goalCpuMs = summary(goalCpu, 0);
  for (const [label, file, make] of PLANS) {
    const plan = path.join(folder, file);
    writeFileSync(plan, make());
    const times = [];
    const cpu = [];
    let nodes = 0;
    let finishedLeaves = 0;
    for (let i = 0; i < REPS; i++) {
      const dir = freshRepo(env);
      const { ms, cpuMs, result } = timeRun(["node", RUNNER_BIN, "init", "--plan", plan, "--executor", "demo"], { cwd: dir, env });
      times.push(ms);
      cpu.push(cpuMs ?? Number.NaN);
      nodes = Number(/imported (\d+) nodes/.exec(result.stdout)?.[1] ?? 0);
      finishedLeaves = Number(/(\d+) of its leaves are finished/.exec(result.stdout)?.[1] ?? 0);
    }
    const planMs = summary(times);
    const planCpu = summary(cpu, 0);
    rows.push({
      plan: label,
      bytes: readFileSync(plan).length,
      nodes,
      finishedLeaves,
      ms: planMs,
      importMs: Number((planMs.median - goalMs.median).toFixed(1)),
      cpuMs: planCpu,
      importCpuMs: planCpu.median - goalCpuMs.median,
    });
    log(`  ${label}: ${planMs.median} ms (${nodes} nodes, ${finishedLeaves} finished)`);
  }
  return { goalMs, goalCpuMs, rows };
}

const AGENT_SH = `mkdir -p src
echo "$RUNNER_NODE_ID $RUNNER_ITERATION" > "src/$RUNNER_NODE_ID.txt"
printf '{"status":"done","summary":"did %s"}' "$RUNNER_NODE_ID" > "$RUNNER_OUTPUT_FILE"
`;
const GUARD_SH = `echo "$RUNNER_NODE_IDS" >> "$GUARD_LOG"
for id in $RUNNER_NODE_IDS; do test -f "src/$id.txt" || exit 1; done
`;

function guardRunsOfHalfDonePlan(baseEnv) {
  const dir = freshRepo(baseEnv);
  const logFile = path.join(tempDir("runner-bench-guard-"), "guard.log");
  const env = { ...baseEnv, GUARD_LOG: logFile };
  const done = Array.from({ length: 40 }, (_, i) => `done-${i + 1}`);
  const plan = path.join(dir, "..", `${path.basename(dir)}-PLAN.md`);
  writeFileSync(plan, `# Forty done\n\n${done.map((id) => `- [x] ${id}\n`).join("")}- [ ] open-1\n- [ ] open-2\n`);
  run(["node", RUNNER_BIN, "init", "--plan", plan, "--executor", "command"], { cwd: dir, env });
  writeFileSync(
    path.join(dir, ".runner/state/config.toml"),
    '[executor]\nkind = "command"\ncommand = ["bash", "agent.sh"]\n\n[guard]\ncommand = ["bash", "guard.sh"]\n',
  );
  writeFileSync(path.join(dir, "agent.sh"), AGENT_SH);
  writeFileSync(path.join(dir, "guard.sh"), GUARD_SH);
  mkdirSync(path.join(dir, "src"));
  for (const id of done) writeFileSync(path.join(dir, "src", `${id}.txt`), "done\n");
  run(["git", "add", "-A"], { cwd: dir, env });
  run(["git", "commit", "-q", "-m", "plan"], { cwd: dir, env });
  run(["node", RUNNER_BIN, "start", "--run-id", "b1"], { cwd: dir, env });
  run(["node", RUNNER_BIN, "run"], { cwd: dir, env });
  const runs = readFileSync(logFile, "utf8").split("\n").filter(Boolean);
  const audit = run(["node", RUNNER_BIN, "audit"], { cwd: dir, env, allowFail: true });
  return {
    finishedItems: 40,
    openItems: 2,
    guardRuns: runs.length,
    guardRunsJudgingFinished: runs.filter((line) => line.includes("done-")).length,
    leavesJudgedPerRun: runs.map((line) => line.split(" ").length),
    auditClean: audit.status === 0,
  };
}

function main() {
  const env = benchEnv();
  log(`plan import: runner init --plan, median of ${REPS} runs each (the binary, end to end)`);
  const imports = importTimes(env);
  log("guard runs of a plan with 40 finished items and 2 open ones");
  const guard = guardRunsOfHalfDonePlan(env);
  console.log(`runner init --goal (no plan): ${imports.goalMs.median} ms wall, ${imports.goalCpuMs.median} ms CPU\n`);
  const header = ["plan", "bytes", "nodes", "finished", "init --plan ms", "import ms (− init --goal)", "CPU ms", "import CPU ms"];
  const rows = imports.rows.map((row) => [
    row.plan,
    row.bytes,
    row.nodes,
    row.finishedLeaves,
    row.ms.median,
    row.importMs,
    row.cpuMs.median,
    row.importCpuMs,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells) => cells.map((c, i) => String(c).padEnd(widths[i])).join("  ");
  console.log([line(header), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n"));
  console.log(
    `\n40 finished + 2 open items: ${guard.guardRuns} guard runs (${guard.guardRunsJudgingFinished} for the 40 finished ones; leaves judged per run: ${guard.leavesJudgedPerRun.join(", ")}); audit ${guard.auditClean ? "clean" : "NOT clean"}`,
  );
  const out = path.join(PROJECT_ROOT, "bench", "results");
  mkdirSync(out, { recursive: true });
  writeFileSync(path.join(out, "plan-import.json"), `${JSON.stringify({ date: new Date().toISOString(), reps: REPS, imports, guard }, null, 2)}\n`);
  removeTempDirs();
}

// (run as a script; imported, it only gives its plans)
if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) main();
