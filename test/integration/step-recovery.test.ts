// Seed 002's "Runner Error Recovery" table through the built binary: every runner error is recorded
// as a retry with the guard skipped and attempts unchanged, persisted and committed, then reported
// (exit 1, the reason on stderr); runner errors are not fed back to the agent. Timeouts kill the
// whole process group of the agent or the guard.
import { describe, expect, it } from "vitest";
import { isAlive, oneSentence, scenario, subject, type Scenario, type ScenarioOptions } from "../helpers/scenario.js";
import type { CliResult } from "../helpers/sandbox.js";
import { node, tree } from "../helpers/sandbox.js";

/** The checks every row of the recovery table shares. */
async function expectRecovered(
  s: Scenario,
  result: CliResult,
  iteration: number,
  expectedSubject: string,
  reason: RegExp,
  kind: string,
): Promise<void> {
  expect(result.exitCode, result.stderr).toBe(1);
  const sentence = oneSentence(result.stderr);
  expect(sentence).toMatch(reason);
  expect(sentence).toContain("runner step");
  const subjects = await s.subjects();
  expect(subjects[subjects.length - 1]).toBe(expectedSubject);
  expect(expectedSubject).toMatch(/guard=skipped$/);
  expect(await s.git(["status", "--porcelain"])).toBe("");
  expect(s.exists(s.iterFile(iteration, "runner_error.log"))).toBe(true);
  expect(s.read(s.iterFile(iteration, "runner_error.log"))).toContain(kind);
  const meta = s.meta(iteration);
  expect(meta.path).toContain("recover");
  expect(meta.path[meta.path.length - 1]).toBe("failed");
  expect(meta.path.indexOf("recover")).toBeLessThan(meta.path.indexOf("commit"));
  expect(meta).toMatchObject({ iteration, agent_status: "retry", guard_outcome: "skipped" });
  expect(meta.attempts_after).toBe(meta.attempts_before);
  expect(meta.runner_error?.kind).toBe(kind);
}

/** Runner errors never reach the agent: the next iteration hears of no failure and no history. */
function expectNotFedBack(s: Scenario, iteration: number, nodeId: string, words: RegExp): void {
  const seen = s.agent(iteration);
  expect(seen.context["failure.md"]).toBe("No failure recorded for this node.\n");
  expect(seen.context["history.md"]).toBe(`No earlier iterations on ${nodeId} in this run.\n`);
  expect(seen.stdin).not.toMatch(words);
}

