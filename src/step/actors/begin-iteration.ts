// The moment an iteration starts changing things (an agent's prompt pack, or `runner recheck`'s
// guard): its log folder is emptied and the iteration is journaled, so that a runner killed before
// the commit is noticed and recorded by the next step.
import { IterationLog } from "../../adapters/iteration-log.js";
import { writeJournal } from "../../adapters/journal.js";
import type { ControlSnapshot, StepKind } from "../../core/step-facts.js";
import type { IterationRef, StartPoint } from "../../../machines/iteration-types.js";
import type { ActorDeps } from "../deps.js";

interface Beginning extends IterationRef {
  start: StartPoint;
  control: ControlSnapshot;
}

export async function beginIteration(
  { root, state, secrets, now }: ActorDeps,
  input: Beginning,
  stepKind: StepKind,
  nodeId: string | null,
): Promise<IterationLog> {
  const log = new IterationLog(root, input.runId, input.iteration, secrets);
  // A folder of this iteration's number can only be left over or planted (an earlier agent knows
  // the next number): the iteration starts with an empty one, so nothing in it is not its own.
  log.clear();
  await writeJournal(state.journal, {
    runId: input.runId,
    iteration: input.iteration,
    branch: input.start.branch,
    head: input.start.head,
    stepKind,
    nodeId,
    startedAt: new Date(now()).toISOString(),
    control: input.control,
  });
  return log;
}
