// `runner recheck`: before the guard judges the leaf on its own, the iteration is journaled (a
// runner killed during the guard leaves it for the next step to record) and its log begun with
// its tree before, as for an agent's iteration. The iteration's budget starts here.
import { readFile } from "node:fs/promises";
import { fromPromise } from "xstate";
import { projectPath } from "../../adapters/files/project-files.js";
import { referToCommittedTree } from "../../adapters/records/tree-snapshots.js";
import { LAYOUT } from "../../core/base/layout.js";
import type { RecheckPrepareRequest } from "../../../machines/iteration-types.js";
import type { ActorDeps } from "../deps.js";
import { beginIteration } from "./begin-iteration.js";

export function prepareRecheckActor(deps: ActorDeps) {
  const { root, now } = deps;
  return fromPromise<{ deadlineMs: number }, RecheckPrepareRequest>(async ({ input: { start, leaf } }) => {
    const log = await beginIteration(deps, start, leaf.leaf.id);
    // The working tree was clean: the tree file is HEAD's, and the log refers to it (a copy, redacted,
    // only when it holds a secret value).
    const treeFile = projectPath(root, LAYOUT.tree);
    const text = await readFile(treeFile, "utf8");
    if (log.redacts(text)) log.write("tree.before.json", text);
    else await referToCommittedTree(log, "before", treeFile, start.from.head);
    return { deadlineMs: now() + start.config.limits.iterationTimeoutSeconds * 1000 };
  });
}
