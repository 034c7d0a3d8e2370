// The report's pure pieces: git-output parsers, the defensive reading of local logs (fields that
// are missing, of the wrong type, unknown, or of another commit), usage totals, the timeline's
// marks, escaping, and the merge target guess.
import { describe, expect, it } from "vitest";
import { renderTimeline } from "../../src/report/chart.js";
import { escapeHtml } from "../../src/report/format.js";
import { boundedDiff, parseAddedLines, parseShowDiffs, PATCH_LINE_LIMIT, RECORD, tailOf } from "../../src/report/git-text.js";
import { localLogFrom, parseEvents } from "../../src/report/local-log.js";
import { guessTarget, mergeCommands } from "../../src/report/merge.js";
import type { Report, ReportIteration, ReportNode } from "../../src/report/model.js";
import { renderReport } from "../../src/report/render.js";
import { iterationOutcome, runOutcome, sumUsage, totalsOf } from "../../src/report/summarize.js";

const SHA1 = "a".repeat(40);
const SHA2 = "b".repeat(40);
const SUBJECT = "chore(loop): run r iter 1 node a execute guard=pass";

function iteration(n: number, fields: Partial<ReportIteration> = {}): ReportIteration {
  return {
    iteration: n,
    commit: String(n).padStart(40, "0"),
    nodeId: "a",
    kind: "execute",
    agentStatus: "done",
    guard: "pass",
    outcome: "pass",
    summary: `iteration ${n}`,
    treeLeftInvalid: false,
    diff: { files: [], patch: "", patchLines: 0, truncated: false },
    ...fields,
  };
}

describe("git output parsers", () => {
  it("numstat and patch per commit; binary files have no counts; a commit without a patch has no files", () => {
    const text = [
      `${RECORD}${SHA1}\n\n3\t1\tsrc/a.ts\n-\t-\timg.png\n\ndiff --git a/src/a.ts b/src/a.ts\n--- a/src/a.ts\n+++ b/src/a.ts\n@@ -1 +1,3 @@\n-x\n+y\n`,
      `${RECORD}${SHA2}\n\n1\t0\tsrc/b.ts\n`,
    ].join("");
    const parsed = parseShowDiffs(text);
    expect(parsed.get(SHA1)).toEqual({
      files: [{ path: "src/a.ts", added: 3, removed: 1 }, { path: "img.png" }],
      patch: "diff --git a/src/a.ts b/src/a.ts\n--- a/src/a.ts\n+++ b/src/a.ts\n@@ -1 +1,3 @@\n-x\n+y\n",
    });
    expect(parsed.get(SHA2)).toEqual({ files: [{ path: "src/b.ts", added: 1, removed: 0 }], patch: "" });
  });

  it("a patch is cut at whole lines, and says how long it was", () => {
    const patch = Array.from({ length: PATCH_LINE_LIMIT + 50 }, (_, i) => `+line ${i}`).join("\n");
    const diff = boundedDiff([], patch);
    expect(diff.truncated).toBe(true);
    expect(diff.patchLines).toBe(PATCH_LINE_LIMIT + 50);
    expect(diff.patch.split("\n")).toHaveLength(PATCH_LINE_LIMIT);
    expect(boundedDiff([], "+one\n")).toEqual({ files: [], patch: "+one", patchLines: 1, truncated: false });
  });

  it("added lines per commit and file: the +++ header is not one, a line that starts with ++ is", () => {
    const text = `${RECORD}${SHA1}\n\ndiff --git a/q.md b/q.md\nindex 1..2 100644\n--- a/q.md\n+++ b/q.md\n@@ -1,0 +2,2 @@\n+- Why?\n+++ not a header\n-removed\n`;
    expect(parseAddedLines(text)).toEqual([{ commit: SHA1, file: "q.md", lines: ["- Why?", "++ not a header"] }]);
  });

  it("a log's tail: the last lines, bounded in characters", () => {
    expect(tailOf("1\n2\n3\n4\n", 2)).toBe("3\n4");
    expect(tailOf("x".repeat(100), 10, 5)).toBe("xxxxx");
  });
});

