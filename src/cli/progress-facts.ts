// What the progress line of the live block (`runner run`, `runner step`) counts: the tree's leaves,
// passed and in all. Pure.
import { forEachNode, type TaskTree } from "../core/tree/tree.js";

export interface LeafCount {
  passed: number;
  total: number;
}

/** Leaves passed and in all. */
export function leafCount(tree: TaskTree): LeafCount {
  let passed = 0;
  let total = 0;
  forEachNode(tree, (node) => {
    if (node.children.length > 0) return;
    total++;
    if (node.passes) passed++;
  });
  return { passed, total };
}
