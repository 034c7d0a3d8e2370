// Seed 002 (state updates) and CONTRACT §7 (how the agent's status is judged), on real small trees.
import { describe, expect, it } from "vitest";
import { serializeTree } from "../../src/core/tree/serialize.js";
import { checkTreeShape } from "../../src/core/tree/invariants.js";
import {
  applyStateUpdates,
  deriveInternalPasses,
  resetRunnerOwnedFields,
  transitionFor,
  type AgentStatus,
  type GuardOutcome,
} from "../../src/core/tree/state-update.js";
import { judgeAgentStatus } from "../../src/core/guard/classify.js";
import { RUNNER_ERROR_RECOVERY, type RunnerErrorKind } from "../../src/core/step/runner-errors.js";
import { indexById, type TaskNode, type TaskTree } from "../../src/core/tree/tree.js";
import { node, tree } from "../helpers/sandbox.js";

/** root → [a (the selected leaf, attempts 1/3), b (open leaf)]. */
function smallTree(a: Partial<TaskNode> = {}): TaskTree {
  return tree(node("root", { children: [node("a", { order: 0, attempts: 1, ...a }), node("b", { order: 1 })] }));
}

function find(t: TaskTree, id: string): TaskNode {
  const found = indexById(t).get(id);
  if (!found) throw new Error(`no node ${id}`);
  return found.node;
}

describe("seed 002 state transitions: one row per line of the transition table", () => {
  const rows: {
    row: string;
    status: AgentStatus;
    guard: GuardOutcome;
    transition: ReturnType<typeof transitionFor>;
    passes: boolean;
    attempts: number;
  }[] = [
    {
      row: "Done / Pass: passes = true, attempts unchanged",
      status: "done",
      guard: "pass",
      transition: { passes: "set-true", attempts: "unchanged" },
      passes: true,
      attempts: 1,
    },
    {
      row: "Done / Fail: passes unchanged, attempts + 1 if < max",
      status: "done",
      guard: "fail",
      transition: { passes: "unchanged", attempts: "increment" },
      passes: false,
      attempts: 2,
    },
    {
      row: "Done / Skipped: passes unchanged, attempts unchanged",
      status: "done",
      guard: "skipped",
      transition: { passes: "unchanged", attempts: "unchanged" },
      passes: false,
      attempts: 1,
    },
    {
      row: "Retry / (skipped): passes unchanged, attempts + 1 if < max",
      status: "retry",
      guard: "skipped",
      transition: { passes: "unchanged", attempts: "increment" },
      passes: false,
      attempts: 2,
    },
    {
      row: "Decomposed / —: passes unchanged, attempts unchanged",
      status: "decomposed",
      guard: "skipped",
      transition: { passes: "unchanged", attempts: "unchanged" },
      passes: false,
      attempts: 1,
    },
  ];

  it.each(rows)("$row", ({ status, guard, transition, passes, attempts }) => {
    expect(transitionFor(status, guard)).toEqual(transition);
    const prev = smallTree();
    // A decomposing agent adds children under the selected leaf; the others leave the tree as it was.
    const next = status === "decomposed" ? smallTree({ children: [node("a1", { order: 0 }), node("a2", { order: 1 })] }) : smallTree();
    const result = applyStateUpdates(prev, next, "a", { status, guard });
    const a = find(result.tree, "a");
    expect(result.selected).toBe(a);
    expect(a.passes).toBe(passes);
    expect(a.attempts).toBe(attempts);
    // The other nodes are untouched by the transition; the root stays open while b is open.
    expect(find(result.tree, "b")).toMatchObject({ passes: false, attempts: 0 });
    expect(result.tree.root.passes).toBe(false);
    expect(result.derivedPasses).toEqual([]);
  });
});

