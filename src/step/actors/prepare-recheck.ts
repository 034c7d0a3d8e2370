// `runner recheck`: before the guard judges the leaf on its own, the iteration is journaled (a
// runner killed during the guard leaves it for the next step to record) and its log begun with
// tree.before.json, as for an agent's iteration. The iteration's budget starts here.
import { readFile } from "node:fs/promises";
import { fromPromise } from "xstate";
import { IterationLog } from "../../adapters/iteration-log.js";
import { writeJournal } from "../../adapters/journal.js";
import { projectPath } from "../../adapters/project-files.js";
import { LAYOUT } from "../../core/layout.js";
import type { RecheckPrepareRequest } from "../../../machines/iteration-types.js";
import type { ActorDeps } from "../deps.js";

export function prepareRecheckActor({ root, state, secrets, now }: ActorDeps) {
  return fromPromise<{ deadlineMs: number }, RecheckPrepareRequest>(async ({ input }) => {
    const log = new IterationLog(root, input.runId, input.iteration, secrets);
    log.clear();
    await writeJournal(state.journal, {
      runId: input.runId,
      iteration: input.iteration,
      branch: input.start.branch,
      head: input.start.head,
      stepKind: "recheck",
      nodeId: input.nodeId,
      startedAt: new Date(now()).toISOString(),
      control: input.control,
    });
    // The working tree was clean: the tree file is HEAD's.
    log.write("tree.before.json", await readFile(projectPath(root, LAYOUT.tree), "utf8"));
    return { deadlineMs: now() + input.config.limits.iterationTimeoutSeconds * 1000 };
  });
}
