// 6. `runner watch` (issue 32): what watching costs.
// - A frame of a 10,000-node tree: laid out (src/cli/watch/frame.ts), put into terminal-kit's screen
//   buffer and drawn (src/cli/watch/screen.ts frameDrawer: the rows that changed), into a terminal on
//   a stream that counts the bytes. The first frame after a commit lists the tree's rows again and
//   draws every row; the others (the clock ticking) a few rows. Target: ≤ 50 ms for the first frame at
//   200×60, judged on its CPU time (the wall time is given too: on a loaded machine it is mostly the
//   wait for a CPU).
// - The watch's CPU while the run it shows is idle (its agent sleeping): the built binary in a real
//   pseudo-terminal (node-pty), its user + system time from /proc over a window. Target: ≤ 2 %.
// - A run's iteration times (meta.json total) with no watch and with one (full screen, 200×60)
//   following it: a watch only reads, so the two should not differ beyond the machine's noise.
import { createRequire } from "node:module";
import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { PassThrough, Writable } from "node:stream";
import { spawn } from "node:child_process";
import { benchEnv, log, median, RUNNER_BIN, RUNNER_ROOT, run, summary, tempDir } from "./lib/common.mjs";
import { sourceModules } from "./lib/core-modules.mjs";
import { makeTree } from "./lib/fixtures.mjs";

export const WATCH_TARGETS = { frameMs: 50, idleCpuPercent: 2 };

const require = createRequire(path.join(RUNNER_ROOT, "package.json"));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A terminal that writes into a counting sink. */
function sinkTerminal(termkit, width, height) {
  let bytes = 0;
  const stdout = new Writable({
    write(chunk, _encoding, done) {
      bytes += chunk.length;
      done();
    },
  });
  Object.assign(stdout, { isTTY: true, columns: width, rows: height });
  const term = termkit.createTerminal({
    stdin: new PassThrough(),
    stdout,
    stderr: stdout,
    generic: "xterm-256color",
    appId: "xterm-256color",
    isTTY: true,
  });
  return { term, bytes: () => bytes };
}

/** The `skip`-th open leaf, in drawing order (where the agent works). */
function openLeaf(tree, skip) {
  const stack = [tree.root];
  let seen = 0;
  let last = tree.root;
  while (stack.length > 0) {
    const node = stack.pop();
    if (node.children.length === 0 && !node.passes) {
      last = node;
      if (seen++ === skip) return node;
    }
    for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]);
  }
  return last;
}

const collect = typeof globalThis.gc === "function" ? () => globalThis.gc() : () => undefined;

