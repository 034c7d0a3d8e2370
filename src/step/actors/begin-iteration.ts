// The moment an iteration starts changing things (an agent's prompt pack, or `runner recheck`'s
// guard): its log folder is emptied and the iteration is journaled, so that a runner killed before
// the commit is noticed and recorded by the next step.
import { IterationLog } from "../../adapters/records/iteration-log.js";
import { writeJournal } from "../../adapters/records/journal.js";
import type { IterationStart } from "../../../machines/iteration-types.js";
import type { ActorDeps } from "../deps.js";

export async function beginIteration({ root, state, secrets, now }: ActorDeps, start: IterationStart, nodeId: string | null): Promise<IterationLog> {
  const log = new IterationLog(root, start.runId, start.iteration, secrets);
  // A folder of this iteration's number can only be left over or planted (an earlier agent knows
  // the next number): the iteration starts with an empty one, so nothing in it is not its own.
  log.clear();
  await writeJournal(state.journal, {
    runId: start.runId,
    iteration: start.iteration,
    branch: start.from.branch,
    head: start.from.head,
    stepKind: start.stepKind,
    nodeId,
    startedAt: new Date(now()).toISOString(),
    control: start.control,
  });
  return log;
}