describe("local logs, read defensively", () => {
  const meta = (fields: Record<string, unknown>) => JSON.stringify({ commit: SHA1, subject: SUBJECT, ...fields });

  it("reads what is there, leaves out fields of the wrong type, ignores unknown ones", () => {
    const log = localLogFrom(
      {
        meta: meta({
          durations: { agent_ms: 1200, guard_ms: "slow", total_ms: 2000 },
          path: ["safetyCheck", "execute", "committed"],
          failure: 42, // not read: the failure is the commit's
          guard: { command: ["just", "ci"], exit_code: 1, output_tail: "not the runner's field" },
          executor: { exit_code: 0, timed_out: false, error: "rate limited" },
          usage: { input_tokens: 1000, cached_input_tokens: 400, output_tokens: 50, cost_usd: 0.02, reasoning_tokens: "many", surprise: 1 },
          a_field_from_the_future: { nested: true },
        }),
        events: [],
        guardLog: "from the file",
      },
      SHA1,
      SUBJECT,
    );
    expect(log).toEqual({
      agentMs: 1200,
      totalMs: 2000,
      path: [{ state: "safetyCheck" }, { state: "execute" }, { state: "committed" }],
      guardCommand: ["just", "ci"],
      guardExitCode: 1,
      guardTail: "from the file",
      agentExitCode: 0,
      agentTimedOut: false,
      agentError: "rate limited",
      usage: { input_tokens: 1000, cached_input_tokens: 400, output_tokens: 50, cost_usd: 0.02 },
    });
  });

  it("the time in each state from the events, when they follow meta.path; the guard tail from guard.log", () => {
    const events = parseEvents(
      [
        JSON.stringify({ iteration: 1, from: "(start)", event: "xstate.init", to: "safetyCheck", time: "2026-01-01T00:00:00.000Z" }),
        JSON.stringify({ iteration: 1, from: "safetyCheck", event: "x", to: "execute", time: "2026-01-01T00:00:00.250Z" }),
        JSON.stringify({ iteration: 1, from: "execute", event: "x", to: "committed", time: "2026-01-01T00:00:02.000Z" }),
        '{"iteration": 1, "to": "torn',
      ].join("\n"),
    );
    expect(events).toHaveLength(3);
    const log = localLogFrom({ meta: meta({ path: ["safetyCheck", "execute", "committed"] }), events, guardLog: "a\nb\n" }, SHA1, SUBJECT);
    expect(log?.path).toEqual([{ state: "safetyCheck", ms: 250 }, { state: "execute", ms: 1750 }, { state: "committed" }]);
    expect(log?.guardTail).toBe("a\nb");
    // Events that disagree with meta.path (a run id used twice) are not trusted for times.
    const other = localLogFrom({ meta: meta({ path: ["safetyCheck", "loadTree"] }), events }, SHA1, SUBJECT);
    expect(other?.path).toEqual([{ state: "safetyCheck" }, { state: "loadTree" }]);
  });

  it("a log of another commit, one without a commit whose subject differs, and one that is not JSON are not used", () => {
    expect(localLogFrom({ meta: meta({}), events: [] }, SHA2, SUBJECT)).toBeUndefined();
    expect(
      localLogFrom({ meta: JSON.stringify({ subject: "chore(loop): run r iter 1 node b execute guard=pass" }), events: [] }, SHA1, SUBJECT),
    ).toBeUndefined();
    expect(localLogFrom({ meta: JSON.stringify({ subject: SUBJECT }), events: [] }, SHA1, SUBJECT)).toEqual({});
    expect(localLogFrom({ meta: "{ torn", events: [] }, SHA1, SUBJECT)).toBeUndefined();
    expect(localLogFrom({ meta: "[1, 2]", events: [] }, SHA1, SUBJECT)).toBeUndefined();
  });

  it("the agent's output is kept only for an iteration that ended in a runner error", () => {
    expect(localLogFrom({ meta: meta({ runner_error: null }), events: [], executorLog: "out" }, SHA1, SUBJECT)?.agentTail).toBeUndefined();
    expect(localLogFrom({ meta: meta({ runner_error: { kind: "other" } }), events: [], executorLog: "out" }, SHA1, SUBJECT)?.agentTail).toBe("out");
  });
});

describe("summaries", () => {
  it("usage is summed over the iterations that recorded it, field by field", () => {
    expect(sumUsage([undefined, undefined])).toBeUndefined();
    expect(sumUsage([{ input_tokens: 10, cost_usd: 0.5 }, undefined, { input_tokens: 5, output_tokens: 2 }])).toEqual({
      recorded: 2,
      input_tokens: 15,
      output_tokens: 2,
      cost_usd: 0.5,
    });
    const totals = totalsOf([iteration(1, { local: { usage: { output_tokens: 3 }, totalMs: 10, agentMs: 4, guardMs: 5 } }), iteration(2)], undefined);
    expect(totals.usage).toEqual({ recorded: 1, output_tokens: 3 });
    expect(totals.time).toEqual({ agentMs: 4, guardMs: 5, runnerMs: 1, totalMs: 10, timed: 1 });
  });

  it("a runner error or a tree left invalid outranks what the agent and the guard said", () => {
    expect(
      iterationOutcome({ kind: "execute", guard: "skipped", agentStatus: "retry", runnerError: "executor_timeout: x", treeLeftInvalid: false }),
    ).toBe("error");
    expect(iterationOutcome({ kind: "decompose", guard: "skipped", agentStatus: "retry", treeLeftInvalid: true })).toBe("invalid-tree");
    expect(iterationOutcome({ kind: "execute", guard: "skipped", agentStatus: "retry", treeLeftInvalid: false })).toBe("retry");
    expect(iterationOutcome({ kind: "decompose", guard: "skipped", agentStatus: "done", failure: "contract", treeLeftInvalid: false })).toBe("fail");
  });

  it("a complete run is mergeable only with a clean audit", () => {
    const root = { id: "root", title: "t", state: "passed" as const, attempts: 0, maxAttempts: 3, next: false, iterations: [], children: [] };
    expect(runOutcome([iteration(1)], root, { clean: true, violations: [] }).mergeable).toBe(true);
    const dirty = runOutcome([iteration(1)], root, { clean: false, violations: [{ commit: SHA1, message: "x" }] });
    expect(dirty).toMatchObject({ kind: "complete", mergeable: false });
    expect(runOutcome([], undefined, undefined).kind).toBe("empty");
  });

  it("an open run says what is next: stuck on a leaf, a tree to repair, or simply not finished", () => {
    const leaf = (id: string, fields: Partial<ReportNode> = {}): ReportNode => ({
      id,
      title: id,
      state: "open",
      attempts: 0,
      maxAttempts: 3,
      next: false,
      iterations: [],
      children: [],
      ...fields,
    });
    const stuck = leaf("root", { children: [leaf("a", { state: "passed" }), leaf("b", { state: "stuck", attempts: 3, next: true })] });
    expect(runOutcome([iteration(1)], stuck, undefined)).toMatchObject({ kind: "stuck", headline: "Stuck on b", mergeable: false });
    expect(runOutcome([iteration(1)], stuck, undefined).detail).toContain("Leaf b used all its attempts (3/3)");
    const open = leaf("root", { children: [leaf("a", { next: true })] });
    expect(runOutcome([iteration(1)], open, undefined)).toMatchObject({
      kind: "in-progress",
      detail: "0 of 2 nodes passed after 1 iteration; next: a.",
    });
    expect(runOutcome([iteration(1, { treeLeftInvalid: true, outcome: "invalid-tree" })], open, undefined).kind).toBe("tree-invalid");
  });
});