async function frames(reps) {
  const { watchFrame, frameDrawer } = await sourceModules(
    "cli",
    ["watch/frame.ts", "watch/screen.ts"],
    (m) => ({ watchFrame: m.watchFrame, frameDrawer: m.frameDrawer }),
    { external: [/^terminal-kit$/] },
  );
  const termkit = require("terminal-kit");
  const now = Date.parse("2026-11-26T10:05:00.000Z");
  const snapshotOf = (tree, skip) => {
    const leaf = openLeaf(tree, skip);
    return {
      runId: "bench",
      worktree: "/work/bench",
      branchExists: true,
      runner: { pid: 4242, start: "1", host: "bench", command: "runner run", since: "2026-11-26T10:00:00.000Z" },
      live: {
        version: 1,
        run_id: "bench",
        pid: 4242,
        started_at: "2026-11-26T10:00:00.000Z",
        updated_at: "2026-11-26T10:04:59.000Z",
        state: "working",
        iteration: 12,
        node_id: leaf.id,
        title: leaf.title,
        phase: "agent",
        phase_since: "2026-11-26T10:04:00.000Z",
        agent_status: "turn 3 · 12.4k tokens",
        lines: Array.from({ length: 8 }, (_, i) => `$ npm test -- --grep case-${i}`),
        line_count: 40,
        iterations_done: 11,
        max_iterations: 50,
        passes: 6,
        failures: 4,
        usage: { tokens: 1_234_567, cost_usd: 3.21 },
        budgets: { seconds: 28_800, tokens: 5_000_000, cost_usd: 20 },
        guard_tail: { iteration: 11, lines: ["not ok 3 - parser", "…", "# fail 1", "error: recipe `ci` failed"] },
        recent: Array.from({ length: 10 }, (_, i) => ({ iteration: i + 2, ms: 240_000, passed: i % 2 === 0 })),
        log: Array.from({ length: 20 }, (_, i) => ({ seq: i + 1, text: `Iteration ${i + 1}: node x execute, agent said done, guard=pass` })),
        wait: null,
        ended: null,
      },
      tree,
      treeProblem: undefined,
      iterations: 11,
      usage: undefined,
      machine: {
        iteration: 12,
        visits: ["safetyCheck", "loadTree", "selectLeaf", "buildPrompt", "execute"].map((state, i) => ({ state, at: now - 65_000 + i * 100 })),
      },
      steps: [],
    };
  };
  const results = {};
  for (const [width, height] of [
    [200, 60],
    [80, 24],
  ]) {
    const { term, bytes } = sinkTerminal(termkit, width, height);
    const buffer = new termkit.ScreenBuffer({ dst: term, width, height });
    const drawFrame = frameDrawer(termkit, buffer, true);
    /** Wall and CPU time (ms) of one frame: laid out, put into the buffer, drawn. */
    const draw = (snapshot, at) => {
      const cpu = process.cpuUsage();
      const start = process.hrtime.bigint();
      drawFrame(watchFrame({ mode: "one", runs: [snapshot], selected: 0, now: at, message: undefined, canStop: true }, width, height));
      const wall = Number(process.hrtime.bigint() - start) / 1e6;
      const used = process.cpuUsage(cpu);
      return { wall, cpu: (used.user + used.system) / 1000 };
    };
    for (let i = 0; i < 3; i++) draw(snapshotOf(makeTree(10_000), i * 50), now); // warm-up: code compiled, buffer drawn
    const first = { wall: [], cpu: [] };
    const steady = { wall: [], cpu: [] };
    const add = (into, time) => {
      into.wall.push(time.wall);
      into.cpu.push(time.cpu);
    };
    for (let i = 0; i < reps; i++) {
      // A commit: a new tree (its rows listed again), the agent on another leaf (the window moves: every row drawn).
      const snapshot = snapshotOf(makeTree(10_000), 200 + i * 97);
      collect();
      add(first, draw(snapshot, now + i * 1000));
      // The clock ticking: a few rows change.
      for (let tick = 1; tick <= 5; tick++) add(steady, draw(snapshot, now + i * 1000 + tick * 1000));
    }
    results[`${width}x${height}`] = {
      first: { wall: summary(first.wall, 2), cpu: summary(first.cpu, 2) },
      steady: { wall: summary(steady.wall, 2), cpu: summary(steady.cpu, 2) },
      bytesDrawn: bytes(),
    };
  }
  return results;
}

/** A repository on runner/<id> whose command agent runs `agentScript` (bash) for each leaf of a root with `leaves` leaves; guard `true`. */
function makeRunRepo(id, leaves, agentScript) {
  const dir = tempDir(`runner-bench-watch-${id}-`);
  const env = benchEnv();
  run(["git", "init", "-q", "-b", "main"], { cwd: dir, env });
  run(["node", RUNNER_BIN, "init", "--goal", "Watched", "--executor", "command"], { cwd: dir, env });
  const tree = {
    version: 1,
    root: {
      id: "root",
      order: 0,
      title: "Watched",
      goal: "Watched",
      acceptance: [],
      passes: false,
      attempts: 0,
      max_attempts: 3,
      children: Array.from({ length: leaves }, (_, i) => ({
        id: `l${String(i + 1).padStart(3, "0")}`,
        order: i,
        title: `Leaf ${i + 1}`,
        goal: "Write its file",
        acceptance: [],
        passes: false,
        attempts: 0,
        max_attempts: 3,
        children: [],
      })),
    },
  };
  writeFileSync(path.join(dir, ".runner", "state", "tree.json"), `${JSON.stringify(tree, null, 2)}\n`);
  writeFileSync(
    path.join(dir, ".runner", "state", "config.toml"),
    '[executor]\nkind = "command"\ncommand = ["bash", "agent.sh"]\n\n[guard]\ncommand = ["true"]\n\n[limits]\niteration_timeout_seconds = 7200\nmax_iterations = 1000\n',
  );
  writeFileSync(path.join(dir, "agent.sh"), agentScript);
  run(["git", "add", "-A"], { cwd: dir, env });
  run(["git", "commit", "-q", "-m", "watched"], { cwd: dir, env });
  run(["node", RUNNER_BIN, "start", "--run-id", id], { cwd: dir, env });
  return { dir, env, id };
}

