// The task tree model: sibling order, traversal and lookup. Iterative everywhere, so that deep and
// large trees cost no stack and stay linear.
import type { TaskNode, TaskTree } from "../../schemas/types.generated.js";

export type { TaskNode, TaskTree };

/** A new goal's tree: one open root leaf (titled by the goal's first line unless a title is given). */
export function goalTree(goal: string, maxAttempts: number, title?: string): TaskTree {
  const text = goal.trim();
  return {
    version: 1,
    root: {
      id: "root",
      order: 0,
      title: title ?? (text.split("\n")[0]!.slice(0, 120) || "Project goal"),
      goal: text,
      acceptance: [],
      passes: false,
      attempts: 0,
      max_attempts: maxAttempts,
      children: [],
    },
  };
}

/** .runner/GOAL.md for a goal. */
export function goalMarkdown(goal: string): string {
  return `# Goal\n\n${goal.trim()}\n`;
}

/** Siblings sort by (order ASC, id ASC); ids compare by UTF-16 code units, as `<` does. */
export function compareSiblings(a: TaskNode, b: TaskNode): number {
  if (a.order !== b.order) return a.order < b.order ? -1 : 1;
  if (a.id === b.id) return 0;
  return a.id < b.id ? -1 : 1;
}

/** The children of a node in sibling order (a new array if they are stored out of order; the node is not touched). */
export function orderedChildren(node: TaskNode): TaskNode[] {
  const children = node.children;
  return inSiblingOrder(children) ? children : [...children].sort(compareSiblings);
}

/** Whether siblings are stored in sibling order already. */
export function inSiblingOrder(children: readonly TaskNode[]): boolean {
  for (let i = 1; i < children.length; i++) {
    if (compareSiblings(children[i - 1]!, children[i]!) > 0) return false;
  }
  return true;
}

export function isLeaf(node: TaskNode): boolean {
  return node.children.length === 0;
}

/** A node with where it sits: its parent (undefined for the root) and its JSON path. */
export interface Located {
  node: TaskNode;
  parent: TaskNode | undefined;
  jsonPath: string;
  depth: number;
}

/**
 * Visits every node in pre-order, children in the order they are stored (call after sorting, or
 * when order does not matter). JSON paths follow the stored positions.
 */
export function* walkTree(tree: TaskTree): Generator<Located> {
  const stack: Located[] = [{ node: tree.root, parent: undefined, jsonPath: "$.root", depth: 0 }];
  while (stack.length > 0) {
    const current = stack.pop()!;
    yield current;
    const children = current.node.children;
    for (let i = children.length - 1; i >= 0; i--) {
      stack.push({ node: children[i]!, parent: current.node, jsonPath: `${current.jsonPath}.children[${i}]`, depth: current.depth + 1 });
    }
  }
}

/** Every node by id (the tree must have unique ids). */
export function indexById(tree: TaskTree): Map<string, Located> {
  const index = new Map<string, Located>();
  for (const located of walkTree(tree)) index.set(located.node.id, located);
  return index;
}

/** Every node by id, without locations (the cheap index; on a repeated id the last in pre-order wins, as `indexById`). */
export function nodesById(tree: TaskTree): Map<string, TaskNode> {
  const nodes = new Map<string, TaskNode>();
  forEachNode(tree, (node) => {
    nodes.set(node.id, node);
  });
  return nodes;
}

/** Every node's id with its parent's id (undefined for the root). */
export function parentIds(tree: TaskTree): Map<string, string | undefined> {
  const parents = new Map<string, string | undefined>();
  forEachNode(tree, (node, parent) => {
    parents.set(node.id, parent?.id);
  });
  return parents;
}

/** The number of nodes. */
export function countNodes(tree: TaskTree): number {
  let count = 0;
  forEachNode(tree, () => {
    count++;
  });
  return count;
}

/**
 * Visits every node in pre-order, children in the order they are stored, with its parent
 * (undefined for the root); stops as soon as `visit` returns false. No JSON paths and no objects
 * per node: the cheap walk for everything that does not report a location.
 */
export function forEachNode(tree: TaskTree, visit: (node: TaskNode, parent: TaskNode | undefined) => boolean | void): void {
  const nodes: TaskNode[] = [tree.root];
  const parents: (TaskNode | undefined)[] = [undefined];
  while (nodes.length > 0) {
    const node = nodes.pop()!;
    if (visit(node, parents.pop()) === false) return;
    const children = node.children;
    for (let i = children.length - 1; i >= 0; i--) {
      nodes.push(children[i]!);
      parents.push(node);
    }
  }
}

/** The first node in pre-order (stored child order) with this id, or undefined. */
export function findNode(tree: TaskTree, id: string): TaskNode | undefined {
  let found: TaskNode | undefined;
  forEachNode(tree, (node) => {
    if (node.id !== id) return true;
    found = node;
    return false;
  });
  return found;
}

/**
 * The JSON paths (stored positions) of the nodes `wanted` picks, in pre-order, in one walk that
 * builds a path string only for those nodes. For problem messages: a tree with no problem never
 * pays for paths.
 */
