// Plan-finished leaves judged by the guard first (issue 30 §1), pure: which leaves are pending, what
// one re-check judges, and what `runner audit` accepts — extra passes on a re-check only on a green
// guard and only for open, unjudged leaves the plan marked finished; finished.json changed only by a
// person (by `runner import` only for the nodes it adds).
import { describe, expect, it } from "vitest";
import { auditRun, type AuditCommit } from "../../src/core/audit/audit.js";
import { LAYOUT } from "../../src/core/base/layout.js";
import { parseLoopCommit } from "../../src/core/commit/loop-history.js";
import { formatPersonEditMessage } from "../../src/core/commit/commit-message.js";
import { formatFinished, MAX_BATCH_CHARS, parseFinished, pendingFinished, recheckBatch } from "../../src/core/plan/plan-finished.js";
import type { TaskTree } from "../../src/core/tree/tree.js";
import { node, tree } from "../helpers/sandbox.js";

const RUN = "r1";
const base = (): TaskTree => tree(node("root", { children: [node("a", { order: 0 }), node("c", { order: 1 }), node("b", { order: 2 })] }));

function passed(t: TaskTree, ...ids: string[]): TaskTree {
  const copy = structuredClone(t);
  for (const child of copy.root.children) if (ids.includes(child.id)) child.passes = true;
  copy.root.passes = copy.root.children.every((child) => child.passes);
  return copy;
}

let sha = 0;
function loop(
  iteration: number,
  nodeId: string,
  kind: string,
  guard: string,
  after: TaskTree,
  trailers: string[] = [],
  changed: string[] = [],
): AuditCommit {
  return {
    sha: String(++sha).padStart(40, "0"),
    subject: `chore(loop): run ${RUN} iter ${iteration} node ${nodeId} ${kind} guard=${guard}`,
    body: ["Runner-Attempts: 0/3", ...trailers].join("\n"),
    parents: ["p"],
    changedPaths: [LAYOUT.tree, ...changed],
    tree: after,
  };
}

async function violations(commits: AuditCommit[], finished: string[] = ["a", "b"]): Promise<string[]> {
  const report = await auditRun(RUN, base(), commits, finished);
  return report.violations.map((violation) => violation.message);
}

describe("pending plan-finished leaves", () => {
  it("are the listed open leaves no iteration of the run has named, in selection order", () => {
    const t = tree(
      node("root", { children: [node("b", { order: 2 }), node("a", { order: 0 }), node("c", { order: 1, attempts: 1 }), node("d", { order: 3 })] }),
    );
    expect(pendingFinished(t, ["d", "c", "b", "a"], [])).toEqual(["a", "b", "d"]);
    const named = parseLoopCommit("x", `chore(loop): run ${RUN} iter 1 node a recheck guard=fail`, "", RUN)!;
    expect(pendingFinished(t, ["a", "b"], [named])).toEqual(["b"]);
    expect(recheckBatch(["a", "b", "d"], "a")).toEqual(["a", "b", "d"]);
    expect(recheckBatch(["a", "b", "d"], "c")).toBeUndefined();
  });

  it("a batch stays within what one environment variable holds", () => {
    const ids = Array.from({ length: 10_000 }, (_, i) => `leaf-number-${i}`);
    const batch = recheckBatch(ids, ids[0]!)!;
    expect(batch.join(" ").length).toBeLessThanOrEqual(MAX_BATCH_CHARS);
    expect(batch.length).toBeGreaterThan(1_500);
  });

  it("finished.json round-trips, and an unreadable one is named", () => {
    expect(parseFinished(formatFinished(["a", "b"]))).toEqual({ ok: true, ids: ["a", "b"] });
    expect(parseFinished("[1]")).toEqual({ ok: false, problem: 'must be an object with "version": 1' });
  });
});

describe("runner audit of a re-check that passes plan-finished leaves", () => {
  it("accepts the batch on a green guard for leaves the plan marked finished", async () => {
    expect(await violations([loop(1, "a", "recheck", "pass", passed(base(), "a", "b"), ["Runner-Rechecked: b"])])).toEqual([]);
  });

  it("flags a leaf the plan does not mark finished, a red guard, a pass without the trailer, an already judged leaf", async () => {
    expect(await violations([loop(1, "a", "recheck", "pass", passed(base(), "a", "c"), ["Runner-Rechecked: c"])])).toEqual([
      'the re-check passed "c" with its own leaf (Runner-Rechecked) which the plan does not mark finished (.runner/state/finished.json)',
    ]);
    expect(await violations([loop(1, "a", "recheck", "fail", passed(base(), "b"), ["Runner-Rechecked: b"])])).toEqual([
      'the re-check passed "b" with its own leaf (Runner-Rechecked) on guard=fail',
    ]);
    expect(await violations([loop(1, "a", "recheck", "pass", passed(base(), "a", "b"))])).toEqual([
      'passes of "b" changed from false to true without a green guard',
    ]);
    expect(
      await violations([loop(1, "b", "recheck", "fail", base()), loop(2, "a", "recheck", "pass", passed(base(), "a", "b"), ["Runner-Rechecked: b"])]),
    ).toEqual(['the re-check passed "b" with its own leaf (Runner-Rechecked) which an earlier iteration had already judged']);
  });

  it("flags a loop commit that changed finished.json", async () => {
    const tried = base();
    tried.root.children[0]!.attempts = 1;
    const commit = loop(1, "a", "execute", "fail", tried, ["Runner-Status: done"], ["src/a.txt", LAYOUT.finished]);
    commit.body = commit.body.replace("0/3", "1/3");
    expect(await violations([commit])).toEqual([
      `changed ${LAYOUT.finished}, which only a person's edit changes (the runner takes back every change an agent makes to it)`,
    ]);
  });
});

describe("runner audit of `runner import`", () => {
  const person = "Test Author <author@example.com>";
  const imported = (finished: string[]): AuditCommit => {
    const after = base();
    after.root.children.push(node("plan", { order: 3, children: [node("x"), node("y", { order: 1 })] }));
    return {
      sha: "f".repeat(40),
      subject: `chore(runner): run ${RUN} edit import node plan`,
      // (as `runner import` words it: the nodes added, and how many of them the plan marked finished)
      body: formatPersonEditMessage({ runId: RUN, verb: "import", target: "plan" }, person, [
        'imported "plan" under "root"',
        `${finished.length - 2} finished leaves for the guard to judge first`,
      ])
        .split("\n")
        .slice(2)
        .join("\n"),
      author: person,
      changedPaths: [LAYOUT.tree, LAYOUT.finished],
      tree: after,
      finished,
    };
  };

  it("is a valid person's edit when it marks finished only leaves it added", async () => {
    const report = await auditRun(RUN, base(), [imported(["a", "b", "x"])], ["a", "b"]);
    expect(report.personEdits).toEqual([expect.objectContaining({ verb: "import", made: "runner", problems: [] })]);
    expect(report.violations).toEqual([]);
  });

  it("breaks the rules when it marks a leaf it did not add", async () => {
    const report = await auditRun(RUN, base(), [imported(["a", "b", "c"])], ["a", "b"]);
    expect(report.personEdits[0]!.problems).toEqual(['the subject says import plan, but it marks "c" finished, which it did not import']);
  });
});
