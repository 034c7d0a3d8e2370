// `npm run bench`: the runner's own cost against the floor it cannot beat (docs/performance.md).
// Prints a table with each figure's target and writes bench/results/latest.json.
//
//   node --expose-gc bench/run.mjs [--quick] [--only=step,cli,core,memory,diag,long,watch,mcp,demo,night] [--profile]
//                                  [--long-iterations=N]
//
// --quick: fewer runs per figure (a smoke test, not for the record). --profile: also CPU-profile
// one step, one `runner next` and the core (summaries go into the JSON). --long-iterations: the
// long run's length (default 1,000; 200 with --quick). Needs `npm run build` first.
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { benchEnv, log, PROJECT_ROOT, removeTempDirs, run } from "./lib/common.mjs";
import { makeRepo, makeTree, treeText } from "./lib/fixtures.mjs";
import { floorScript, stepOverhead } from "./step-overhead.mjs";
import { cliStart } from "./cli-start.mjs";
import { mcpStart } from "./mcp-start.mjs";
import { coreScaling } from "./core-scaling.mjs";
import { memory } from "./memory.mjs";
import { hasStrace, processesPerStep, profiles, startupTimes } from "./diagnostics.mjs";
import { longRun } from "./long-run.mjs";
import { watchBench, WATCH_TARGETS } from "./watch.mjs";
import { demoRun } from "./demo.mjs";
import { night } from "./night.mjs";

const args = process.argv.slice(2);
const quick = args.includes("--quick");
const withProfile = args.includes("--profile");
const onlyArg = args.find((arg) => arg.startsWith("--only="));
const only = new Set(
  onlyArg ? onlyArg.slice("--only=".length).split(",") : ["step", "cli", "core", "memory", "diag", "long", "watch", "mcp", "demo", "night"],
);
const longArg = args.find((arg) => arg.startsWith("--long-iterations="));

const FILES = [100, 10_000];
const STEP_TREES = [10, 1_000, 10_000];
const CORE_TREES = [1_000, 10_000, 100_000];
const MEMORY_TREE = 100_000;
const CLI_TREE = 1_000;
const LONG = { iterations: longArg ? Number(longArg.slice("--long-iterations=".length)) : quick ? 200 : 1_000, nodes: 1_000, checkpoint: 100 };

// Runs per figure (medians). Fewer for the expensive cells keep the whole bench near 5 minutes.
const REPS = quick
  ? { step: () => 3, cli: 5, core: () => 3, memory: 1, imports: 3, long: 1, demo: 1 }
  : {
      step: (files, nodes) => (files >= 10_000 && nodes >= 10_000 ? 7 : nodes >= 10_000 ? 5 : 7),
      cli: 11,
      core: (nodes) => (nodes >= 100_000 ? 5 : nodes >= 10_000 ? 11 : 31),
      memory: 3,
      imports: 5,
      long: 3,
      demo: 3,
    };

const TARGETS = {
  // step ≤ 1.8× the floor on every cell of the grid; `next --json` ≤ 1.5× `node -e 0`
  stepRatio: 1.8,
  cliRatio: 1.5,
  coreGrowth: 2,
  coreTotalMs: 1000,
  memoryMb: 300,
  // The long run (issue 24): runner time per iteration flat; the morning's commands at the end of the
  // run within 10× `node -e 0` and 150 MB; local logs per iteration within 20 KB besides the agent's
  // and the guard's own output.
  longGrowth: 1.2,
  longRatio: 10,
  longRssMb: 150,
  longLogKb: 20,
  // The README's promise: `npm run demo` shows the whole loop in under a minute.
  demoSeconds: 60,
  // A night near the floor (issue 33): `runner run` ≤ 3× a bash loop doing the same work; .git within 2× of its size after `git gc`.
  nightRatio: 3,
  gitGcRatio: 2,
};

function gitVersion() {
  return run(["git", "--version"]).stdout.trim();
}