describe("seed 002 attempt saturation: attempts increment only when attempts < max_attempts", () => {
  it.each([
    { status: "done", guard: "fail" },
    { status: "retry", guard: "skipped" },
  ] as const)("$status / $guard at attempts == max_attempts stays at max_attempts (stuck)", ({ status, guard }) => {
    const prev = smallTree({ attempts: 3, max_attempts: 3 });
    const result = applyStateUpdates(prev, smallTree({ attempts: 3, max_attempts: 3 }), "a", { status, guard });
    expect(find(result.tree, "a")).toMatchObject({ passes: false, attempts: 3, max_attempts: 3 });
  });

  it.each([
    { status: "done", guard: "fail" },
    { status: "retry", guard: "skipped" },
  ] as const)("$status / $guard at attempts == max_attempts - 1 reaches max_attempts", ({ status, guard }) => {
    const prev = smallTree({ attempts: 2, max_attempts: 3 });
    const result = applyStateUpdates(prev, smallTree({ attempts: 2, max_attempts: 3 }), "a", { status, guard });
    expect(find(result.tree, "a").attempts).toBe(3);
  });

  it("Done / Pass on a stuck leaf still passes it (saturation only limits attempts)", () => {
    const prev = smallTree({ attempts: 3, max_attempts: 3 });
    const result = applyStateUpdates(prev, smallTree({ attempts: 3, max_attempts: 3 }), "a", { status: "done", guard: "pass" });
    expect(find(result.tree, "a")).toMatchObject({ passes: true, attempts: 3 });
  });

  // Agents may edit open nodes (seed 000), max_attempts included; attempts stay ≤ max_attempts (CONTRACT §3).
  it("runner-owned attempts never exceed max_attempts after the update, even when the agent lowers max_attempts", () => {
    const prev = smallTree({ attempts: 2, max_attempts: 3 });
    const next = smallTree({ attempts: 2, max_attempts: 1 });
    const result = applyStateUpdates(prev, next, "b", { status: "retry", guard: "skipped" });
    expect(checkTreeShape(JSON.parse(JSON.stringify(result.tree))).problems).toEqual([]);
  });
});

describe("seed 002 runner error recovery: retry, guard skipped, attempts unchanged", () => {
  const kinds: RunnerErrorKind[] = ["executor_timeout", "output_parse_error", "guard_error", "other"];

  it.each(kinds)("%s: recorded as Retry / Skipped, and the tree keeps passes and attempts", () => {
    expect(RUNNER_ERROR_RECOVERY).toEqual({ status: "retry", guard: "skipped", attempts: "unchanged" });
    const prev = smallTree({ attempts: 2 });
    // Whatever the agent left in the tree, the runner-owned fields come from prev.
    const next = smallTree({ attempts: 0, passes: true });
    const result = applyStateUpdates(prev, next, "a", undefined);
    expect(find(result.tree, "a")).toMatchObject({ passes: false, attempts: 2 });
    expect(find(result.tree, "b")).toMatchObject({ passes: false, attempts: 0 });
    expect(result.tree.root.passes).toBe(false);
  });

  it("recovery does not consume an attempt, unlike an agent's Retry (which is +1)", () => {
    const prev = smallTree({ attempts: 2 });
    expect(find(applyStateUpdates(prev, smallTree({ attempts: 2 }), "a", undefined).tree, "a").attempts).toBe(2);
    expect(find(applyStateUpdates(prev, smallTree({ attempts: 2 }), "a", { status: "retry", guard: "skipped" }).tree, "a").attempts).toBe(3);
  });
});

describe("seed 002 runner-owned field reset: agent edits to passes and attempts are ignored", () => {
  it("existing nodes take passes and attempts from prev, whatever the agent wrote", () => {
    const prev = tree(node("root", { children: [node("a", { attempts: 1 }), node("b", { order: 1, attempts: 2 })] }));
    const next = tree(
      node("root", {
        passes: true,
        attempts: 3,
        children: [node("a", { passes: true, attempts: 0 }), node("b", { order: 1, attempts: 3, title: "edited by the agent" })],
      }),
    );
    const reset = resetRunnerOwnedFields(prev, next);
    expect(find(reset, "root")).toMatchObject({ passes: false, attempts: 0 });
    expect(find(reset, "a")).toMatchObject({ passes: false, attempts: 1 });
    // Other fields of open nodes are the agent's to edit and survive.
    expect(find(reset, "b")).toMatchObject({ passes: false, attempts: 2, title: "edited by the agent" });
  });

  it("new nodes (added by the agent) get passes = false and attempts = 0", () => {
    const prev = smallTree();
    const next = smallTree({ children: [node("a1", { passes: true, attempts: 2 }), node("a2", { order: 1, passes: true, attempts: 3 })] });
    const result = applyStateUpdates(prev, next, "a", { status: "decomposed", guard: "skipped" });
    expect(find(result.tree, "a1")).toMatchObject({ passes: false, attempts: 0 });
    expect(find(result.tree, "a2")).toMatchObject({ passes: false, attempts: 0 });
    // The agent's claim that both children passed did not pass the parent either.
    expect(find(result.tree, "a").passes).toBe(false);
    expect(result.derivedPasses).toEqual([]);
  });

  it("the agent cannot pass the selected node by writing passes = true (Done / Fail keeps it open)", () => {
    const result = applyStateUpdates(smallTree(), smallTree({ passes: true }), "a", { status: "done", guard: "fail" });
    expect(find(result.tree, "a")).toMatchObject({ passes: false, attempts: 2 });
  });
});

