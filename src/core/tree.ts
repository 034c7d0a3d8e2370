// The task tree model: sibling order, traversal and lookup. Iterative everywhere, so that deep and
// large trees cost no stack and stay linear.
import type { TaskNode, TaskTree } from "../schemas/types.generated.js";

export type { TaskNode, TaskTree };

/** Siblings sort by (order ASC, id ASC); ids compare by UTF-16 code units, as `<` does. */
export function compareSiblings(a: TaskNode, b: TaskNode): number {
  if (a.order !== b.order) return a.order < b.order ? -1 : 1;
  if (a.id === b.id) return 0;
  return a.id < b.id ? -1 : 1;
}

/** The children of a node in sibling order (a new array; the node is not touched). */
export function orderedChildren(node: TaskNode): TaskNode[] {
  const children = node.children;
  for (let i = 1; i < children.length; i++) {
    if (compareSiblings(children[i - 1]!, children[i]!) > 0) return [...children].sort(compareSiblings);
  }
  return children;
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

/** Every node's id with its parent's id (undefined for the root). */
export function parentIds(tree: TaskTree): Map<string, string | undefined> {
  const parents = new Map<string, string | undefined>();
  for (const { node, parent } of walkTree(tree)) parents.set(node.id, parent?.id);
  return parents;
}

/** The number of nodes. */
export function countNodes(tree: TaskTree): number {
  let count = 0;
  for (const _ of walkTree(tree)) count++;
  return count;
}

/** A deep copy of the tree, every children array sorted by (order, id), keys in canonical order. */
export function sortedCopy(tree: TaskTree): TaskTree {
  return { version: tree.version, root: copyNode(tree.root) };
}

function copyNode(root: TaskNode): TaskNode {
  // Post-order without recursion: copy each node once its children are copied.
  const copies = new Map<TaskNode, TaskNode>();
  const stack: { node: TaskNode; expanded: boolean }[] = [{ node: root, expanded: false }];
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!;
    if (!top.expanded) {
      top.expanded = true;
      for (const child of top.node.children) stack.push({ node: child, expanded: false });
      continue;
    }
    stack.pop();
    const node = top.node;
    copies.set(node, {
      id: node.id,
      order: node.order,
      title: node.title,
      goal: node.goal,
      acceptance: [...node.acceptance],
      passes: node.passes,
      attempts: node.attempts,
      max_attempts: node.max_attempts,
      children: node.children.map((child) => copies.get(child)!).sort(compareSiblings),
    });
  }
  return copies.get(root)!;
}