function runnerCommit() {
  const result = run(["git", "rev-parse", "--short", "HEAD"], { cwd: PROJECT_ROOT, allowFail: true, env: benchEnv() });
  const dirty = run(["git", "status", "--porcelain", "--", "src", "machines"], { cwd: PROJECT_ROOT, allowFail: true, env: benchEnv() });
  return `${result.stdout.trim()}${dirty.stdout.trim() ? " + uncommitted changes in src/ or machines/" : ""}`;
}

const verdict = (pass) => (pass ? "ok" : "MISSED");

function printTable(rows, headers) {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells) => cells.map((c, i) => String(c).padEnd(widths[i])).join("  ");
  console.log(line(headers));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const row of rows) console.log(line(row));
  console.log();
}

async function main() {
  const started = Date.now();
  const results = {
    meta: {
      date: new Date().toISOString(),
      node: process.version,
      git: gitVersion(),
      platform: `${os.platform()} ${os.release()} ${os.arch()}`,
      cpus: `${os.cpus().length} × ${os.cpus()[0]?.model ?? "?"}`,
      memoryGb: Number((os.totalmem() / 1024 ** 3).toFixed(1)),
      loadAverageAtStart: os.loadavg().map((x) => Number(x.toFixed(2))),
      runner: runnerCommit(),
      quick,
      statistic: "median over the stated number of runs (n); q1/q3/min/max given for spread",
    },
    targets: [],
  };

  log("building fixtures (trees and repositories in the temp folder)…");
  const treeSizes = [...new Set([...STEP_TREES, CLI_TREE, MEMORY_TREE])];
  const trees = new Map(treeSizes.map((nodes) => [nodes, { text: treeText(makeTree(nodes)) }]));
  const repos = new Map();
  const needRepos = only.has("step") || only.has("cli") || only.has("memory") || only.has("diag") || only.has("mcp");
  if (needRepos) {
    for (const files of FILES) {
      const sizes = files === FILES[0] ? treeSizes : STEP_TREES;
      log(`  repository of ${files} files with trees of ${sizes.join(", ")} nodes`);
      repos.set(files, makeRepo(files, sizes, trees));
    }
  }
  const small = repos.get(FILES[0]);
  const big = repos.get(FILES[FILES.length - 1]);

  const section = (name, started) => (results.meta.sectionSeconds[name] = Math.round((Date.now() - started) / 1000));
  results.meta.sectionSeconds = {};
  let t0 = Date.now();
  if (only.has("step")) {
    log("1. step overhead");
    results.step = stepOverhead(repos, STEP_TREES, REPS.step);
    const worst = results.step.reduce((a, b) => (b.ratio > a.ratio ? b : a));
    results.targets.push({
      figure: `step / floor, worst cell of the grid (${worst.files} files × ${worst.nodes} nodes)`,
      value: worst.ratio,
      unit: "×",
      target: `≤ ${TARGETS.stepRatio}×`,
      pass: worst.ratio <= TARGETS.stepRatio,
    });
    section("step", t0);
  }
  t0 = Date.now();
  if (only.has("cli")) {
    log("2. CLI start");
    results.cli = cliStart(small, small.bases[CLI_TREE], REPS.cli);
    results.targets.push({
      figure: "runner next --json / node -e 0 at 1,000 nodes",
      value: results.cli.ratio,
      unit: "×",
      target: `≤ ${TARGETS.cliRatio}×`,
      pass: results.cli.ratio <= TARGETS.cliRatio,
    });
    section("cli", t0);
  }
  t0 = Date.now();
  if (only.has("mcp")) {
    log("7. MCP start");
    // (measured, no target: a client starts `runner mcp` once per session)
    results.mcp = await mcpStart(small, small.bases[CLI_TREE], REPS.cli);
    section("mcp", t0);
  }
  t0 = Date.now();
  if (only.has("core")) {
    log("3. core scaling");
    results.core = await coreScaling(CORE_TREES, REPS.core);
    const worst = Math.max(...Object.entries(results.core.growth).map(([, g]) => g));
    const last = results.core.rows[results.core.rows.length - 1];
    results.targets.push({
      figure: `core µs/node growth ${results.core.from} → ${results.core.to} nodes (worst operation)`,
      value: worst,
      unit: "×",
      target: `≤ ${TARGETS.coreGrowth}×`,
      pass: worst <= TARGETS.coreGrowth,
    });
    results.targets.push({
      figure: `core select+validate+update+serialize at ${last.nodes} nodes`,
      value: Math.round(last.totalMs),
      unit: " ms",
      target: `< ${TARGETS.coreTotalMs} ms`,
      pass: last.totalMs < TARGETS.coreTotalMs,
    });
    section("core", t0);
  }
  t0 = Date.now();
  if (only.has("memory")) {
    log("4. memory");
    results.memory = await memory(
      small,
      { nodes: MEMORY_TREE, sha: small.bases[MEMORY_TREE], bytes: trees.get(MEMORY_TREE).text.length },
      REPS.memory,
    );
    const mb = Math.round(results.memory.peakRssMb.median);
    results.targets.push({
      figure: `peak RSS of runner step at ${MEMORY_TREE} nodes`,
      value: mb,
      unit: " MB",
      target: `< ${TARGETS.memoryMb} MB`,
      pass: mb < TARGETS.memoryMb,
    });
    section("memory", t0);
  }
  t0 = Date.now();
  if (only.has("diag")) {
    log("diagnostics");
    results.diagnostics = {};
    results.diagnostics.processes = hasStrace()
      ? processesPerStep(big ?? small, (big ?? small).bases[10_000], floorScript())
      : "strace is not available: not measured";
    results.diagnostics.startupMs = startupTimes(REPS.imports);
    if (withProfile) results.diagnostics.profiles = profiles(big ?? small, (big ?? small).bases[10_000], small, small.bases[CLI_TREE], 100_000);
    section("diagnostics", t0);
  }
  t0 = Date.now();
  if (only.has("long")) {
    log("5. long run");
    const l = (results.long = longRun({ ...LONG, reps: REPS.long }));
    const end = l.at[l.iterations].commands;
    results.targets.push({
      figure: `runner time per iteration, last 100 / first 100 (${l.iterations} iterations)`,
      value: l.growth,
      unit: "×",
      target: `≤ ${TARGETS.longGrowth}×`,
      pass: l.growth <= TARGETS.longGrowth,
    });
    for (const name of ["status", "log", "runs", "audit", "report"]) {
      results.targets.push({
        figure: `runner ${name} / node -e 0 at ${l.iterations} iterations`,
        value: end[name].ratio,
        unit: "×",
        target: `≤ ${TARGETS.longRatio}×`,
        pass: end[name].ratio <= TARGETS.longRatio,
      });
      results.targets.push({
        figure: `peak RSS of runner ${name} at ${l.iterations} iterations`,
        value: end[name].peakRssMb,
        unit: " MB",
        target: `≤ ${TARGETS.longRssMb} MB`,
        pass: end[name].peakRssMb <= TARGETS.longRssMb,
      });
    }
    const kb = Number(((l.logBytesPerIteration.total - l.logBytesPerIteration.agentAndGuardOutput) / 1024).toFixed(1));
    results.targets.push({
      figure: `local log per iteration besides agent and guard output (${l.nodes} nodes)`,
      value: kb,
      unit: " KB",
      target: `≤ ${TARGETS.longLogKb} KB`,
      pass: kb <= TARGETS.longLogKb,
    });
    results.targets.push({
      figure: `.git after ${l.iterations} iterations / after git gc`,
      value: l.git.ratio,
      unit: "×",
      target: `≤ ${TARGETS.gitGcRatio}×`,
      pass: l.git.ratio <= TARGETS.gitGcRatio,
    });
    section("long", t0);
  }
  t0 = Date.now();
  if (only.has("night")) {
    log("8. a night: runner run against a bash loop doing the same work");
    const n = (results.night = night({ iterations: quick ? 200 : 1_000, chunk: quick ? 50 : 100 }));
    results.targets.push({
      figure: `runner run / bash loop, ${n.iterations} iterations over ${n.iterations} leaves (alternated in chunks of ${n.chunk})`,
      value: n.ratio,
      unit: "×",
      target: `≤ ${TARGETS.nightRatio}×`,
      pass: n.ratio <= TARGETS.nightRatio,
    });
    section("night", t0);
  }
  t0 = Date.now();
  if (only.has("watch")) {
    log("6. runner watch");
    const w = (results.watch = await watchBench({ quick }));
    const frameMs = w.frame["200x60"].first.cpu.median;
    results.targets.push({
      figure: "runner watch: a frame of a 10,000-node tree (first after a commit, 200×60, CPU)",
      value: frameMs,
      unit: " ms",
      target: `≤ ${WATCH_TARGETS.frameMs} ms`,
      pass: frameMs <= WATCH_TARGETS.frameMs,
    });
    const idle = Math.max(...Object.values(w.idle).map((r) => r.percent));
    results.targets.push({
      figure: "runner watch: CPU while the run is idle (worst of one run, --all)",
      value: idle,
      unit: " %",
      target: `≤ ${WATCH_TARGETS.idleCpuPercent} %`,
      pass: idle <= WATCH_TARGETS.idleCpuPercent,
    });
    section("watch", t0);
  }
  t0 = Date.now();
  if (only.has("demo")) {
    log("7. the demo");
    results.demo = demoRun(REPS.demo);
    results.targets.push({
      figure: "runner demo, the whole loop (wall)",
      value: results.demo.seconds.median,
      unit: " s",
      target: `< ${TARGETS.demoSeconds} s`,
      pass: results.demo.seconds.median < TARGETS.demoSeconds,
    });
    section("demo", t0);
  }
  results.meta.loadAverageAtEnd = os.loadavg().map((x) => Number(x.toFixed(2)));
  results.meta.durationSeconds = Math.round((Date.now() - started) / 1000);

  report(results);
  const outDir = path.join(PROJECT_ROOT, "bench", "results");
  mkdirSync(outDir, { recursive: true });
  const file = path.join(outDir, "latest.json");
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  console.log(
    `results: ${path.relative(process.cwd(), file)} (${results.meta.durationSeconds} s: ${Object.entries(results.meta.sectionSeconds)
      .map(([k, v]) => `${k} ${v} s`)
      .join(", ")}; load average ${results.meta.loadAverageAtStart[0]} → ${results.meta.loadAverageAtEnd[0]} on ${os.cpus().length} CPUs)`,
  );
}

