// Runner-owned state transitions (seed 002): reset runner-owned fields from the previous tree,
// apply the transition table to the selected node, saturate attempts at max_attempts, derive
// internal passes bottom-up, sort children. Inputs are never mutated, except by the in-place variant
// the step uses on its own fresh parse of the agent's tree.
import type { IterationKind } from "./classify.js";
import { allChildrenPass, compareSiblings, forEachNode, hasCanonicalKeys, hasCanonicalTreeKeys, inSiblingOrder, orderedChildren, sortedCopy, withKeysInOrder, type TaskNode, type TaskTree } from "./tree.js";

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
  return resetInPlace(previous, sortedCopy(next)).tree;
}

/**
 * The reset, done on `next` itself: one walk over `next` beside `previous`, children sorted in
 * place where they are out of order and any node whose keys are not in canonical order replaced by
 * one that has them (so the result is in the form `sortedCopy` gives). A node takes its runner-owned
 * fields from the node of `previous` at the same place when the ids match, else from the node of
 * `previous` with its id, looked up in an index built only if some node is not where it was.
 * Returns the tree (a new top object only if its keys were out of order) and every node in pre-order.
 */
function resetInPlace(previous: TaskTree, next: TaskTree): { tree: TaskTree; order: TaskNode[] } {
  let index: Map<string, TaskNode> | undefined;
  const byId = (id: string): TaskNode | undefined => {
    if (!index) {
      const built = new Map<string, TaskNode>();
      forEachNode(previous, (node) => {
        built.set(node.id, node);
      });
      index = built;
    }
    return index.get(id);
  };
  const tree: TaskTree = hasCanonicalTreeKeys(next) ? next : { version: next.version, root: next.root };
  if (!hasCanonicalKeys(tree.root)) tree.root = withKeysInOrder(tree.root);
  const order: TaskNode[] = [];
  const nodes: TaskNode[] = [tree.root];
  const candidates: (TaskNode | undefined)[] = [previous.root];
  while (nodes.length > 0) {
    const node = nodes.pop()!;
    const candidate = candidates.pop();
    order.push(node);
    const before = candidate !== undefined && candidate.id === node.id ? candidate : byId(node.id);
    node.passes = before?.passes ?? false;
    // Never above max_attempts, even if the agent lowered it (checkAgentTree refuses that earlier).
    node.attempts = Math.min(before?.attempts ?? 0, node.max_attempts);
    const children = node.children;
    if (children.length === 0) continue;
    if (!inSiblingOrder(children)) children.sort(compareSiblings);
    const beforeChildren = before ? orderedChildren(before) : undefined;
    for (let i = children.length - 1; i >= 0; i--) {
      let child = children[i]!;
      if (!hasCanonicalKeys(child)) {
        child = withKeysInOrder(child);
        children[i] = child;
      }
      nodes.push(child);
      candidates.push(beforeChildren?.[i]);
    }
  }
  return { tree, order };
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
  forEachNode(tree, (node) => {
    order.push(node);
  });
  return derivePasses(order);
}

/** deriveInternalPasses over the nodes of a tree in pre-order. */
function derivePasses(order: readonly TaskNode[]): string[] {
  const newlyPassed: string[] = [];
  for (let i = order.length - 1; i >= 0; i--) {
    const node = order[i]!;
    if (node.children.length === 0) continue;
    const passes = allChildrenPass(node);
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

/** `apply_state_updates()` of seed 002. `status`/`guard` undefined = recovery (no transition). Inputs are not touched. */
export function applyStateUpdates(
  previous: TaskTree,
  next: TaskTree,
  selectedId: string | undefined,
  outcome: { status: AgentStatus; guard: GuardOutcome } | undefined,
): StateUpdateResult {
  // A sorted copy (keys in canonical order), then the update in place on the copy.
  return applyStateUpdatesInPlace(previous, sortedCopy(next), selectedId, outcome);
}

/**
 * `applyStateUpdates` done on `next` itself, for a tree that belongs to the caller alone (the
 * step's own fresh parse of the agent's file): no copy, and one walk beside `previous`. `next` is
 * changed (and must not be used afterwards); the result's `tree` is the same tree, in the form
 * `sortedCopy` would give, and serializes to the same bytes as `applyStateUpdates`' result.
 */
export function applyStateUpdatesInPlace(
  previous: TaskTree,
  next: TaskTree,
  selectedId: string | undefined,
  outcome: { status: AgentStatus; guard: GuardOutcome } | undefined,
): StateUpdateResult {
  const { tree, order } = resetInPlace(previous, next);
  const selected = selectedId === undefined ? undefined : order.find((node) => node.id === selectedId);
  if (selected && outcome) applyTransition(selected, transitionFor(outcome.status, outcome.guard));
  const derivedPasses = derivePasses(order);
  return { tree, selected, derivedPasses };
}

/**
 * `applyStateUpdates(previous, previous, …)` for the usual EXECUTE iteration, where the agent left the
 * tree file as it was: only the nodes from the root down to the selected one are copied, and every
 * other subtree is shared with `previous`, which is not touched (the result must not be changed in
 * place either). On a large tree that saves a copy of every node. It applies only when `previous`
 * is settled — in canonical form, attempts within max_attempts, every parent's passes derived from
 * its children — so that the full update would change nothing off that path; otherwise, or when
 * the selected node is not in the tree, it returns undefined and the caller uses `applyStateUpdates`.
 */
export function applyStateUpdatesShared(
  previous: TaskTree,
  selectedId: string,
  outcome: { status: AgentStatus; guard: GuardOutcome } | undefined,
): StateUpdateResult | undefined {
  if (!hasCanonicalTreeKeys(previous)) return undefined;
  // One walk: the settled check, and the path from the root to the selected node.
  const path: TaskNode[] = [];
  let found: TaskNode[] | undefined;
  const nodes: TaskNode[] = [previous.root];
  const depths: number[] = [0];
  while (nodes.length > 0) {
    const node = nodes.pop()!;
    const depth = depths.pop()!;
    path.length = depth;
    path.push(node);
    if (!hasCanonicalKeys(node) || node.attempts > node.max_attempts) return undefined;
    const children = node.children;
    if (children.length > 0 && (node.passes !== allChildrenPass(node) || !inSiblingOrder(children))) return undefined;
    if (node.id === selectedId) {
      if (found) return undefined; // ids repeat: not a valid tree
      found = [...path];
    }
    for (let i = children.length - 1; i >= 0; i--) {
      nodes.push(children[i]!);
      depths.push(depth + 1);
    }
  }
  if (!found) return undefined;

  // Copy the path bottom-up: the transition on the selected node, then each node's passes derived
  // again (as derivePasses does, a parent newly passed is reported, root first).
  const newlyPassed: string[] = [];
  let below: { original: TaskNode; copy: TaskNode } | undefined;
  let selected: TaskNode | undefined;
  for (let i = found.length - 1; i >= 0; i--) {
    const original = found[i]!;
    const children = below ? original.children.map((child) => (child === below!.original ? below!.copy : child)) : [...original.children];
    const copy: TaskNode = { ...original, children };
    if (!below) {
      selected = copy;
      if (outcome) applyTransition(copy, transitionFor(outcome.status, outcome.guard));
    }
    if (children.length > 0) {
      const passes = allChildrenPass(copy);
      if (passes && !copy.passes) newlyPassed.push(copy.id);
      copy.passes = passes;
    }
    below = { original, copy };
  }
  return { tree: { version: previous.version, root: below!.copy }, selected, derivedPasses: newlyPassed.reverse() };
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
