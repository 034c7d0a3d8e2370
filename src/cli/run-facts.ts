// What the live block of `runner run` and `runner step` knows before the first step tells it
// anything: the run's id (from --run-id or the runner/<id> branch) and the leaves passed so far.
// Only for the display: the step itself decides, and refuses, on its own reading.
import { checkedOutBranch } from "../adapters/audit/run-trees.js";
import { loadTree } from "../adapters/files/tree-store.js";
import { runIdFromBranch } from "../core/commit/run-id.js";
import { leafCount, type LeafCount } from "./progress-facts.js";

/** The run id of the checked-out runner/<id> branch (read from HEAD's file: no git status), or undefined. */
export async function branchRunId(root: string): Promise<string | undefined> {
  try {
    return runIdFromBranch(await checkedOutBranch(root));
  } catch {
    return undefined;
  }
}

/** Leaves passed and in all in the tree on disk; undefined when it cannot be read as a tree. */
export async function currentLeaves(root: string): Promise<LeafCount | undefined> {
  try {
    const load = await loadTree(root);
    return load.ok ? leafCount(load.tree) : undefined;
  } catch {
    return undefined;
  }
}
