// Real runs for the `runner report` tests, made with the scripted agent and guard through the built
// binary: all passes; a guard failure then a retry; a repair; a runner error. Each carries text an
// agent could write that must show as text (a <script>, an <img onerror>), and lines the agent adds
// to questions.md and assumptions.md.
import { expect } from "vitest";
import { node, tree } from "./sandbox.js";
import { scenario, TREE_FILE, type Scenario } from "./scenario.js";

/** An agent's summary that would run script if it reached the page unescaped. */
export const HOSTILE_SUMMARY = `wrote a <script>window.__pwned = 1</script> and <img src="x" onerror="window.__pwned = 2"> & "quotes"`;
export const HOSTILE_QUESTION = "- Should <script>window.__pwned = 3</script> be allowed?";

export type RunName = "all-passes" | "guard-fail-retry" | "repair" | "runner-error";

export interface ReportRun {
  name: RunName;
  s: Scenario;
  iterations: number;
}

async function runToEnd(s: Scenario, expectedExit: number): Promise<void> {
  const result = await s.runner(["run"]);
  expect(result.exitCode, `${result.stdout}\n${result.stderr}`).toBe(expectedExit);
}

/** Decompose root into a and b, then a and b pass; the agent adds a question and an assumption. */
export async function allPassesRun(runId = "all-passes"): Promise<ReportRun> {
  const s = await scenario({ runId });
  s.script({
    1: {
      decompose: [
        { id: "a", order: 0, title: "First part" },
        { id: "b", order: 1, title: "Second <b>part</b>" },
      ],
      status: "decomposed",
      summary: "split root into a and b",
    },
    2: {
      write: { "src/a.txt": "a\n" },
      append: { ".runner/state/questions.md": `${HOSTILE_QUESTION}\n`, ".runner/state/assumptions.md": "- Inputs are small integers.\n" },
      status: "done",
      summary: HOSTILE_SUMMARY,
    },
    3: { write: { "src/b.txt": "b\n" }, status: "done", summary: "wrote b", guard: { print: "all 2 checks green" } },
  });
  await runToEnd(s, 0);
  return { name: "all-passes", s, iterations: 3 };
}

/** Leaf a fails its guard (attempt 1/3), the retry passes, then b passes. */
export async function guardFailRetryRun(runId = "guard-fail"): Promise<ReportRun> {
  const s = await scenario({
    runId,
    tree: tree(node("root", { title: "Project", children: [node("a", { title: "Add" }), node("b", { order: 1, title: "Multiply" })] })),
  });
  s.script({
    1: {
      write: { "src/a.txt": "wrong\n" },
      status: "done",
      summary: "wrote a, badly",
      guard: { exit: 1, print: "not ok 1 - add\nAssertionError: expected 5, got 6" },
    },
    2: { write: { "src/a.txt": "right\n" }, status: "done", summary: "fixed a" },
    3: { write: { "src/b.txt": "b\n" }, status: "done", summary: "wrote b" },
  });
  await runToEnd(s, 0);
  return { name: "guard-fail-retry", s, iterations: 3 };
}

/** The agent rewrites passed node a (the tree is left invalid), a repair step restores it, then b passes. */
export async function repairRun(runId = "repair"): Promise<ReportRun> {
  const s = await scenario({ runId, tree: tree(node("root", { children: [node("a", { passes: true, attempts: 1 }), node("b", { order: 1 })] })) });
  const valid = s.read(TREE_FILE);
  s.script({
    1: { set: { a: { title: "Rewritten by the agent" } }, status: "retry", summary: "renamed a" },
    2: { treeText: valid, status: "done", summary: "restored a" },
    3: { write: { "src/b.txt": "b\n" }, status: "done", summary: "wrote b" },
  });
  await runToEnd(s, 0);
  return { name: "repair", s, iterations: 3 };
}

/** a passes; then the agent writes no valid output for b: a runner error stops the run (exit 1; no retry allowed). */
export async function runnerErrorRun(runId = "runner-error"): Promise<ReportRun> {
  const s = await scenario({
    runId,
    tree: tree(node("root", { children: [node("a"), node("b", { order: 1 })] })),
    limits: "max_consecutive_runner_errors = 1",
  });
  s.script({
    1: { write: { "src/a.txt": "a\n" }, status: "done", summary: "wrote a" },
    2: { write: { "src/b.txt": "draft\n" }, rawOutput: "<script>window.__pwned = 4</script> not JSON", print: "agent crashed <badly>" },
  });
  await runToEnd(s, 1);
  return { name: "runner-error", s, iterations: 2 };
}