describe.concurrent("runner error recovery", () => {
  it("executor timeout: the agent is killed with its children; retry, guard skipped, attempts unchanged, not fed back", async () => {
    const s = await scenario({ timeoutSeconds: 2, tree: tree(node("root", { attempts: 1 })) });
    s.script({
      // The agent even wrote a valid "retry" before hanging: still no attempt is used.
      // (it would sleep past the test's own time limit: the step ends only because the runner kills it at its budget)
      1: { write: { "partial.txt": "partial\n" }, status: "retry", spawnChild: true, sleep: 600 },
      2: { status: "retry" },
    });
    const result = await s.step();
    await expectRecovered(
      s,
      result,
      1,
      subject("t1", 1, "root", "execute", "skipped"),
      /did not finish within the iteration budget of 2 s/,
      "executor_timeout",
    );
    expect(s.node("root")).toMatchObject({ passes: false, attempts: 1 });
    const child = s.childPid("agent", 1);
    expect(isAlive(child)).toBe(false);
    expect(s.guardRuns()).toEqual([]);

    const next = await s.step();
    expect(next.exitCode, next.stderr).toBe(0);
    expectNotFedBack(s, 2, "root", /did not finish|timed? ?out|budget of 2 s|executor_timeout/i);
    expect(s.node("root").attempts).toBe(2);
  });

  it("output parse error (garbage, missing, off-schema): retry, guard skipped, attempts unchanged, not fed back", async () => {
    const s = await scenario();
    s.script({
      1: { write: { "x.txt": "1\n" }, rawOutput: "GARBAGE-OUTPUT {{{" },
      2: { write: { "x.txt": "2\n" } },
      3: { write: { "x.txt": "3\n" }, rawOutput: JSON.stringify({ status: "finished", summary: "ok" }) },
      4: { status: "retry" },
    });
    await expectRecovered(s, await s.step(), 1, subject("t1", 1, "root", "execute", "skipped"), /not valid JSON/, "output_parse_error");
    await expectRecovered(s, await s.step(), 2, subject("t1", 2, "root", "execute", "skipped"), /no output file/, "output_parse_error");
    await expectRecovered(
      s,
      await s.step(),
      3,
      subject("t1", 3, "root", "execute", "skipped"),
      /does not match the agent output schema/,
      "output_parse_error",
    );
    expect(s.node("root")).toMatchObject({ passes: false, attempts: 0 });
    expect(s.guardRuns()).toEqual([]);
    expect(s.read("x.txt")).toBe("3\n");

    const next = await s.step();
    expect(next.exitCode, next.stderr).toBe(0);
    expectNotFedBack(s, 4, "root", /GARBAGE|not valid JSON|no output file|output schema|output_parse_error/i);
  });

  it("a guard or an agent that is not installed: the step refuses before the agent runs (preflight), one sentence, nothing committed", async () => {
    for (const [options, pattern] of [
      [
        { guard: ["no-such-guard-command-xyz"] } as ScenarioOptions,
        /^The guard's program "no-such-guard-command-xyz" \(\[guard\] command\) is not on PATH; install it or fix \[guard\] command/,
      ],
      [
        { executor: ["no-such-agent-command-xyz"] } as ScenarioOptions,
        /^The agent's program "no-such-agent-command-xyz" \(\[executor\] command\) is not on PATH; fix \[executor\] command/,
      ],
    ] as const) {
      const s = await scenario(options);
      s.script({ 1: { write: { "x.txt": "done\n" }, status: "done" } });
      const head = await s.head();
      const result = await s.step();
      expect(result.exitCode).toBe(1);
      expect(oneSentence(result.stderr)).toMatch(pattern);
      expect(await s.head()).toBe(head);
      expect(s.agentRan(1)).toBe(false);
      expect(await s.git(["status", "--porcelain"])).toBe("");
    }
  });

  it("guard timeout: the guard is killed with its children, recorded as a runner error", async () => {
    const s = await scenario({ timeoutSeconds: 3 });
    // (the guard would sleep past the test's own time limit: the step ends only because the runner kills it at its budget)
    s.script({ 1: { write: { "x.txt": "done\n" }, status: "done", guard: { spawnChild: true, sleep: 600 } } });
    const result = await s.step();
    await expectRecovered(
      s,
      result,
      1,
      subject("t1", 1, "root", "execute", "skipped"),
      /guard did not finish within the iteration budget of 3 s/,
      "executor_timeout",
    );
    expect(s.meta(1).path).toContain("guard");
    expect(s.guardRuns()).toEqual([1]);
    expect(isAlive(s.childPid("guard", 1))).toBe(false);
    expect(s.node("root")).toMatchObject({ passes: false, attempts: 0 });
  });
});

describe.concurrent("a bug is not a runner error", () => {
  it("an unexpected exception inside an actor exits 2 with one sentence (the stack only with --debug), commits nothing, and the next step records the iteration from its journal", async () => {
    const s = await scenario({ tree: tree(node("root", { children: [node("a")] })) });
    s.script({ 1: { write: { "src/a.txt": "a\n" }, status: "done" }, 2: { write: { "src/a2.txt": "a2\n" }, status: "done" } });
    const headBefore = await s.head();
    s.env = { ...s.env, RUNNER_TEST_HOOKS: "1", RUNNER_TEST_BUG_IN: "collectResult" };
    const buggy = await s.step(["--debug"]);
    expect(buggy.exitCode, buggy.stderr).toBe(2);
    const lines = buggy.stderr.trim().split("\n");
    expect(lines[0]).toMatch(
      /^Internal error: Cannot read properties of undefined .*This is a bug in the runner; rerun with --debug for the stack trace\.$/,
    );
    expect(lines.slice(1).join("\n")).toMatch(/TypeError: .*\n\s+at /);
    expect(await s.head(), "nothing is committed after a bug").toBe(headBefore);
    expect(s.exists(s.iterFile(1, "meta.json")), "no meta.json claims an outcome").toBe(false);

    const quiet = await s.step();
    // Without --debug the bug is one sentence; the journal still names iteration 1, which a bug never commits.
    expect([quiet.exitCode, quiet.stderr.trim().split("\n").length], quiet.stderr).toEqual([2, 1]);

    s.env = { ...s.env, RUNNER_TEST_HOOKS: "0" };
    const recovered = await s.step();
    expect(recovered.exitCode, recovered.stderr).toBe(1);
    expect(oneSentence(recovered.stderr)).toMatch(/Iteration 1 was interrupted: the runner stopped \(killed or crashed\) during iteration 1/);
    expect(await s.subjects()).toEqual([subject("t1", 1, "a", "interrupted", "skipped")]);
    expect(await s.git(["show", "HEAD:src/a.txt"])).toBe("a");
    const next = await s.step();
    expect(next.exitCode, next.stderr).toBe(0);
    expect(s.node("a")).toMatchObject({ passes: true, attempts: 0 });
  });
});
