// Runner-owned state transitions (seed 002): reset runner-owned fields from the previous tree,
// apply the transition table to the selected node, saturate attempts at max_attempts, derive
// internal passes bottom-up, sort children. One entry point updates a tree: `applyStateUpdates`.
import {
  allChildrenPass,
  compareSiblings,
  findNode,
  forEachNode,
  sameTree,
  hasCanonicalKeys,
  hasCanonicalTreeKeys,
  inSiblingOrder,
  nodesById,
  orderedChildren,
  sortedCopy,
  withKeysInOrder,
  type TaskNode,
  type TaskTree,
} from "./tree.js";

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

/** Seed 002's reset on its own: a sorted copy of `next` with passes and attempts taken from `previous` (new nodes: false / 0). */
export function resetRunnerOwnedFields(previous: TaskTree, next: TaskTree): TaskTree {
  return resetInPlace(previous, sortedCopy(next)).tree;
}

/**
 * The reset, done on `next` itself in one walk beside `previous`: children sorted in place where
 * they are out of order, any node whose keys are not in canonical order replaced by one that has
 * them (so the result serializes as `sortedCopy` would). A node takes its runner-owned fields from
 * the node of `previous` at the same place when the ids match, else from the node of `previous`
 * with its id (an index built only if some node moved); new nodes get false / 0. Returns the tree
 * (a new top object only if its keys were out of order) and every node in pre-order.
 */
function resetInPlace(previous: TaskTree, next: TaskTree): { tree: TaskTree; order: TaskNode[] } {
  let index: Map<string, TaskNode> | undefined;
  const byId = (id: string): TaskNode | undefined => (index ??= nodesById(previous)).get(id);
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
    // max_attempts of a node that was there is a person's to change (`runner unstick`), never the agent's.
    if (before) node.max_attempts = before.max_attempts;
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

/** Seed 002's derived internal passes on their own, in place: parents pass iff all children pass. Returns the parents that became passed. */
export function deriveInternalPasses(tree: TaskTree): string[] {
  const order: TaskNode[] = [];
  forEachNode(tree, (node) => {
    order.push(node);
  });
  return derivePasses(order);
}

/**
 * Derived internal passes, bottom-up over the nodes of a tree in pre-order: a parent passes iff all
 * its children pass; leaves keep their value. Returns the parents that became passed, root first.
 */
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

/**
 * Whether an update changed the task tree (what `runner run` counts as progress): the selected
 * node's runner-owned fields or children at once, else any difference at all (`sameTree`).
 */
export function madeProgress(previous: TaskTree, updated: StateUpdateResult, selectedId: string | undefined): boolean {
  if (updated.derivedPasses.length > 0) return true;
  const before = selectedId === undefined ? undefined : findNode(previous, selectedId);
  const after = updated.selected;
  if (before && after && (before.passes !== after.passes || before.attempts !== after.attempts || before.children.length !== after.children.length))
    return true;
  return !sameTree(previous, updated.tree);
}

/**
 * `apply_state_updates()` of seed 002, the one entry point that updates a tree: reset runner-owned
 * fields from `previous`, apply the transition table to the selected node (`outcome` undefined =
 * runner error recovery: no transition), derive internal passes, sort children.
 *
 * `next` is a fresh parse of the agent's tree file that belongs to the caller alone (the step parses
 * the file anew every time): it is updated in place, not copied, and returned as `tree` in
 * canonical form (a new top object only if its keys were out of order). `previous` is not touched.
 */
export function applyStateUpdates(
  previous: TaskTree,
  next: TaskTree,
  selectedId: string | undefined,
  outcome: { status: AgentStatus; guard: GuardOutcome } | undefined,
  alsoPassed: readonly string[] = [],
): StateUpdateResult {
  const { tree, order } = resetInPlace(previous, next);
  const selected = selectedId === undefined ? undefined : order.find((node) => node.id === selectedId);
  if (selected && outcome) applyTransition(selected, transitionFor(outcome.status, outcome.guard));
  // A re-check's batch (src/core/plan/plan-finished.ts): open leaves the same green guard passes.
  if (alsoPassed.length > 0) {
    const also = new Set(alsoPassed);
    for (const node of order) if (also.has(node.id) && node.children.length === 0) node.passes = true;
  }
  const derivedPasses = derivePasses(order);
  return { tree, selected, derivedPasses };
}
