// `runner watch` (issue 32) against real runs through the built binary: the demo agent and a bash
// agent with a red guard, the watch in a real pseudo-terminal (node-pty, the screen read with a
// headless xterm) at 80×24 and 200×60 and in its plain mode; `--all` with two worktree runs; a
// person's request to stop after the current iteration, and the same request planted by an agent
// (ignored). The agents wait at gates the test opens, so each moment is looked at while the run
// stands still there; screen content is awaited with generous deadlines, never timed.
import { execa, type ResultPromise } from "execa";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PtyScreen } from "../helpers/pty-screen.js";
import { git, node, RUNNER_BIN, runner, tempDir, testEnv, tree } from "../helpers/sandbox.js";
import { scenario, type Scenario } from "../helpers/scenario.js";

const screens: PtyScreen[] = [];
const children: ResultPromise[] = [];
afterAll(() => {
  for (const screen of screens) screen.kill();
  for (const child of children) child.kill("SIGKILL");
});

function watchOnScreen(cwd: string, args: string[], env: Record<string, string>, cols: number, rows: number): PtyScreen {
  const screen = PtyScreen.runner(["watch", ...args], { cwd, env, cols, rows });
  screens.push(screen);
  return screen;
}

/** `runner run` in the background (its output kept). */
function startRun(cwd: string, env: Record<string, string>, args: string[] = []) {
  const child = execa("node", [RUNNER_BIN, "run", ...args], { cwd, env, extendEnv: false, reject: false, timeout: 240_000 });
  children.push(child);
  return child;
}

