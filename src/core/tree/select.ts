// Deterministic selection (seed 000, seed 001 §4.2): depth-first over siblings in (order, id)
// order, the leftmost open leaf.
import { forEachNode, orderedChildren, type TaskNode, type TaskTree } from "./tree.js";

/** A selected leaf, as the prompt, the judgement and the record need it. */
export interface LeafSelection {
  leaf: TaskNode;
  /** From the root down to the leaf, both included. */
  path: TaskNode[];
  /** attempts = max_attempts: still selected, but the prompt asks for decomposition. */
  stuck: boolean;
}

export type Selection = { kind: "complete" } | ({ kind: "leaf" } & LeafSelection);

export function selectLeftmostOpenLeaf(tree: TaskTree): Selection {
  if (tree.root.passes) return { kind: "complete" };
  // Explicit stack with parent links; children pushed right-to-left so the leftmost comes first.
  interface Entry {
    node: TaskNode;
    up: Entry | undefined;
  }
  const stack: Entry[] = [{ node: tree.root, up: undefined }];
  while (stack.length > 0) {
    const entry = stack.pop()!;
    const node = entry.node;
    if (node.passes) continue;
    if (node.children.length === 0) {
      const path: TaskNode[] = [];
      for (let at: Entry | undefined = entry; at !== undefined; at = at.up) path.push(at.node);
      return { kind: "leaf", leaf: node, path: path.reverse(), stuck: node.attempts >= node.max_attempts };
    }
    const children = orderedChildren(node);
    for (let i = children.length - 1; i >= 0; i--) stack.push({ node: children[i]!, up: entry });
  }
  // Unreachable for a tree whose parents' passes are derived from their children (checked at load).
  throw new Error("the root is open but no open leaf exists: a parent's passes disagrees with its children");
}

/** The node with id `id` as a selection (its path from the root), or undefined when the tree has no such node. */
export function selectionOf(tree: TaskTree, id: string): LeafSelection | undefined {
  const parents = new Map<TaskNode, TaskNode | undefined>();
  let found: TaskNode | undefined;
  forEachNode(tree, (node, parent) => {
    parents.set(node, parent);
    if (node.id === id) found ??= node;
  });
  if (!found) return undefined;
  const path: TaskNode[] = [];
  for (let at: TaskNode | undefined = found; at !== undefined; at = parents.get(at)) path.push(at);
  return { leaf: found, path: path.reverse(), stuck: found.attempts >= found.max_attempts };
}