describe("seed 002 derived internal passes: a parent passes iff all its children pass, bottom-up", () => {
  /** root → [p → [x ✓, y], q ✓]. */
  function nested(y: Partial<TaskNode> = {}, q: Partial<TaskNode> = { passes: true }): TaskTree {
    return tree(
      node("root", {
        children: [
          node("p", { order: 0, children: [node("x", { order: 0, passes: true }), node("y", { order: 1, ...y })] }),
          node("q", { order: 1, ...q }),
        ],
      }),
    );
  }

  it("passing the last open leaf passes its parent and the root, reported top-down", () => {
    const result = applyStateUpdates(nested(), nested(), "y", { status: "done", guard: "pass" });
    expect(find(result.tree, "y").passes).toBe(true);
    expect(find(result.tree, "p").passes).toBe(true);
    expect(result.tree.root.passes).toBe(true);
    expect(result.derivedPasses).toEqual(["root", "p"]);
  });

  it("a parent whose children all pass passes even when another branch stays open; only it is reported", () => {
    const prev = nested({}, { passes: false });
    const result = applyStateUpdates(prev, nested({}, { passes: false }), "y", { status: "done", guard: "pass" });
    expect(find(result.tree, "p").passes).toBe(true);
    expect(result.tree.root.passes).toBe(false);
    expect(result.derivedPasses).toEqual(["p"]);
  });

  it("a failed leaf keeps its parent open", () => {
    const result = applyStateUpdates(nested(), nested(), "y", { status: "done", guard: "fail" });
    expect(find(result.tree, "p").passes).toBe(false);
    expect(result.tree.root.passes).toBe(false);
    expect(result.derivedPasses).toEqual([]);
  });

  it("deriveInternalPasses works in place: parents with an open child become false and are not reported, leaves keep their value", () => {
    const t = tree(
      node("root", {
        passes: true,
        children: [
          node("p", { passes: true, children: [node("x", { passes: true }), node("y", { order: 1, passes: false })] }),
          node("q", { order: 1, passes: false, children: [node("z", { passes: true })] }),
          node("leaf", { order: 2, passes: true }),
        ],
      }),
    );
    expect(deriveInternalPasses(t)).toEqual(["q"]);
    expect(find(t, "p").passes).toBe(false);
    expect(find(t, "q").passes).toBe(true);
    expect(find(t, "root").passes).toBe(false);
    expect(find(t, "x").passes).toBe(true);
    expect(find(t, "y").passes).toBe(false);
    expect(find(t, "leaf").passes).toBe(true);
  });
});

describe("seed 002 flow: apply_state_updates over a fresh parse, sorting children", () => {
  it("does not touch prev; the fresh parse it is given is updated in place and returned in canonical form", () => {
    const prev = smallTree();
    const next = smallTree({ children: [node("a2", { order: 1, passes: true }), node("a1", { order: 0, attempts: 5, max_attempts: 5 })] });
    const prevBefore = structuredClone(prev);
    const result = applyStateUpdates(prev, next, "a", { status: "decomposed", guard: "skipped" });
    expect(prev).toEqual(prevBefore);
    expect(result.tree).toBe(next);
    expect(find(result.tree, "a").children.map((child) => child.id)).toEqual(["a1", "a2"]);
    expect(find(result.tree, "a1")).toMatchObject({ passes: false, attempts: 0 });
    expect(serializeTree(result.tree)).toBe(`${JSON.stringify(result.tree, null, 2)}\n`);
  });

  it("a tree whose keys are out of order is returned with every node's keys in schema order", () => {
    const scrambled = JSON.parse(
      '{"root":{"children":[],"max_attempts":3,"attempts":0,"passes":false,"acceptance":[],"goal":"g","title":"t","order":0,"id":"root"},"version":1}',
    ) as TaskTree;
    const result = applyStateUpdates(smallTree(), scrambled, undefined, undefined);
    expect(Object.keys(result.tree)).toEqual(["version", "root"]);
    expect(Object.keys(result.tree.root)).toEqual(["id", "order", "title", "goal", "acceptance", "passes", "attempts", "max_attempts", "children"]);
  });

  it("sorts every children array by (order, id) for deterministic output", () => {
    const unsorted = tree(node("root", { children: [node("c", { order: 1 }), node("b", { order: 0 }), node("a", { order: 1 })] }));
    const result = applyStateUpdates(unsorted, structuredClone(unsorted), undefined, undefined);
    expect(result.tree.root.children.map((child) => child.id)).toEqual(["b", "a", "c"]);
  });

  it("a selected id that the agent's tree no longer holds selects nothing and changes nothing", () => {
    const result = applyStateUpdates(smallTree(), smallTree(), "gone", { status: "done", guard: "pass" });
    expect(result.selected).toBeUndefined();
    expect(find(result.tree, "a")).toMatchObject({ passes: false, attempts: 1 });
  });
});

