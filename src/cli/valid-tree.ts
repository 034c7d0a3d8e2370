// Loading the tree for commands that need it valid: one sentence naming the file and the first
// problem when it is not.
// (from tree-store, not project-files: reading the tree needs nothing of the config or its TOML parser)
import { loadTree } from "../adapters/files/tree-store.js";
import { checkDerivedPasses } from "../core/tree/invariants.js";
import { LAYOUT } from "../core/base/layout.js";
import { formatProblem, MISSING_TREE_WAY_OUT, type Problem } from "../core/base/problems.js";
import type { TaskTree } from "../core/tree/tree.js";
import { RefusalError } from "../errors.js";

export function invalidTreeError(problems: Problem[]): RefusalError {
  const more = problems.length > 1 ? ` (and ${problems.length - 1} more)` : "";
  return new RefusalError(`${LAYOUT.tree} is invalid: ${formatProblem(problems[0]!)}${more}; run \`runner validate\` to see every problem.`);
}

export async function loadValidTree(root: string): Promise<TaskTree> {
  const load = await loadTree(root);
  if (!load.ok) {
    if (load.missing) throw new RefusalError(`${LAYOUT.tree} does not exist; ${MISSING_TREE_WAY_OUT}.`);
    throw invalidTreeError(load.problems);
  }
  const derived = checkDerivedPasses(load.tree);
  if (derived.length > 0) throw invalidTreeError(derived);
  return load.tree;
}