async function waitUntil(condition: () => boolean, what: string, timeoutMs = 120_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The row of the screen that holds `text`. */
function row(lines: readonly string[], text: string): string {
  return lines.find((line) => line.includes(text)) ?? "";
}

/** A folder of gates: an agent (or guard) waits until the file named after its iteration is there. */
function gates(): { dir: string; open(name: string): void } {
  const dir = tempDir("runner-gates-");
  return { dir, open: (name) => writeFileSync(path.join(dir, name), "") };
}

const WAIT_FOR_GATE = (name: string) =>
  `i=0; while [ ! -e "$GATES/${name}" ] && [ $i -lt 1800 ]; do sleep 0.1; i=$((i+1)); done; [ -e "$GATES/${name}" ]`;

// The bash agent: says what it does, waits for its gate, writes its leaf's file (in iteration 2 a
// wrong one, so the guard goes red), and answers done.
const BASH_AGENT = `#!/usr/bin/env bash
set -eu
n=$RUNNER_ITERATION
echo "agent: iteration $n on $RUNNER_NODE_ID"
echo "agent: writing src/$RUNNER_NODE_ID.txt"
${WAIT_FOR_GATE("agent-$n")}
mkdir -p src
if [ "$n" = 2 ]; then echo wrong > "src/$RUNNER_NODE_ID.txt"; else echo "$RUNNER_NODE_ID" > "src/$RUNNER_NODE_ID.txt"; fi
printf '{"status":"done","summary":"wrote %s"}' "$RUNNER_NODE_ID" > "$RUNNER_OUTPUT_FILE"
`;
// The guard: every src/<id>.txt must hold its id.
const BASH_GUARD = `#!/usr/bin/env bash
for f in src/*.txt; do
  id=$(basename "$f" .txt)
  echo "checking $f"
  if [ "$(cat "$f")" != "$id" ]; then echo "FAIL: $f says $(cat "$f"), expected $id"; exit 1; fi
done
echo "all files right"
`;

async function bashRun(runId = "t1", extra: Record<string, string> = {}): Promise<{ s: Scenario; gate: ReturnType<typeof gates> }> {
  const gate = gates();
  const s = await scenario({
    runId,
    start: "runner",
    executor: ["bash", "agent.sh"],
    guard: ["bash", "guard.sh"],
    tree: tree(node("root", { title: "Two files", children: [node("a", { order: 0, title: "File a" }), node("b", { order: 1, title: "File b" })] })),
    files: { "agent.sh": BASH_AGENT, "guard.sh": BASH_GUARD },
    env: { GATES: gate.dir, ...extra },
  });
  return { s, gate };
}

describe("runner watch, one run, on a terminal", () => {
  it("the demo agent at 80×24, then 200×60: waits for the run, then shows its leaf, state, counts and the red guard's lines at each moment, and leaves the summary when the run ends", async () => {
    const project = tempDir("runner-watch-demo-");
    const gate = gates();
    // The demo project (as `runner demo` makes it), its guard waiting at a gate per iteration.
    const env = testEnv({ GATES: gate.dir });
    delete env.NO_COLOR;
    delete env.FORCE_COLOR;
    writeFileSync(path.join(project, "package.json"), `${JSON.stringify({ name: "calc", private: true, type: "module" })}\n`);
    writeFileSync(path.join(project, "gate.sh"), `${WAIT_FOR_GATE("guard-$RUNNER_ITERATION")}\n`);
    writeFileSync(path.join(project, "justfile"), "ci:\n    bash gate.sh\n    node --test test/\n");
    await git(project, ["init", "-q", "-b", "main"], env);
    expect((await runner(project, ["init", "--goal", "A tiny calculator", "--executor", "demo"], { env })).exitCode).toBe(0);
    await git(project, ["add", "-A"], env);
    await git(project, ["commit", "-q", "-m", "calculator"], env);
    expect((await runner(project, ["start", "--run-id", "demo"], { env })).exitCode).toBe(0);

    const screen = watchOnScreen(project, [], env, 80, 24);
    // Started before the run: it waits for it, showing the tree as the branch has it.
    let lines = await screen.waitForText(["runner watch · run demo · stopped", "waiting for `runner run`", "○ root  A tiny calculator"]);
    expect(screen.fullScreen).toBe(true);
    expect(lines.at(-1)).toContain("q quit");

    const run = startRun(project, env);
    // Iteration 2: the guard of `add` waits at its gate.
    lines = await screen.waitForText([/iteration 2 · guard · \d/, "← now", "leaves 0/3 passed"]);
    expect(row(lines, "← now")).toMatch(/○ add {2}Add two numbers {2}0\/3 {2}← now/);
    expect(row(lines, "runner watch · run demo")).toMatch(/working \(runner run, pid \d+\)/);
    expect(row(lines, "leaves 0/3")).toMatch(/1 iteration done, 49 left/);
    expect(row(lines, "machine (iteration 2)")).toMatch(/guard [\d.]+s ▸$/);
    expect(lines.every((line) => line.length <= 80)).toBe(true);
    gate.open("guard-2");

    // Iteration 3: `add` passed; `multiply` (wrong on purpose) waits at its guard.
    lines = await screen.waitForText([/iteration 3 · guard/, "✓ add", "leaves 1/3 passed"]);
    expect(row(lines, "← now")).toMatch(/○ multiply {2}Multiply two numbers {2}0\/3 {2}← now/);
    expect(row(lines, "leaves 1/3")).toMatch(/2 iterations done, 48 left/);
    expect(screen.colourOf("✓ add")?.palette).toBe(2); // green
    gate.open("guard-3");

    // Iteration 4: the guard of iteration 3 was red; its lines stay on the screen while multiply is tried again.
    lines = await screen.waitForText([/iteration 4 · guard/, "guard red in iteration 3:", "not ok"]);
    expect(row(lines, "← now")).toMatch(/○ multiply {2}Multiply two numbers {2}1\/3 {2}← now/);
    expect(row(lines, "leaves 1/3")).toMatch(/3 iterations done, 47 left/);
    expect(screen.colourOf("guard red in iteration 3:")?.palette).toBe(1); // red

    // The terminal grows: the tree on the left, the rest on the right, the same facts.
    screen.resize(200, 60);
    lines = await screen.waitFor((rows) => rows.some((line) => /│ guard red in iteration 3:/.test(line)), "the wide layout");
    expect(row(lines, "← now")).toMatch(/○ multiply {2}Multiply two numbers {2}1\/3 {2}← now +│/);
    expect(row(lines, "leaves 1/3")).toMatch(/3 iterations done, 47 left · ≈ /);
    expect(lines.every((line) => line.length <= 200)).toBe(true);

    gate.open("guard-4");
    gate.open("guard-5");
    const ran = await run;
    expect(ran.exitCode, String(ran.stderr)).toBe(0);
    // The run ended: the watch leaves the full screen, the summary stays on the terminal.
    expect(await screen.exited).toBe(0);
    const after = screen.normalLines().join("\n");
    expect(after).toContain("Done: the root passes (run demo).");
    expect(after).toMatch(/5 iterations, 3 passed, 1 failed \(1 red guard\); time: agent/);
    // Read-only: no lock left, nothing changed in the repository but what the run committed.
    expect(existsSync(path.join(project, ".git", "runner.lock"))).toBe(false);
    expect(await git(project, ["status", "--porcelain"], env)).toBe("");
  }, 300_000);

  it("a bash agent with a red guard at 200×60 under NO_COLOR: the agent's live lines, the leaf, the red guard's line and the counts, no colour at all", async () => {
    const { s, gate } = await bashRun();
    const env = { ...s.env, NO_COLOR: "1" };
    const screen = watchOnScreen(s.dir, ["t1"], env, 200, 60);
    await screen.waitForText(["waiting for `runner run`"]);
    const run = startRun(s.dir, env);

    let lines = await screen.waitForText(["agent: iteration 1 on a", "agent: writing src/a.txt", /iteration 1 · agent · \d/]);
    expect(row(lines, "← now")).toMatch(/├── ○ a {2}File a {2}0\/3 {2}← now/);
    expect(row(lines, "leaves 0/2")).toMatch(/0 iterations done, 50 left · no estimate of the end yet/);
    gate.open("agent-1");

    lines = await screen.waitForText(["agent: iteration 2 on b", "✓ a  File a"]);
    expect(row(lines, "← now")).toMatch(/└── ○ b {2}File b {2}0\/3 {2}← now/);
    expect(row(lines, "leaves 1/2")).toMatch(/1 iteration done, 49 left · ≈ \S+ to the end \(1 iteration\)/);
    gate.open("agent-2");

    lines = await screen.waitForText(["agent: iteration 3 on b", "guard red in iteration 2:", "FAIL: src/b.txt says wrong, expected b"]);
    expect(row(lines, "← now")).toMatch(/└── ○ b {2}File b {2}1\/3 {2}← now/);
    expect(row(lines, "Iteration 2: node b execute")).toContain("guard=fail; b open, attempts 1/3");
    expect(screen.styledCells()).toBe(0);
    gate.open("agent-3");

    expect((await run).exitCode).toBe(0);
    expect(await screen.exited).toBe(0);
    expect(screen.normalLines().join("\n")).toContain("Done: the root passes (run t1).");
  }, 300_000);
});

describe("runner watch, plain", () => {
  it("into a pipe: one line per event — the runner, the machine's states, the agent's lines, the iteration lines with the red guard's, the summary — and it ends with the run", async () => {
    const { s, gate } = await bashRun();
    const watch = execa("node", [RUNNER_BIN, "watch"], { cwd: s.dir, env: s.env, extendEnv: false, reject: false, timeout: 240_000 });
    children.push(watch);
    let out = "";
    watch.stdout?.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")));
    await waitUntil(() => out.includes("waiting for `runner run`"), "the watch to wait for the run");
    const run = startRun(s.dir, s.env);
    for (const n of [1, 2, 3]) {
      await waitUntil(() => out.includes(`agent: iteration ${n} on`), `the agent's line of iteration ${n}`);
      gate.open(`agent-${n}`);
    }
    expect((await run).exitCode).toBe(0);
    const watched = await watch;
    expect(watched.exitCode, String(watched.stderr)).toBe(0);
    expect(watched.stderr).toBe("");
    const lines = String(watched.stdout).split("\n");
    expect(lines[0]).toBe(`watching run t1 in ${s.dir}`);
    expect(lines[1]).toBe("no runner works on it now: waiting for `runner run`");
    expect(lines[2]).toMatch(/^runner run \(pid \d+\) is working on run t1 since \d{4}-/);
    // The machine, state by state, each with the time spent in the one before.
    expect(lines).toContain("iteration 1 · safetyCheck");
    expect(lines.some((line) => /^iteration 2 · guard \(classify [\d.]+s\)$/.test(line))).toBe(true);
    expect(lines.some((line) => /^iteration 3 · committed \(commit [\d.]+s\)$/.test(line))).toBe(true);
    expect(lines).toContain("  │ agent: writing src/b.txt");
    // The lines `runner run` printed, in order, the red guard's after its iteration.
    const printed = lines.filter((line) => /^(Iteration \d| {4})/.test(line));
    expect(printed[0]).toMatch(/^Iteration 1: node a execute, agent said done, guard=pass; a passed \(commit \w+\)$/);
    expect(printed[1]).toMatch(
      /^Iteration 2: node b execute, agent said done, guard=fail; b open, attempts 1\/3 \(commit \w+\) — The guard `bash guard.sh` exited with code 1\.$/,
    );
    expect(printed).toContain("    FAIL: src/b.txt says wrong, expected b");
    expect(printed.at(-1)).toMatch(/^Iteration 3: node b execute, agent said done, guard=pass; b passed/);
    expect(lines.indexOf(printed[0]!)).toBeLessThan(lines.findIndex((line) => line.startsWith("iteration 2 · ")));
    // The summary, last.
    const end = lines.indexOf("Done: the root passes (run t1).");
    expect(end).toBeGreaterThan(0);
    expect(lines[end + 1]).toMatch(/^3 iterations, 2 passed, 1 failed \(1 red guard\); time: /);
    expect(lines.filter(Boolean).at(-1)).toBe("Report: runner report (writes .runner/iterations/t1/report.html)");
    expect(String(watched.stdout)).not.toContain("\x1b[");
  }, 300_000);

  it("garbage where the run writes — a 20 MB status file, a FIFO for the lock, 30 MB of non-JSON journal — neither crashes nor hangs the watch; the run then replaces what it owns", async () => {
    const { s, gate } = await bashRun();
    const logs = path.join(s.dir, ".runner", "iterations", "t1");
    mkdirSync(logs, { recursive: true });
    writeFileSync(path.join(logs, "live.json"), `{"version":1,"run_id":"t1","pid":1,"lines":["${"x".repeat(20 * 1024 * 1024)}"]}`);
    writeFileSync(path.join(logs, "events.jsonl"), `${"not json at all\n".repeat(2_000_000)}${"y".repeat(1024 * 1024)}`);
    await execa("mkfifo", [path.join(s.dir, ".git", "runner.lock")]);
    const watch = execa("node", [RUNNER_BIN, "watch", "--plain"], { cwd: s.dir, env: s.env, extendEnv: false, reject: false, timeout: 240_000 });
    children.push(watch);
    let out = "";
    watch.stdout?.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")));
    await waitUntil(() => out.includes("waiting for `runner run`"), "the watch to start", 60_000);
    const run = startRun(s.dir, s.env);
    for (const n of [1, 2, 3]) {
      await waitUntil(() => out.includes(`agent: iteration ${n} on`), `iteration ${n} in the watch`);
      gate.open(`agent-${n}`);
    }
    expect((await run).exitCode).toBe(0);
    const watched = await watch;
    expect(watched.exitCode, String(watched.stderr)).toBe(0);
    expect(String(watched.stdout)).toContain("Done: the root passes (run t1).");
    expect(String(watched.stdout)).toMatch(/^iteration 1 · loadTree \(safetyCheck [\d.]+s\)$/m);
    expect(String(watched.stdout)).not.toContain("not json");
  }, 300_000);
});

/** A clone with three runs: main-run (checked out nowhere), and w1 and w2 each in a worktree of its own, started from main. */
async function twoWorktreeRuns() {
  const gate = gates();
  const { s } = await bashRun("main-run");
  await s.git(["checkout", "-q", "main"]);
  const worktree = (run: string) => path.join(path.dirname(s.dir), `${path.basename(s.dir)}-${run}`);
  for (const run of ["w1", "w2"]) expect((await s.runner(["start", "--worktree", "--run-id", run])).exitCode).toBe(0);
  return { s, gate, worktree };
}

describe("runner watch --all", () => {
  it("two worktree runs: both listed, ↓ selects the second, o opens its report, s then y asks it to stop after its iteration (it stops, exit 3, the request named); the other goes on", async () => {
    const { s, gate, worktree } = await twoWorktreeRuns();
    // A stand-in for xdg-open: it notes the file it was asked to open.
    const bin = tempDir("runner-opener-");
    const opened = path.join(bin, "opened.txt");
    writeFileSync(path.join(bin, "xdg-open"), `#!/bin/sh\necho "$1" >> ${JSON.stringify(opened)}\n`, { mode: 0o755 });
    const env = { ...s.env, GATES: gate.dir, PATH: `${bin}:${s.env.PATH ?? ""}` };
    const screen = watchOnScreen(s.dir, ["--all"], env, 120, 40);
    await screen.waitForText(["runner watch --all · 3 runs", "▸ main-run", " w1 ", " w2 "]);
    const w1 = startRun(worktree("w1"), { ...env, GATES: path.join(gate.dir, "w1") });
    const w2 = startRun(worktree("w2"), { ...env, GATES: path.join(gate.dir, "w2") });
    mkdirSync(path.join(gate.dir, "w1"));
    mkdirSync(path.join(gate.dir, "w2"));
    let lines = await screen.waitFor(
      (rows) => /w1 +working .*iteration 1 agent a/.test(rows.join("\n")) && /w2 +working .*iteration 1 agent a/.test(rows.join("\n")),
      "both runs working",
    );
    screen.type("\x1b[B"); // ↓: w1
    screen.type("\x1b[B"); // ↓: w2
    lines = await screen.waitForText([/▸ w2 +working/, `runner watch --all · 3 runs · run w2 · working (runner run, pid ${w2.pid})`]);
    expect(row(lines, "← now")).toMatch(/○ a {2}File a {2}0\/3 {2}← now/);
    expect(lines.at(-1)).toContain("s stop after this iteration");

    screen.type("o");
    lines = await screen.waitForText(["Report of run w2: "]);
    await waitUntil(() => existsSync(opened), "the report to be opened");
    const page = readFileSync(opened, "utf8").trim();
    expect(page).toMatch(/runner-watch-.*\/w2\.html$/);
    expect(readFileSync(page, "utf8")).toContain("<html");
    expect(existsSync(path.join(worktree("w2"), ".runner", "iterations", "w2", "report.html"))).toBe(false);

    screen.type("s");
    await screen.waitForText(["Stop run w2 after its current iteration? y to ask"]);
    screen.type("y");
    await screen.waitForText(["Asked run w2 to stop after its current iteration"]);
    writeFileSync(path.join(gate.dir, "w2", "agent-1"), "");
    const stopped = await w2;
    expect(stopped.exitCode, String(stopped.stderr)).toBe(3);
    expect(String(stopped.stdout)).toMatch(
      /^Stopped early: \S+ \(from `runner watch`, pid \d+\) asked to stop after the current iteration \(1 done\); run `runner run` again to continue\.$/m,
    );
    lines = await screen.waitForText([/▸ w2 +stopped/, /w1 +working/]);
    expect(existsSync(path.join(worktree("w2"), ".git"))).toBe(true);

    // w1 was never asked: it goes on to the end.
    for (const n of [1, 2, 3]) writeFileSync(path.join(gate.dir, "w1", `agent-${n}`), "");
    expect((await w1).exitCode).toBe(0);
    await screen.waitForText([/w1 +complete/]);
    screen.type("q");
    expect(await screen.exited).toBe(0);
  }, 300_000);

  it("a stop request an agent plants for another run — naming itself, holding the file open — is ignored and removed: that run goes on", async () => {
    const { s, gate, worktree } = await twoWorktreeRuns();
    const w2GitDir = (await git(worktree("w2"), ["rev-parse", "--absolute-git-dir"], s.gitEnv)).trim();
    // w1's agent, in its first iteration: a request for w2's runner in w2's git folder, held open while it waits.
    const plant = `${WAIT_FOR_GATE("plant")}
lock=$(cat "${w2GitDir}/runner.lock")
run_pid=$(printf '%s' "$lock" | sed -E 's/.*"pid":([0-9]+).*/\\1/')
run_start=$(printf '%s' "$lock" | sed -E 's/.*"start":"([0-9]+)".*/\\1/')
my_start=$(cut -d' ' -f22 /proc/$$/stat)
printf '{"pid":%s,"start":"%s","host":"%s","command":"runner watch","since":"now","user":"agent","run_pid":%s,"run_start":"%s"}' $$ "$my_start" "$(hostname)" "$run_pid" "$run_start" > "${w2GitDir}/runner.stop"
exec 3<"${w2GitDir}/runner.stop"
touch "$GATES/planted"
${WAIT_FOR_GATE("agent-1")}
`;
    writeFileSync(path.join(worktree("w1"), "plant.sh"), plant);
    const env = { ...s.env, GATES: gate.dir };
    const w1Agent = `#!/usr/bin/env bash\nif [ "$RUNNER_ITERATION" = 1 ]; then bash plant.sh; fi\nmkdir -p src; echo "$RUNNER_NODE_ID" > "src/$RUNNER_NODE_ID.txt"\nprintf '{"status":"done","summary":"w1"}' > "$RUNNER_OUTPUT_FILE"\n`;
    writeFileSync(path.join(worktree("w1"), "agent.sh"), w1Agent);
    await git(worktree("w1"), ["add", "-A"], s.gitEnv);
    await git(worktree("w1"), ["commit", "-qm", "w1's agent plants a stop request"], s.gitEnv);
    const w2Gates = path.join(gate.dir, "w2");
    mkdirSync(w2Gates);
    const w2 = startRun(worktree("w2"), { ...env, GATES: w2Gates });
    await waitUntil(() => existsSync(path.join(worktree("w2"), ".runner", "iterations", "w2", "live.json")), "w2 to begin");
    const w1 = startRun(worktree("w1"), env);
    gate.open("plant");
    await waitUntil(() => existsSync(path.join(gate.dir, "planted")), "the request to be planted");
    expect(existsSync(path.join(w2GitDir, "runner.stop"))).toBe(true);
    // w2 ends its iteration while the planting agent still holds the file open: w2 goes on.
    writeFileSync(path.join(w2Gates, "agent-1"), "");
    await waitUntil(
      () => readFileSync(path.join(worktree("w2"), ".runner", "iterations", "w2", "live.json"), "utf8").includes("runner.stop: "),
      "w2 to ignore the request",
    );
    const live = JSON.parse(readFileSync(path.join(worktree("w2"), ".runner", "iterations", "w2", "live.json"), "utf8")) as {
      log: { text: string }[];
    };
    expect(live.log.map((entry) => entry.text).find((text) => text.startsWith("Ignored"))).toMatch(
      /^Ignored and removed .*runner\.stop: its process \d+ runs (inside a runner's agent containment \(.+\)|in another PID namespace); no person asked to stop\.$/,
    );
    expect(existsSync(path.join(w2GitDir, "runner.stop"))).toBe(false);
    gate.open("agent-1");
    for (const n of [2, 3]) writeFileSync(path.join(w2Gates, `agent-${n}`), "");
    const [ranW1, ranW2] = await Promise.all([w1, w2]);
    expect(ranW2.exitCode, String(ranW2.stdout)).toBe(0);
    expect(String(ranW2.stdout)).toContain("Done: the root passes (run w2).");
    expect(ranW1.exitCode).toBe(0);
  }, 300_000);
});