export function jsonPathsOf(tree: TaskTree, wanted: (node: TaskNode) => boolean): { node: TaskNode; jsonPath: string }[] {
  const found: { node: TaskNode; jsonPath: string }[] = [];
  // Every visited node gets an index; its parent's index and its slot among the parent's children
  // give its path when it is wanted.
  const parentOf: number[] = [];
  const slotOf: number[] = [];
  const nodes: TaskNode[] = [tree.root];
  const indices: number[] = [];
  parentOf.push(-1);
  slotOf.push(0);
  indices.push(0);
  while (nodes.length > 0) {
    const node = nodes.pop()!;
    const index = indices.pop()!;
    if (wanted(node)) found.push({ node, jsonPath: pathOfIndex(index, parentOf, slotOf) });
    const children = node.children;
    for (let i = children.length - 1; i >= 0; i--) {
      nodes.push(children[i]!);
      indices.push(parentOf.length);
      parentOf.push(index);
      slotOf.push(i);
    }
  }
  return found;
}

function pathOfIndex(index: number, parentOf: readonly number[], slotOf: readonly number[]): string {
  const slots: number[] = [];
  for (let at = index; parentOf[at]! >= 0; at = parentOf[at]!) slots.push(slotOf[at]!);
  let path = "$.root";
  for (let i = slots.length - 1; i >= 0; i--) path += `.children[${slots[i]}]`;
  return path;
}

/** A deep copy of the tree, every children array sorted by (order, id), keys in canonical order. */
export function sortedCopy(tree: TaskTree): TaskTree {
  return { version: tree.version, root: sortedNodeCopy(tree.root) };
}

/** The node's fields with its keys in canonical order, holding the `acceptance` and `children` given. */
export function withKeysInOrder(node: TaskNode, acceptance: string[] = node.acceptance, children: TaskNode[] = node.children): TaskNode {
  return {
    id: node.id,
    order: node.order,
    title: node.title,
    goal: node.goal,
    acceptance,
    passes: node.passes,
    attempts: node.attempts,
    max_attempts: node.max_attempts,
    children,
  };
}

/** A deep copy of one node and its subtree, sorted and with keys in canonical order, as `sortedCopy`. */
export function sortedNodeCopy(root: TaskNode): TaskNode {
  // Pre-order with an array stack: each copy's children are filled in sorted order as it is reached.
  const top = withKeysInOrder(root, [...root.acceptance], []);
  const originals: TaskNode[] = [root];
  const copies: TaskNode[] = [top];
  while (originals.length > 0) {
    const original = originals.pop()!;
    const copy = copies.pop()!;
    const children = orderedChildren(original);
    const out = copy.children;
    for (let i = 0; i < children.length; i++) {
      const child = withKeysInOrder(children[i]!, [...children[i]!.acceptance], []);
      out.push(child);
      originals.push(children[i]!);
      copies.push(child);
    }
  }
  return top;
}

const TREE_KEYS = ["version", "root"] as const;

/** The keys of a node in canonical (schema) order. */
export const NODE_KEYS = ["id", "order", "title", "goal", "acceptance", "passes", "attempts", "max_attempts", "children"] as const;

/** Whether a tree's keys are exactly `version` then `root`. */
export function hasCanonicalTreeKeys(tree: object): boolean {
  return hasKeysInOrder(tree, TREE_KEYS);
}

/** Whether a node's own keys are exactly NODE_KEYS, in that order. */
export function hasCanonicalKeys(node: object): boolean {
  return hasKeysInOrder(node, NODE_KEYS);
}

function hasKeysInOrder(value: object, keys: readonly string[]): boolean {
  let i = 0;
  for (const key in value) {
    if (key !== keys[i]) return false;
    i++;
  }
  return i === keys.length;
}

/** Whether every child passes (a parent's passes, as the runner derives it). */
export function allChildrenPass(node: TaskNode): boolean {
  const children = node.children;
  for (let i = 0; i < children.length; i++) if (!children[i]!.passes) return false;
  return true;
}

/**
 * Whether the tree is already in the form `sortedCopy` gives: `version` then `root`, every node's
 * keys exactly in canonical order, `acceptance` and `children` arrays, every children array sorted.
 * A tree in this form serializes to the same bytes as its sorted copy.
 */
export function isInCanonicalForm(tree: TaskTree): boolean {
  if (!hasCanonicalTreeKeys(tree) || tree.root === null || typeof tree.root !== "object") return false;
  const stack: TaskNode[] = [tree.root];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (!hasCanonicalKeys(node) || !Array.isArray(node.acceptance)) return false;
    const children = node.children;
    if (!Array.isArray(children)) return false;
    for (let c = 0; c < children.length; c++) {
      const child = children[c];
      if (child === null || typeof child !== "object" || Array.isArray(child)) return false;
      stack.push(child);
    }
    if (!inSiblingOrder(children)) return false;
  }
  return true;
}

/**
 * Whether two trees hold the same nodes with the same fields, children in the same order (what
 * their canonical files would show, without writing them). Used to tell an iteration that changed
 * nothing in the tree — no runner-owned field, no open node — from one that made progress.
 */
export function sameTree(a: TaskTree, b: TaskTree): boolean {
  if (a.version !== b.version) return false;
  const left: TaskNode[] = [a.root];
  const right: TaskNode[] = [b.root];
  while (left.length > 0) {
    const x = left.pop()!;
    const y = right.pop()!;
    if (x === y) continue;
    if (
      x.id !== y.id ||
      x.order !== y.order ||
      x.title !== y.title ||
      x.goal !== y.goal ||
      x.passes !== y.passes ||
      x.attempts !== y.attempts ||
      x.max_attempts !== y.max_attempts ||
      x.acceptance.length !== y.acceptance.length ||
      x.children.length !== y.children.length ||
      x.acceptance.some((line, i) => line !== y.acceptance[i])
    ) {
      return false;
    }
    left.push(...x.children);
    right.push(...y.children);
  }
  return true;
}