describe("CONTRACT §7 judging the agent's status", () => {
  const leafAfter = (childIds: string[]) => node("a", { children: childIds.map((id, i) => node(id, { order: i })) });

  it("decomposed without new children under the selected leaf is a violation that counts as retry (guard skipped)", () => {
    const verdict = judgeAgentStatus({
      selectedId: "a",
      selectedAfter: leafAfter([]),
      previousChildIds: new Set(),
      status: "decomposed",
      kind: "decompose",
    });
    expect(verdict.status).toBe("retry");
    expect(verdict.runGuard).toBe(false);
    expect(verdict.violation).toContain('"decomposed"');
    expect(verdict.violation).toContain('"a"');
    expect(verdict.note).toBeUndefined();
  });

  it("decomposed that keeps only the children the node already had is a violation too", () => {
    const verdict = judgeAgentStatus({
      selectedId: "a",
      selectedAfter: leafAfter(["x"]),
      previousChildIds: new Set(["x"]),
      status: "decomposed",
      kind: "decompose",
    });
    expect(verdict).toMatchObject({ status: "retry", runGuard: false });
    expect(verdict.violation).toMatch(/added no children/);
  });

  it.each(["done", "retry"] as const)("%s that added children to the selected leaf is a violation that counts as retry (guard skipped)", (status) => {
    const verdict = judgeAgentStatus({
      selectedId: "a",
      selectedAfter: leafAfter(["a1", "a2"]),
      previousChildIds: new Set(),
      status,
      kind: "execute",
    });
    expect(verdict.status).toBe("retry");
    expect(verdict.runGuard).toBe(false);
    expect(verdict.violation).toContain(`"${status}"`);
    expect(verdict.violation).toContain("2 child node(s)");
  });

  it("done on a DECOMPOSE iteration: guard skipped, nothing changes, and the agent is told why (a note, not a violation)", () => {
    const verdict = judgeAgentStatus({
      selectedId: "a",
      selectedAfter: leafAfter([]),
      previousChildIds: new Set(),
      status: "done",
      kind: "decompose",
    });
    expect(verdict.status).toBe("done");
    expect(verdict.runGuard).toBe(false);
    expect(verdict.violation).toBeUndefined();
    expect(verdict.note).toContain("outside .runner/");
    expect(verdict.note).toContain("green guards");
    // Done with the guard skipped is the Done / Skipped row: nothing changes.
    const result = applyStateUpdates(smallTree(), smallTree(), "a", { status: verdict.status, guard: "skipped" });
    expect(find(result.tree, "a")).toMatchObject({ passes: false, attempts: 1 });
  });

  it("a violation applied as retry costs one attempt", () => {
    const verdict = judgeAgentStatus({
      selectedId: "a",
      selectedAfter: leafAfter([]),
      previousChildIds: new Set(),
      status: "decomposed",
      kind: "decompose",
    });
    const result = applyStateUpdates(smallTree(), smallTree(), "a", { status: verdict.status, guard: "skipped" });
    expect(find(result.tree, "a").attempts).toBe(2);
  });

  it.each([
    {
      case: "done on an EXECUTE iteration runs the guard",
      status: "done",
      kind: "execute",
      children: [],
      expected: { status: "done", runGuard: true },
    },
    {
      case: "retry on an EXECUTE iteration skips the guard",
      status: "retry",
      kind: "execute",
      children: [],
      expected: { status: "retry", runGuard: false },
    },
    {
      case: "retry on a DECOMPOSE iteration skips the guard",
      status: "retry",
      kind: "decompose",
      children: [],
      expected: { status: "retry", runGuard: false },
    },
    {
      case: "decomposed with new children skips the guard",
      status: "decomposed",
      kind: "decompose",
      children: ["a1"],
      expected: { status: "decomposed", runGuard: false },
    },
    {
      case: "decomposed with new children and project changes still skips the guard",
      status: "decomposed",
      kind: "execute",
      children: ["a1"],
      expected: { status: "decomposed", runGuard: false },
    },
  ] as const)("ordinary: $case", ({ status, kind, children, expected }) => {
    const verdict = judgeAgentStatus({ selectedId: "a", selectedAfter: leafAfter([...children]), previousChildIds: new Set(), status, kind });
    expect(verdict).toEqual(expected);
  });
});
