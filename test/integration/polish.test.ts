// Failures that explain themselves and terminal polish (issue 14, items 3 and 5), through the built
// binary in real repositories: the guard's own failing lines in `runner log --iteration N` (on a
// fresh clone too), in the live view and in `runner show`; colour only where it belongs; the legend,
// columns and progress of `runner status`; a live block for `runner step`; a run in progress seen
// by `status` and `log`; the report command named at the end of `runner run`.
import { execa } from "execa";
import { spawn } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { oneSentence, scenario, type Scenario } from "../helpers/scenario.js";
import { git, hasScript, node, RUNNER_BIN, runner, tempDir, tree } from "../helpers/sandbox.js";

const ESC = String.fromCharCode(27);
const FAILING_GUARD = [
  "ok 1 - a exists",
  "ok 2 - a is right",
  "not ok 3 - b",
  "  expected: ok",
  "  found: bad",
  "FAIL: src/b.txt lacks ok",
  "1 of 3 checks failed",
].join("\n");
const TWO_LEAVES = tree(
  node("root", {
    title: "Project goal",
    children: [
      node("a", { order: 0, title: "First" }),
      node("b", { order: 1, title: "Second", goal: "Write src/b.txt saying ok", acceptance: ["src/b.txt says ok", "the guard is green"] }),
    ],
  }),
);

/** The runner on a pseudo-terminal `columns` wide; its output with \r removed. */
async function onTerminal(s: Scenario, args: string[], env: Record<string, string> = {}, columns = 120): Promise<{ exitCode: number; out: string }> {
  const command = `stty cols ${columns} rows 40; exec node ${[RUNNER_BIN, ...args].map((arg) => JSON.stringify(arg)).join(" ")}`;
  const result = await execa("script", ["-qec", command, "/dev/null"], {
    cwd: s.dir,
    env: { ...s.env, TERM: "xterm-256color", ...env },
    extendEnv: false,
    reject: false,
    timeout: 60_000,
  });
  return { exitCode: result.exitCode ?? -1, out: String(result.stdout).replace(/\r/g, "") };
}

