// What a person reads in the morning names each iteration as what it was (issue 34, items 6 and 7),
// through the built binary in real repositories: an unreadable answer is a runner error of kind
// output parse, not "agent said retry"; an interrupted iteration is interrupted; "failed" counts the
// same iterations in `runner run`'s summary, `runner log`, `runner show`, `runner status` and the
// report (docs/contract.md §8); and every sentence `runner run` stops with appears once, on the
// stream the contract names (§10).
import { execa } from "execa";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { node, RUNNER_BIN, runEvents, tempDir, tree } from "../helpers/sandbox.js";
import { scenario } from "../helpers/scenario.js";

/** How many times `text` occurs in `haystack`. */
function occurrences(haystack: string, text: string): number {
  return haystack.split(text).length - 1;
}

describe("labels that say what happened", () => {
  it("garbage in the output file, two agent retries that use up a leaf, a killed runner: named and counted alike everywhere", async () => {
    const s = await scenario({
      runId: "labels",
      tree: tree(node("root", { children: [node("hard", { order: 0, max_attempts: 2 }), node("easy", { order: 1 })] })),
      limits: "retry_backoff_seconds = 0",
    });
    s.script({
      1: { rawOutput: "garbage" },
      2: { status: "retry", summary: "cannot do it yet" },
      3: { status: "retry", summary: "still cannot" },
    });
    const run = await s.runner(["run", "--halt-on-stuck"]);
    expect(run.exitCode, run.stdout + run.stderr).toBe(3);

    // The unreadable answer: a runner error of kind output parse, no agent status.
    expect(s.meta(1).runner_error?.kind).toBe("output_parse_error");
    expect(run.stdout).toMatch(
      /^Iteration 1: node hard, runner error \(output parse\), guard=skipped; hard open, attempts 0\/2 \(commit [0-9a-f]{7}\) — the output file [^\n]* is not valid JSON/m,
    );
    expect(run.stdout).not.toMatch(/Iteration 1:[^\n]*agent said/);
    // Failures: the runner error and the two retries that spent the leaf's attempts.
    expect(run.stdout).toContain("3 iterations, 0 passed, 3 failed (2 agent retries, 1 runner error)");

    const log = JSON.parse((await s.runner(["log", "--json"])).stdout) as {
      iterations: { iteration: number; outcome: string }[];
      failures: Record<string, number>;
    };
    expect(log.iterations.map((it) => [it.iteration, it.outcome])).toEqual([
      [1, "runner error (output parse)"],
      [2, "agent said retry"],
      [3, "agent said retry"],
    ]);
    expect(log.failures).toEqual({ total: 3, guard: 0, retry: 2, runner_error: 1, invalid_tree: 0, other: 0 });
    const logText = (await s.runner(["log"])).stdout;
    expect(logText).toContain("run labels: 3 iterations, 3 failed (2 agent retries, 1 runner error)");
    expect(logText).toMatch(/\n\s*1 {2}hard {2}[^\n]*runner error \(output parse\)/);

    const shown = (await s.runner(["show", "hard"])).stdout;
    expect(shown).toContain("iterations on hard in run labels: 3, 3 failed (2 agent retries, 1 runner error)");
    expect(shown).toMatch(/iteration 1: runner error \(output parse\), guard skipped/);
    expect(shown).not.toMatch(/iteration 1:[^\n]*agent/);

    const status = await s.runner(["status", "--json"]);
    expect(JSON.parse(status.stdout)).toMatchObject({ failures: { total: 3, guard: 0, retry: 2, runner_error: 1, invalid_tree: 0, other: 0 } });
    expect((await s.runner(["status"])).stdout).toContain("3 iterations committed, 3 failed (2 agent retries, 1 runner error)");

    const out = path.join(tempDir("runner-labels-report-"), "report.html");
    expect((await s.runner(["report", "--output", out])).exitCode).toBe(0);
    const html = readFileSync(out, "utf8");
    expect(html).toMatch(/Failures<\/div><div class="value">3<\/div><div class="sub">2 agent retries · 1 runner error/);
    expect(html).not.toMatch(/id="iter-1"[^]*?agent said retry[^]*?id="iter-2"/);
  }, 120_000);

  it("an iteration Ctrl-C interrupted is shown as interrupted, not as the agent's retry", async () => {
    const s = await scenario({ runId: "stopped" });
    s.script({ 1: { write: { "src/a.txt": "a\n" }, sleep: 60, status: "done" } });
    const child = execa("node", [RUNNER_BIN, "run"], { cwd: s.dir, env: s.env, extendEnv: false, reject: false, timeout: 90_000 });
    for (let i = 0; i < 600 && !s.agentRan(1); i++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(s.agentRan(1)).toBe(true);
    child.kill("SIGINT");
    const run = await child;
    expect(run.exitCode).toBe(1);
    expect(String(run.stdout)).toMatch(
      /^Iteration 1: node root, interrupted, guard=skipped; root open, attempts 0\/3 \(commit [0-9a-f]{7}\) — the run was stopped while the agent ran$/m,
    );
    expect(String(run.stdout)).not.toContain("agent said");
    const log = JSON.parse((await s.runner(["log", "--json"])).stdout) as { iterations: { outcome: string }[] };
    expect(log.iterations.map((it) => it.outcome)).toEqual(["interrupted"]);
    expect((await s.runner(["show", "root"])).stdout).toMatch(/iteration 1: interrupted, guard skipped/);
    const out = path.join(tempDir("runner-labels-report-"), "report.html");
    expect((await s.runner(["report", "--output", out])).exitCode).toBe(0);
    expect(readFileSync(out, "utf8")).not.toContain("agent said retry");
  }, 120_000);
});

describe("`runner run` says each stop once, on the right stream", () => {
  it("--halt-on-stuck: the stop sentence once on stdout, nothing on stderr; --json keeps the stuck event and the summary", async () => {
    const s = await scenario({ runId: "halt", tree: tree(node("root", { children: [node("hard", { order: 0, max_attempts: 1 })] })) });
    s.script({ 1: { status: "retry" } });
    const run = await s.runner(["run", "--halt-on-stuck"]);
    expect(run.exitCode).toBe(3);
    expect(occurrences(run.stdout + run.stderr, "Stopped early: leaf hard is stuck")).toBe(1);
    expect(run.stderr).toBe("");
    const again = await s.runner(["run", "--halt-on-stuck", "--json"]);
    const types = runEvents(again.stdout).map((event) => event.type);
    expect(types).toEqual(["stuck", "summary"]);
  }, 120_000);

  it("max_iterations, no progress, a runner error that stops the run, runner errors in a row, a refusal: each sentence once", async () => {
    const s = await scenario({
      runId: "stops",
      tree: tree(node("root", { children: [node("a", { order: 0, max_attempts: 9 })] })),
      limits: "retry_backoff_seconds = 0\nmax_stalled_iterations = 2\nmax_consecutive_runner_errors = 2",
      timeoutSeconds: 2,
    });
    const once = (run: { stdout: string; stderr: string }, sentence: RegExp, stream: "stdout" | "stderr") => {
      const all = `${run.stdout}\n${run.stderr}`;
      const matches = all.match(new RegExp(sentence.source, "g")) ?? [];
      expect(matches, all).toHaveLength(1);
      expect(run[stream]).toMatch(sentence);
    };
    s.script({ 1: { status: "decomposed" } });
    once(await s.runner(["run", "--max-iterations", "1"]), /Stopped early: reached max_iterations \(1\)/, "stdout");
    s.script({ 2: { status: "done" }, 3: { status: "done" } });
    once(await s.runner(["run"]), /Stopped early: leaf a made no progress in 2 iterations in a row/, "stdout");
    s.script({ 4: { rawOutput: "garbage" }, 5: { rawOutput: "garbage" } });
    const errors = await s.runner(["run"]);
    expect(errors.exitCode).toBe(1);
    once(errors, /Stopped: 2 runner errors in a row/, "stderr");
    s.script({ 6: { sleep: 5, status: "done" } });
    const timeout = await s.runner(["run"]);
    expect(timeout.exitCode).toBe(1);
    const sentence = timeout.stderr.trim();
    expect(sentence.split("\n")).toHaveLength(1);
    expect(occurrences(timeout.stdout + timeout.stderr, sentence)).toBe(1);
    await s.git(["checkout", "-q", "main"]);
    const refused = await s.runner(["run"]);
    expect(refused.exitCode).toBe(1);
    expect(refused.stdout).toBe("");
    expect(refused.stderr.trim().split("\n")).toHaveLength(1);
  }, 180_000);
});