function report(results) {
  console.log();
  if (results.step) {
    console.log(
      "1. Step overhead: `runner step` (no-op agent, guard `true`) vs floor (node -e 0 + git status, agent, git status, git add -A, git commit)",
    );
    printTable(
      results.step.map((c) => [
        c.files,
        c.nodes,
        c.reps,
        `${c.step.median} ms`,
        `${c.floor.median} ms`,
        `${c.ratio}×`,
        c.cpu ? `${c.cpu.step.median} / ${c.cpu.floor.median} ms = ${c.cpu.ratio}×` : "–",
        c.toMachine ? `${c.toMachine.median} ms` : "–",
        `≤ ${TARGETS.stepRatio}× ${verdict(c.ratio <= TARGETS.stepRatio)}`,
      ]),
      ["files", "nodes", "runs", "step", "floor", "step/floor", "CPU step / floor (info)", "to machine (info)", "target"],
    );
    console.log("   to machine: from spawning the step to its machine's first state (Node's start, loading the code, lock, configuration)");
    for (const [files, nodes] of [
      [100, 10],
      [10_000, 10_000],
    ]) {
      const cell = results.step.find((c) => c.files === files && c.nodes === nodes);
      if (cell)
        console.log(
          `   ${files.toLocaleString("en")} × ${nodes.toLocaleString("en")}, one step by machine state (ms, from events.jsonl; a state's figure includes the transition work done on leaving it): ${Object.entries(
            cell.phases,
          )
            .map(([k, v]) => `${k} ${v}`)
            .join(", ")}`,
        );
    }
    console.log();
  }
  if (results.cli) {
    const c = results.cli;
    console.log("2. CLI start");
    printTable(
      [[`${c.next.median} ms`, `${c.nodeE0.median} ms`, c.next.n, `${c.ratio}×`, `≤ ${TARGETS.cliRatio}× ${verdict(c.ratio <= TARGETS.cliRatio)}`]],
      ["next --json (1,000 nodes)", "node -e 0", "runs", "ratio", "target"],
    );
  }
  if (results.mcp) {
    const m = results.mcp;
    console.log("7. MCP start (the SDK's client over stdio)");
    printTable(
      [[`${m.firstAnswer.median} ms`, `${m.nodeE0.median} ms`, m.firstAnswer.n, `${m.ratio}×`]],
      ["runner mcp → first answer (status, 1,000 nodes)", "node -e 0", "runs", "ratio"],
    );
  }
  if (results.core) {
    console.log(
      `3. Core scaling (in process, µs per node; total = select+validate+update+serialize; parse shown apart; ${results.core.collectedBefore ? "garbage collected before each operation" : "no --expose-gc: garbage of earlier operations counts (noisy)"})`,
    );
    printTable(
      results.core.rows.map((r) => [
        r.nodes,
        r.reps,
        r.usPerNode.parse,
        r.usPerNode.select,
        r.usPerNode.validate,
        r.usPerNode.update,
        r.usPerNode.serialize,
        r.totalUsPerNode,
        `${Math.round(r.totalMs)} ms`,
      ]),
      ["nodes", "runs", "parse", "select", "validate", "update", "serialize", "total µs/node", "total"],
    );
    const g = results.core.growth;
    console.log(
      `   per-node growth ${results.core.from} → ${results.core.to}: ${Object.entries(g)
        .map(([k, v]) => `${k} ${v}×`)
        .join(", ")} (target ≤ ${TARGETS.coreGrowth}×; select stops at the first open leaf, so it does not grow)\n`,
    );
  }
  if (results.memory) {
    const m = results.memory;
    console.log(`4. Memory: runner step on ${m.nodes} nodes (${(m.treeBytes / 1e6).toFixed(1)} MB tree file), ${m.peakRssMb.n} runs, ${m.method}`);
    printTable(
      [
        [
          `${Math.round(m.peakRssMb.median)} MB`,
          `${m.stepMs.median} ms`,
          `< ${TARGETS.memoryMb} MB ${verdict(m.peakRssMb.median < TARGETS.memoryMb)}`,
        ],
      ],
      ["peak RSS", "step time", "target"],
    );
  }
  if (results.diagnostics) {
    const d = results.diagnostics;
    if (typeof d.processes === "object") {
      const line = (p) =>
        `${p.total} processes, ${p.git} git (${Object.entries(p.byProgram)
          .map(([k, v]) => `${k} ×${v}`)
          .join(", ")})`;
      console.log("Diagnostics: processes started per iteration (10,000 files × 10,000 nodes)");
      console.log(`   step:  ${line(d.processes.step)}`);
      console.log(`   floor: ${line(d.processes.floor)}\n`);
    }
    console.log("Diagnostics: loading the CLI's entry as bin/runner.js does (ms, median of fresh processes)");
    for (const [label, times] of Object.entries(d.startupMs))
      console.log(
        `   ${label}: ${
          typeof times === "string"
            ? times
            : Object.entries(times)
                .map(([k, v]) => `${k} ${v}`)
                .join(", ")
        }`,
      );
    console.log();
    if (d.profiles) {
      for (const [name, p] of Object.entries(d.profiles)) {
        console.log(
          `Profile ${name} (${p.totalMs} ms): ${p.bySelfModule
            .slice(0, 8)
            .map((r) => `${r.name} ${r.ms}`)
            .join(", ")}`,
        );
      }
      console.log();
    }
  }
  if (results.long) {
    const l = results.long;
    const r = l.runnerMsPerIteration;
    console.log(
      `5. Long run: ${l.iterations} iterations over ${l.nodes} nodes (no-op agent, guard failing every ${l.failEvery}th), ${l.runSeconds} s in all`,
    );
    console.log(
      `   runner time per iteration (meta.json: total − agent − guard): first 100 median ${r.first100.median} ms, last 100 median ${r.last100.median} ms (${l.growth}×)`,
    );
    const b = l.logBytesPerIteration;
    console.log(
      `   local logs per iteration: ${(b.total / 1024).toFixed(1)} KB (tree snapshots ${(b.trees / 1024).toFixed(1)} KB, agent and guard output ${(b.agentAndGuardOutput / 1024).toFixed(1)} KB, the rest with events.jsonl ${(b.rest / 1024).toFixed(1)} KB)`,
    );
    const rows = [];
    for (const [at, m] of Object.entries(l.at)) {
      for (const [name, c] of Object.entries(m.commands)) rows.push([at, name, `${c.ms.median} ms`, `${c.ratio}×`, `${c.peakRssMb} MB`]);
      rows.push([at, "(report.html)", `${(m.reportBytes / 1024).toFixed(0)} KB`, "", ""]);
    }
    printTable(rows, ["iterations", "command", "time (median)", "/ node -e 0", "peak RSS"]);
    console.log(
      `   .git at the end: ${(l.git.bytes / 1048576).toFixed(1)} MB, after git gc ${(l.git.bytesAfterGc / 1048576).toFixed(1)} MB (${l.git.ratio}×)\n`,
    );
  }
  if (results.night) {
    const n = results.night;
    console.log(
      `8. A night: runner run ${n.runnerMsPerIteration} ms per iteration, the bash loop ${n.loopMsPerIteration} ms (${n.ratio}×; ${n.iterations} iterations in chunks of ${n.chunk}, alternated)\n` +
        `   CPU per iteration: the runner itself ${n.cpuMsPerIteration.runnerOwn} ms, the processes it starts ${n.cpuMsPerIteration.runnerProcesses} ms; the bash loop and its processes ${n.cpuMsPerIteration.loop} ms\n`,
    );
  }
  if (results.watch) {
    const w = results.watch;
    const mark = (pass) => (pass ? "✓" : "✗");
    console.log("6. runner watch");
    for (const [size, f] of Object.entries(w.frame)) {
      console.log(
        `   ${mark(f.first.cpu.median <= WATCH_TARGETS.frameMs)} frame of a 10,000-node tree at ${size}: first after a commit ${f.first.cpu.median} ms CPU (max ${f.first.cpu.max}; wall ${f.first.wall.median}), then ${f.steady.cpu.median} ms CPU a tick (wall ${f.steady.wall.median}; n ${f.first.cpu.n} / ${f.steady.cpu.n}; target ≤ ${WATCH_TARGETS.frameMs} ms)`,
      );
    }
    for (const [mode, r] of Object.entries(w.idle)) {
      console.log(
        `   ${mark(r.percent <= WATCH_TARGETS.idleCpuPercent)} CPU while the run is idle, ${mode}: ${r.percent} % (${r.cpuMs} ms in ${r.windowMs} ms; target ≤ ${WATCH_TARGETS.idleCpuPercent} %)`,
      );
    }
    const i = w.iterations;
    console.log(
      `   iteration time (meta.json total, ${i.iterationsEach} iterations each): without a watch median ${i.without.median} ms (q1 ${i.without.q1}, q3 ${i.without.q3}), with one ${i.with.median} ms (q1 ${i.with.q1}, q3 ${i.with.q3}): ${i.ratio}×\n`,
    );
  }
  console.log("Targets");
  printTable(
    results.targets.map((t) => [t.figure, `${t.value}${t.unit}`, t.target, verdict(t.pass)]),
    ["figure", "value", "target", ""],
  );
}

try {
  await main();
} finally {
  removeTempDirs();
}