/** Text without its escape sequences (colour, cursor movement). */
function plain(text: string): string {
  return text
    .split(ESC)
    .map((segment, i) => (i === 0 ? segment : segment.replace(/^\[[\d;]*[A-Za-z]/, "")))
    .join("");
}

async function waitUntil(what: string, ready: () => boolean, timeoutMs = 50_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!ready()) {
    if (Date.now() > until) throw new Error(`${what} did not happen within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** A run with a red guard on b (iteration 2) whose output ends in FAILING_GUARD, then b passing. */
let red: Scenario;
beforeAll(async () => {
  red = await scenario({ runId: "pol-1", tree: TWO_LEAVES });
  red.script({
    1: { write: { "src/a.txt": "a\n" }, status: "done", summary: "wrote a" },
    2: {
      write: { "src/b.txt": "bad\n" },
      status: "done",
      summary: "wrote b, badly\nsecond line of the summary",
      guard: { exit: 1, print: `${"noise line\n".repeat(600)}${FAILING_GUARD}` },
    },
    3: { write: { "src/b.txt": "ok\n" }, status: "done", summary: "fixed b" },
  });
  for (let i = 1; i <= 3; i++) {
    const step = await red.step();
    expect(step.exitCode, step.stderr).toBe(0);
    if (i === 2) {
      // `runner step` itself: the iteration's line, then the guard's last lines.
      const out = step.stdout.trimEnd().split("\n");
      expect(out[0]).toMatch(
        /^Iteration 2: node b execute, agent said done, guard=fail; b open, attempts 1\/3 \(commit [0-9a-f]{7}\) — The guard `node guard.mjs` exited with code 1\.$/,
      );
      expect(out.slice(1)).toEqual([
        "    not ok 3 - b",
        "      expected: ok",
        "      found: bad",
        "    FAIL: src/b.txt lacks ok",
        "    1 of 3 checks failed",
      ]);
    }
  }
});

describe("the guard's own failing lines", () => {
  it("runner log --iteration N shows them, from the commit and from guard.log", async () => {
    const result = await red.runner(["log", "--iteration", "2"]);
    expect(result.stderr).toBe("");
    expect(result.exitCode).toBe(0);
    const out = result.stdout;
    expect(out).toContain("failure: The guard `node guard.mjs` exited with code 1.\n");
    const section = out.slice(out.indexOf("guard output (last lines, from the commit):"));
    // The last 10 lines of the guard's output (the commit holds its first 2500 and last 1000 characters).
    expect(section.split("\n").slice(1, 11)).toEqual(
      ["noise line", "noise line", "noise line", ...FAILING_GUARD.split("\n")].map((line) => `    ${line}`),
    );
    expect(out).toContain("(the same as the last lines of .runner/iterations/pol-1/0002/guard.log)");
    const json = JSON.parse((await red.runner(["log", "--iteration", "2", "--json"])).stdout) as Record<string, unknown>;
    expect(json.guard_output_tail).toContain("FAIL: src/b.txt lacks ok");
    expect(json.guard_log).toMatchObject({ path: ".runner/iterations/pol-1/0002/guard.log" });
    expect((json.guard_log as { tail: string[] }).tail.at(-1)).toBe("1 of 3 checks failed");
    expect(json.failure_text).toMatch(
      /^The guard `node guard.mjs` exited with code 1\.\n\nIts output:\n\nnoise line\n[\s\S]*\n\.\.\.\n[\s\S]*FAIL: src\/b.txt lacks ok\n1 of 3 checks failed$/,
    );
    // An iteration whose guard passed has none.
    const passed = JSON.parse((await red.runner(["log", "--iteration", "3", "--json"])).stdout) as Record<string, unknown>;
    expect(passed).toMatchObject({ guard_output_tail: [], guard_log: null, failure_text: null });
    expect((await red.runner(["log", "--iteration", "3"])).stdout).not.toContain("guard output");
  });

  it("on a fresh clone (no local logs) runner log --iteration N still shows them, from the commit", async () => {
    const clone = path.join(tempDir("runner-polish-clone-"), "clone");
    await git(path.dirname(clone), ["clone", "-q", "-b", "runner/pol-1", red.dir, clone], red.gitEnv);
    expect(existsSync(path.join(clone, ".runner", "iterations"))).toBe(false);
    const result = await runner(clone, ["log", "--iteration", "2"], { env: red.env });
    expect(result.stderr).toBe("");
    expect(result.stdout).toContain("guard output (last lines, from the commit):\n");
    expect(result.stdout).toContain("    FAIL: src/b.txt lacks ok\n");
    expect(result.stdout).not.toContain("guard.log");
    const json = JSON.parse((await runner(clone, ["log", "--iteration", "2", "--json"], { env: red.env })).stdout) as Record<string, unknown>;
    expect(json).toMatchObject({ guard_log: null });
    expect(json.guard_output_tail).toContain("FAIL: src/b.txt lacks ok");
  });

  it("the plain live view of runner run follows the iteration's line with the guard's last 5 lines, and names the report command at the end", async () => {
    const s = await scenario({ runId: "pol-2", tree: TWO_LEAVES });
    s.script({
      1: { write: { "src/a.txt": "a\n" }, status: "done" },
      2: { write: { "src/b.txt": "bad\n" }, status: "done", guard: { exit: 1, print: FAILING_GUARD } },
      3: { write: { "src/b.txt": "ok\n" }, status: "done" },
    });
    const result = await s.runner(["run"]);
    expect(result.stderr).toBe("");
    expect(result.exitCode).toBe(0);
    expect(result.stdout).not.toContain(ESC);
    const out = result.stdout.trimEnd().split("\n");
    const at = out.findIndex((line) => line.startsWith("Iteration 2: "));
    expect(out[at]).toContain("guard=fail");
    expect(out.slice(at + 1, at + 7)).toEqual([
      "    not ok 3 - b",
      "      expected: ok",
      "      found: bad",
      "    FAIL: src/b.txt lacks ok",
      "    1 of 3 checks failed",
      expect.stringMatching(/^Iteration 3: node b execute, agent said done, guard=pass/),
    ]);
    expect(out.at(-3)).toBe("Done: the root passes (run pol-2).");
    expect(out.at(-1)).toBe("Report: runner report (writes .runner/iterations/pol-2/report.html)");
    // --json stays JSON, its iteration events carrying the same lines.
    const events = (await s.runner(["log", "--json"])).stdout;
    expect(JSON.parse(events)).toMatchObject({ run_id: "pol-2", in_progress: null });
  });

  it("runner step --json carries them as guard_output_tail", async () => {
    const s = await scenario({ runId: "pol-3" });
    s.script({ 1: { write: { "src/b.txt": "bad\n" }, status: "done", guard: { exit: 1, print: FAILING_GUARD } } });
    const result = await s.step(["--json"]);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      guard_outcome: "fail",
      guard_output_tail: ["not ok 3 - b", "  expected: ok", "  found: bad", "FAIL: src/b.txt lacks ok", "1 of 3 checks failed"],
    });
  });
});

describe("runner show <node-id>", () => {
  it("shows the node: title, goal, acceptance, passes, attempts, path, children, and its iterations with their failures", async () => {
    const result = await red.runner(["show", "b"]);
    expect(result.stderr).toBe("");
    expect(result.exitCode).toBe(0);
    expect(result.stdout).not.toContain(ESC);
    const out = result.stdout.trimEnd().split("\n");
    expect(out.slice(0, 6)).toEqual([
      "✓ b  Second  — passed, attempts 1/3",
      "path: root › b",
      "goal: Write src/b.txt saying ok",
      "acceptance:",
      "  - src/b.txt says ok",
      "  - the guard is green",
    ]);
    expect(out).toContain("children: none (a leaf)");
    const history = out.slice(out.indexOf("iterations on b in run pol-1: 2, 1 failed (1 red guard)") + 1);
    expect(history[0]).toMatch(/^ {2}iteration 2: execute, agent done, guard fail, attempts 1\/3 \(commit [0-9a-f]{7}\)$/);
    expect(history.slice(1, 5)).toEqual([
      "      wrote b, badly",
      "      second line of the summary",
      "      failure: The guard `node guard.mjs` exited with code 1.",
      "        │ not ok 3 - b",
    ]);
    expect(history).toContain("        │ FAIL: src/b.txt lacks ok");
    expect(history.find((line) => line.startsWith("  iteration 3:"))).toMatch(/execute, agent done, guard pass, attempts 1\/3/);

    const parent = await red.runner(["show", "root"]);
    expect(parent.stdout).toContain("path: root\n");
    expect(parent.stdout).toContain("children: 2\n  ✓ a  First  0/3\n  ✓ b  Second  1/3\n");
    expect(parent.stdout).toContain("iterations on root in run pol-1: none");
  });

  it("--json has the same facts", async () => {
    const result = await red.runner(["show", "b", "--json"]);
    expect(result.exitCode).toBe(0);
    const shown = JSON.parse(result.stdout) as {
      history: { iteration: number; guard_outcome: string; guard_output_tail: string[]; failure: string | null }[];
    } & Record<string, unknown>;
    expect(shown).toMatchObject({
      id: "b",
      title: "Second",
      goal: "Write src/b.txt saying ok",
      acceptance: ["src/b.txt says ok", "the guard is green"],
      passes: true,
      attempts: 1,
      max_attempts: 3,
      state: "passed",
      path: ["root", "b"],
      children: [],
      run_id: "pol-1",
    });
    expect(shown.history.map((entry) => [entry.iteration, entry.guard_outcome])).toEqual([
      [2, "fail"],
      [3, "pass"],
    ]);
    expect(shown.history[0]!.guard_output_tail).toContain("FAIL: src/b.txt lacks ok");
  });

  it("an unknown id is one sentence on stderr naming runner status, exit 1", async () => {
    const result = await red.runner(["show", "nope"]);
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toBe("");
    expect(oneSentence(result.stderr)).toBe('Node "nope" is not in the task tree; `runner status` lists the nodes.');
    const missing = await red.runner(["show"]);
    expect(missing.exitCode).toBe(1);
    expect(oneSentence(missing.stderr)).toContain("<node-id>");
  });
});

describe("runner status: legend, labelled columns, progress", () => {
  it("prints a legend, a header over the columns (node, attempts, state) and the leaves passed", async () => {
    const result = await red.runner(["status"]);
    expect(result.stderr).toBe("");
    const out = result.stdout.trimEnd().split("\n");
    expect(out).toEqual([
      "run pol-1 (branch runner/pol-1): 3 iterations committed, 1 failed (1 red guard)",
      "progress: 2 of 2 leaves passed",
      "legend: ✓ passed · ○ open · ! stuck (attempts used up) · ← next",
      "node                  attempts  state",
      "✓ root  Project goal       0/3  passed",
      "├── ✓ a  First             0/3  passed",
      "└── ✓ b  Second            1/3  passed",
      "complete: all 3 nodes passed.",
    ]);
    const json = JSON.parse((await red.runner(["status", "--json"])).stdout) as Record<string, unknown>;
    expect(json).toMatchObject({ leaves: { passed: 2, total: 2 }, in_progress: null, nodes: { total: 3, passed: 3 } });
  });

  it("aligns the columns by display width: a title in Chinese takes two columns a character", async () => {
    const s = await scenario({
      runId: "pol-4",
      tree: tree(
        node("root", { title: "Root", children: [node("a", { title: "日本語のタイトル" }), node("b", { order: 1, title: "plain", attempts: 3 })] }),
      ),
    });
    const out = (await s.runner(["status"])).stdout.split("\n");
    const a = out.find((line) => line.includes(" a  "))!;
    const b = out.find((line) => line.includes(" b  "))!;
    expect(a).toBe("├── ○ a  日本語のタイトル       0/3  open  ← next");
    expect(b).toBe("└── ! b  plain                  3/3  stuck");
  });
});

describe("colour", () => {
  it("none into a pipe, none with NO_COLOR even when FORCE_COLOR asks; FORCE_COLOR colours a pipe", async () => {
    for (const args of [["status"], ["log"], ["show", "b"], ["log", "--iteration", "2"]]) {
      expect((await runner(red.dir, args, { env: red.env })).stdout, args.join(" ")).not.toContain(ESC);
      expect((await runner(red.dir, args, { env: { ...red.env, FORCE_COLOR: "1", NO_COLOR: "1" } })).stdout, args.join(" ")).not.toContain(ESC);
      expect((await runner(red.dir, args, { env: { ...red.env, FORCE_COLOR: "1" } })).stdout, args.join(" ")).toContain(ESC);
    }
    const forced = (await runner(red.dir, ["status"], { env: { ...red.env, FORCE_COLOR: "1" } })).stdout;
    expect(forced).toContain(`${ESC}[32m└── ✓ b  Second            1/3  passed${ESC}[39m`);
    expect(forced).toContain(`${ESC}[2mlegend:`);
    const log = (await runner(red.dir, ["log"], { env: { ...red.env, FORCE_COLOR: "1" } })).stdout;
    expect(log).toMatch(new RegExp(`${ESC}\\[31m +2 +b +execute +done +fail`));
    // JSON is never coloured.
    expect((await runner(red.dir, ["status", "--json"], { env: { ...red.env, FORCE_COLOR: "1" } })).stdout).not.toContain(ESC);
  });

  it.skipIf(!hasScript())("on a terminal: status in colour; NO_COLOR (even empty) and FORCE_COLOR=0 turn it off", async () => {
    const coloured = await onTerminal(red, ["status"]);
    expect(coloured.exitCode).toBe(0);
    expect(coloured.out).toContain(`${ESC}[32m├── ✓ a  First`);
    for (const env of [{ NO_COLOR: "" }, { NO_COLOR: "1" }, { FORCE_COLOR: "0" }] as Record<string, string>[]) {
      const none = await onTerminal(red, ["status"], env);
      expect(none.out, JSON.stringify(env)).not.toContain(ESC);
      expect(none.out).toContain("├── ✓ a  First");
    }
  });
});

describe.skipIf(!hasScript())("on a terminal", () => {
  it("runner step shows the live block while it works (one iteration), then its line and the guard's last lines in colour", async () => {
    const s = await scenario({ runId: "pol-5", tree: TWO_LEAVES });
    s.script({ 1: { write: { "src/a.txt": "bad\n" }, print: "agent is working", status: "done", guard: { exit: 1, print: FAILING_GUARD } } });
    const result = await onTerminal(s, ["step"]);
    expect(result.exitCode).toBe(0);
    expect(result.out).toMatch(/▶ run pol-5 · iteration 1 · agent · \d+\.\ds · a “First”/);
    expect(result.out).toContain("  0/2 leaves passed · iteration 1 of 1 · ");
    expect(result.out).toContain("  │ agent is working");
    const text = plain(result.out);
    expect(text).toMatch(
      /^Iteration 1: node a execute, agent said done, guard=fail; a open, attempts 1\/3 \(commit [0-9a-f]{7}\) — The guard `node guard.mjs` exited with code 1\.\n {4}not ok 3 - b\n/m,
    );
    expect(result.out).toContain(`${ESC}[31mIteration 1: node a execute`);
    expect(result.out).toContain(`${ESC}[2m    FAIL: src/b.txt lacks ok${ESC}[22m`);
  });

  it("runner run's live block has the progress line (leaves, iteration n of max, elapsed) and the run ends naming the report", async () => {
    const s = await scenario({ runId: "pol-6", tree: TWO_LEAVES });
    s.script({ 1: { write: { "src/a.txt": "a\n" }, status: "done" }, 2: { write: { "src/b.txt": "b\n" }, status: "done" } });
    const result = await onTerminal(s, ["run", "--max-iterations", "7"]);
    expect(result.exitCode).toBe(0);
    expect(result.out).toMatch(/ {2}0\/2 leaves passed · iteration 1 of 7 · \d+s elapsed/);
    expect(result.out).toMatch(/ {2}1\/2 leaves passed · iteration 2 of 7 · \d+s elapsed/);
    const text = plain(result.out).trimEnd().split("\n");
    expect(text.at(-1)).toBe("Report: runner report (writes .runner/iterations/pol-6/report.html)");
    expect(result.out).toContain(`${ESC}[32mDone: the root passes (run pol-6).${ESC}[39m`);
  });

  it("a title of wide characters never leaves stale copies of the block", async () => {
    const title = "日本語のとても長いタスクのタイトル🚀".repeat(8);
    const s = await scenario({ runId: "pol-7", tree: tree(node("root", { title })) });
    s.script({ 1: { write: { "src/a.txt": "a\n" }, print: `${title}\n${title}`, status: "done", sleep: 0.6 } });
    const result = await onTerminal(s, ["step"], {}, 80);
    expect(result.exitCode).toBe(0);
    // Every line drawn fits the 80 columns (the block's lines are clipped by display width).
    const drawn = result.out.split(new RegExp(`\n|${ESC}\\[\\d*A${ESC}\\[J`)).filter((line) => line.startsWith("▶ run") || line.startsWith("  │"));
    expect(drawn.length).toBeGreaterThan(2);
    const { displayWidth } = await import("../../src/cli/display-width.js");
    for (const line of drawn) expect(displayWidth(line), line).toBeLessThan(80);
  });
});

describe("a run in progress", () => {
  it("status and log name the command, pid, since when, the iteration and the node; nothing once it has ended", async () => {
    const s = await scenario({ runId: "pol-8", tree: TWO_LEAVES });
    const go = path.join(s.scriptDir, "go");
    // The agent waits for the test to let it finish (bounded, so a failed test never leaves it behind).
    s.script({
      // (at least 150 s: far past what the checks below take on a loaded machine)
      1: { write: { "src/a.txt": "a\n" }, status: "done", sh: `i=0; while [ ! -f '${go}' ] && [ $i -lt 3000 ]; do sleep 0.05; i=$((i+1)); done` },
    });
    const child = spawn("node", [RUNNER_BIN, "run", "--max-iterations", "1"], { cwd: s.dir, env: s.env, stdio: "ignore" });
    const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
    try {
      await waitUntil("the agent started", () => s.agentRan(1));
      const status = await s.runner(["status"]);
      expect(status.stderr).toBe("");
      const line = status.stdout.split("\n")[1]!;
      expect(line).toMatch(
        new RegExp(
          `^in progress: \`runner run\`, pid ${child.pid}, since \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z \\((\\d+[hm] )?\\d+[ms] ago\\); iteration 1 of run pol-8, node a$`,
        ),
      );
      // The same line from `runner log`, read a moment later: its age ("(2s ago)", then "(3s ago)") is
      // the clock's, so it is left out of the comparison.
      const log = await s.runner(["log"]);
      const ageless = (text: string) => text.replace(/\([^()]* ago\)/, "(… ago)");
      expect(ageless(log.stdout.split("\n")[0]!)).toBe(ageless(line));
      expect(JSON.parse((await s.runner(["status", "--json"])).stdout)).toMatchObject({
        in_progress: { command: "runner run", pid: child.pid, iteration: { run_id: "pol-8", number: 1, node_id: "a", step_kind: "leaf" } },
      });
    } finally {
      writeFileSync(go, "");
      await exited;
    }
    expect((await s.runner(["status"])).stdout).not.toContain("in progress");
  });

  it("a stale lock (its process has ended, or its pid now belongs to another process) says nothing", async () => {
    const s = await scenario({ runId: "pol-9" });
    const dead = spawn("true");
    await new Promise((resolve) => dead.on("exit", resolve));
    const lockFile = path.join(s.dir, ".git", "runner.lock");
    for (const record of [
      { pid: dead.pid, start: null, host: (await import("node:os")).hostname(), command: "runner run", since: "2026-01-01T00:00:00.000Z" },
      { pid: process.pid, start: "1", host: (await import("node:os")).hostname(), command: "runner run", since: "2026-01-01T00:00:00.000Z" },
    ]) {
      writeFileSync(lockFile, `${JSON.stringify(record)}\n`);
      const status = await s.runner(["status"]);
      expect(status.stderr).toBe("");
      expect(status.stdout).not.toContain("in progress");
      expect(JSON.parse((await s.runner(["status", "--json"])).stdout)).toMatchObject({ in_progress: null });
      expect((await s.runner(["log"])).stdout).not.toContain("in progress");
    }
  });
});
