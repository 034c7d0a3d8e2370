// Runner-owned state transitions (seed 002): reset runner-owned fields from the previous tree,
// apply the transition table to the selected node, saturate attempts at max_attempts, derive
// internal passes bottom-up, sort children. Inputs are never mutated.
import type { IterationKind } from "./classify.js";
import { sortedCopy, walkTree, type TaskNode, type TaskTree } from "./tree.js";

export type AgentStatus = "done" | "retry" | "decomposed";
export type GuardOutcome = "pass" | "fail" | "skipped";

/** What the transition table does to the selected node. */
export interface Transition {
  passes: "set-true" | "unchanged";
  attempts: "increment" | "unchanged";
}

/** Seed 002's transition table, row by row. */
export function transitionFor(status: AgentStatus, guard: GuardOutcome): Transition {
  switch (status) {
    case "done":
      if (guard === "pass") return { passes: "set-true", attempts: "unchanged" };
      if (guard === "fail") return { passes: "unchanged", attempts: "increment" };
      return { passes: "unchanged", attempts: "unchanged" };
    case "retry":
      return { passes: "unchanged", attempts: "increment" };
    case "decomposed":
      return { passes: "unchanged", attempts: "unchanged" };
  }
}

/** The kinds of runner-internal failure of seed 002's recovery table. */
export type RunnerErrorKind = "executor_timeout" | "output_parse_error" | "guard_error" | "other";

/** Seed 002's recovery table: every runner error is a retry with the guard skipped and attempts unchanged. */
export function recoveryFor(_kind: RunnerErrorKind): { status: "retry"; guard: "skipped"; attempts: "unchanged" } {
  return { status: "retry", guard: "skipped", attempts: "unchanged" };
}

/** Overwrites `passes` and `attempts` of every node of `next` from `previous`; new nodes get false / 0. */
export function resetRunnerOwnedFields(previous: TaskTree, next: TaskTree): TaskTree {
  const owned = new Map<string, { passes: boolean; attempts: number }>();
  for (const { node } of walkTree(previous)) owned.set(node.id, { passes: node.passes, attempts: node.attempts });
  const copy = sortedCopy(next);
  for (const { node } of walkTree(copy)) {
    const before = owned.get(node.id);
    node.passes = before?.passes ?? false;
    // Never above max_attempts, even if the agent lowered it (checkAgentTree refuses that earlier).
    node.attempts = Math.min(before?.attempts ?? 0, node.max_attempts);
  }
  return copy;
}

/** Applies one transition to a node in place; attempts saturate at max_attempts. */
function applyTransition(node: TaskNode, transition: Transition): void {
  if (transition.passes === "set-true") node.passes = true;
  if (transition.attempts === "increment" && node.attempts < node.max_attempts) node.attempts += 1;
}

/**
 * Parents pass iff all their children pass; leaves keep their value. Bottom-up, in place.
 * Returns the ids of parents that became passed (for the iteration's summary).
 */
export function deriveInternalPasses(tree: TaskTree): string[] {
  const order: TaskNode[] = [];
  for (const { node } of walkTree(tree)) order.push(node);
  const newlyPassed: string[] = [];
  for (let i = order.length - 1; i >= 0; i--) {
    const node = order[i]!;
    if (node.children.length === 0) continue;
    const passes = node.children.every((child) => child.passes);
    if (passes && !node.passes) newlyPassed.push(node.id);
    node.passes = passes;
  }
  return newlyPassed.reverse();
}

export interface StateUpdateResult {
  tree: TaskTree;
  /** The selected node after the update (undefined if the agent's tree no longer holds it). */
  selected: TaskNode | undefined;
  /** Parents whose passes became true by derivation. */
  derivedPasses: string[];
}

/** `apply_state_updates()` of seed 002. `status`/`guard` undefined = recovery (no transition). */
export function applyStateUpdates(
  previous: TaskTree,
  next: TaskTree,
  selectedId: string | undefined,
  outcome: { status: AgentStatus; guard: GuardOutcome } | undefined,
): StateUpdateResult {
  const tree = resetRunnerOwnedFields(previous, next);
  let selected: TaskNode | undefined;
  if (selectedId !== undefined) {
    for (const { node } of walkTree(tree)) {
      if (node.id === selectedId) {
        selected = node;
        break;
      }
    }
  }
  if (selected && outcome) applyTransition(selected, transitionFor(outcome.status, outcome.guard));
  const derivedPasses = deriveInternalPasses(tree);
  return { tree, selected, derivedPasses };
}

/** What the runner makes of the agent's declared status (CONTRACT §7). */
export interface AgentVerdict {
  /** The status the transition table is applied with. */
  status: AgentStatus;
  /** Whether the guard stage runs (done on an EXECUTE iteration with no violation). */
  runGuard: boolean;
  /** A broken agent contract; counts as retry and reaches the next iteration in failure.md. */
  violation?: string;
  /** Not a violation, but the agent must hear it (done on a DECOMPOSE iteration). */
  note?: string;
}

export function judgeAgentStatus(input: {
  selectedId: string;
  selectedAfter: TaskNode;
  previousChildIds: ReadonlySet<string>;
  status: AgentStatus;
  kind: IterationKind;
}): AgentVerdict {
  const { selectedId, selectedAfter, previousChildIds, status, kind } = input;
  const added = selectedAfter.children.filter((child) => !previousChildIds.has(child.id)).length;
  const name = JSON.stringify(selectedId);
  if (status === "decomposed" && added === 0) {
    return {
      status: "retry",
      runGuard: false,
      violation: `The agent said "decomposed" but added no children under ${name}. To decompose, add child nodes to it in .runner/state/tree.json; otherwise answer "done" or "retry".`,
    };
  }
  if (status !== "decomposed" && added > 0) {
    return {
      status: "retry",
      runGuard: false,
      violation: `The agent said "${status}" but added ${added} child node(s) under ${name}. Answer "decomposed" when you split a leaf into children.`,
    };
  }
  if (status === "done" && kind === "decompose") {
    return {
      status: "done",
      runGuard: false,
      note: `The agent said "done" but changed nothing outside .runner/, so the guard did not run and ${name} did not pass. A pass needs a change outside .runner/ and green guards.`,
    };
  }
  return { status, runGuard: status === "done" };
}
