// Deterministic selection (seed 000, seed 001 §4.2): depth-first over siblings in (order, id)
// order, the leftmost open leaf.
import { orderedChildren, type TaskNode, type TaskTree } from "./tree.js";

export type Selection =
  | { kind: "complete" }
  | {
      kind: "leaf";
      leaf: TaskNode;
      /** From the root down to the leaf, both included. */
      path: TaskNode[];
      /** attempts = max_attempts: still selected, but the prompt asks for decomposition. */
      stuck: boolean;
    };

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