const QUICK_AGENT = `mkdir -p src; echo "$RUNNER_NODE_ID" > "src/$RUNNER_NODE_ID.txt"; echo "wrote src/$RUNNER_NODE_ID.txt"; printf '{"status":"done","summary":"ok"}' > "$RUNNER_OUTPUT_FILE"\n`;
const SLEEPING_AGENT = `echo "thinking"; sleep 3600\n`;

/** CPU time (ms) a process and its waited-for children used so far, from /proc. */
function cpuMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
  return (ticks * 1000) / 100;
}

function watchInPty(cwd, env, args) {
  const pty = require("node-pty");
  const term = pty.spawn(process.execPath, [RUNNER_BIN, "watch", ...args], {
    name: "xterm-256color",
    cols: 200,
    rows: 60,
    cwd,
    env: { ...env, TERM: "xterm-256color" },
  });
  let output = "";
  term.onData((data) => {
    output += data;
    if (output.length > 1_000_000) output = output.slice(-100_000);
  });
  return { pid: term.pid, output: () => output, kill: () => term.kill("SIGKILL") };
}

async function until(condition, what, timeoutMs = 120_000) {
  const end = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

async function idleCpu(windowMs) {
  const results = {};
  for (const args of [[], ["--all"]]) {
    const repo = makeRunRepo("idle", 3, SLEEPING_AGENT);
    const runner = spawn("node", [RUNNER_BIN, "run"], { cwd: repo.dir, env: repo.env, stdio: "ignore", detached: true });
    const live = path.join(repo.dir, ".runner", "iterations", "idle", "live.json");
    try {
      await until(() => existsSync(live) && readFileSync(live, "utf8").includes('"phase":"agent"'), "the run's agent to start");
      const watch = watchInPty(repo.dir, repo.env, args);
      try {
        await until(() => watch.output().includes("iteration 1"), "the watch to show the run");
        await sleep(3_000);
        const before = cpuMs(watch.pid);
        const started = Date.now();
        await sleep(windowMs);
        const used = cpuMs(watch.pid) - before;
        const wall = Date.now() - started;
        results[args.length === 0 ? "one run" : "--all"] = { cpuMs: used, windowMs: wall, percent: Number(((100 * used) / wall).toFixed(2)) };
      } finally {
        watch.kill();
      }
    } finally {
      try {
        process.kill(-runner.pid, "SIGKILL");
      } catch {
        // gone
      }
    }
  }
  return results;
}

/** Each iteration's total time (ms) in the run's meta.json files. */
function iterationTimes(dir, id) {
  const logs = path.join(dir, ".runner", "iterations", id);
  return readdirSync(logs)
    .filter((name) => /^\d{4}$/.test(name))
    .map((name) => JSON.parse(readFileSync(path.join(logs, name, "meta.json"), "utf8")).durations.total_ms);
}

async function withAndWithout(leaves, rounds) {
  const times = { without: [], with: [] };
  for (let round = 0; round < rounds; round++) {
    for (const watched of [false, true]) {
      const repo = makeRunRepo(watched ? "watched" : "alone", leaves, QUICK_AGENT);
      const watch = watched ? watchInPty(repo.dir, repo.env, []) : undefined;
      try {
        if (watch) await until(() => watch.output().includes("waiting for `runner run`"), "the watch to begin");
        run(["node", RUNNER_BIN, "run"], { cwd: repo.dir, env: repo.env });
      } finally {
        watch?.kill();
      }
      times[watched ? "with" : "without"].push(...iterationTimes(repo.dir, repo.id));
    }
  }
  return {
    iterationsEach: times.without.length,
    without: summary(times.without, 0),
    with: summary(times.with, 0),
    ratio: Number((median(times.with) / median(times.without)).toFixed(2)),
  };
}

export async function watchBench({ quick }) {
  log("  frames of a 10,000-node tree");
  const frame = await frames(quick ? 5 : 15);
  log("  the watch's CPU while the run is idle");
  const idle = await idleCpu(quick ? 5_000 : 15_000);
  log("  iteration times with and without a watch");
  const iterations = await withAndWithout(quick ? 10 : 20, quick ? 1 : 2);
  return { frame, idle, iterations };
}