describe("the timeline", () => {
  it("one mark per iteration up to 240, with and without times; beyond, consecutive iterations share a mark", () => {
    for (const [n, marks] of [
      [1, 1],
      [7, 7],
      [60, 60],
      [240, 240],
      [300, 150],
      [2000, 223],
    ] as const) {
      const timed = Array.from({ length: n }, (_, i) => iteration(i + 1, { local: { totalMs: 100 * (i + 1), agentMs: 50, guardMs: 20 } }));
      expect(renderTimeline(timed).match(/<g class="mark"/g)).toHaveLength(marks);
      const untimed = Array.from({ length: n }, (_, i) => iteration(i + 1));
      expect(renderTimeline(untimed).match(/<g class="mark"/g)).toHaveLength(marks);
    }
    expect(renderTimeline([])).toContain("No iterations yet");
  });

  it("bars are stacked agent, guard, runner from the bottom, heights in proportion to the time", () => {
    const svg = renderTimeline([iteration(1, { local: { totalMs: 1000, agentMs: 500, guardMs: 300 } })]);
    const height = (name: string) => Number(new RegExp(`class="seg-${name}"[^>]* height="([0-9.]+)"`).exec(svg)?.[1]);
    expect(height("agent") / height("guard")).toBeCloseTo(5 / 3, 1);
    expect(height("agent") / height("runner")).toBeCloseTo(5 / 2, 1);
  });
});

describe("escaping and merge commands", () => {
  it("escapes markup characters and replaces characters XML forbids", () => {
    expect(escapeHtml(`<a href="x">'&'</a>\u0001\t\n`)).toBe("&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;\uFFFD\t\n");
  });

  it("guesses main or master as the target, else the only other local branch; quotes odd names", () => {
    expect(guessTarget(["runner/x", "main", "feature"], "runner/x")).toBe("main");
    expect(guessTarget(["origin/master", "origin/HEAD"], "runner/x")).toBe("master");
    expect(guessTarget(["develop", "runner/other"], "runner/x")).toBe("develop");
    expect(guessTarget(["a", "b"], "runner/x")).toBeUndefined();
    const commands = mergeCommands("runner/x", "x", "it's", undefined).map((c) => c.command);
    expect(commands).toContain(`git switch 'it'\\''s' && git merge --no-ff runner/x`);
    expect(mergeCommands("runner/x", "x", undefined, SHA1).at(-1)?.command).toBe("git merge --no-ff runner/x");
  });
});

describe("the page", () => {
  it("shows recorded usage in the totals and on the iteration", () => {
    const iterations = [
      iteration(1, { local: { totalMs: 10, usage: { input_tokens: 12_345, cached_input_tokens: 2_000, output_tokens: 678, cost_usd: 0.1234 } } }),
    ];
    const report: Report = {
      runId: "r",
      tip: SHA1,
      generatedAt: "2026-01-01T00:00:00.000Z",
      localLogs: 1,
      outcome: runOutcome(iterations, undefined, undefined),
      totals: totalsOf(iterations, undefined),
      iterations,
      notes: [],
      merge: { ref: "runner/r", target: "main", commands: mergeCommands("runner/r", "r", "main", undefined) },
    };
    const html = renderReport(report);
    expect(html).toContain("$0.1234");
    expect(html).toContain("12,345 in (2,000 cached) · 678 out · $0.1234");
    expect(html).toContain("1 of 1 iterations recorded");
  });
});
