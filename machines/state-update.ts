// 9. Runner-owned state updates (seed 002): reset, transition, saturation, derived passes, sorting —
// a pure function of what the machine is handed (the outcome: the guard's verdict, else the
// judgement's; a repair has none). A re-check changes the tree only on a green guard (no agent
// tried, so no attempt is counted). Hands the iteration's record on to `recording`.
import { setup } from "xstate";
import { failureFeedback } from "../src/core/step/iteration.js";
import { iterationRecord, type IterationRecord } from "../src/core/step/iteration-record.js";
import { applyStateUpdates, madeProgress } from "../src/core/tree/state-update.js";
import type { Route, StateUpdateInput, UpdatePhase } from "./iteration-types.js";

type StateUpdateContext = StateUpdateInput & { update: UpdatePhase; record: IterationRecord };

export const stateUpdateMachine = setup({
  types: { context: {} as StateUpdateContext, input: {} as StateUpdateInput, output: {} as Route },
}).createMachine({
  id: "stateUpdate",
  description: "start record, the outcome to apply",
  initial: "updateState",
  context: ({ input }) => updated(input),
  output: ({ context }) => ({ to: "recording", input: { start: context.start, record: context.record } }),
  states: {
    updateState: { always: { target: "recording" } },
    recording: { type: "final" },
  },
});

/** The outcome applied to the tree, and the iteration's record. */
function updated(input: StateUpdateInput): StateUpdateContext {
  const update = stateUpdate(input);
  const source =
    input.kind === "repair"
      ? { start: input.start, answer: input.answer, update }
      : input.kind === "leaf"
        ? { start: input.start, leaf: input.leaf, answer: input.answer, judgement: input.judgement, update }
        : { start: input.start, leaf: input.leaf, selected: { kind: "selected", batch: input.batch }, update };
  return { ...input, update, record: iterationRecord(source) };
}

function stateUpdate(input: StateUpdateInput): UpdatePhase {
  const previous = input.start.previousTree;
  switch (input.kind) {
    case "recheck": {
      const { verdict } = input.guard;
      const pass = verdict.outcome.guard === "pass" ? verdict.outcome : undefined;
      // The plan-finished leaves judged with it pass on the same green guard.
      const also = pass ? (input.batch ?? []) : [];
      const leafId = input.leaf.leaf.id;
      const updated = applyStateUpdates(previous, structuredClone(previous), leafId, pass, also);
      return { outcome: verdict.outcome, failure: verdict.failure, updated, progressed: madeProgress(previous, updated, leafId) };
    }
    case "repair": {
      const { verdict } = input.answer;
      const updated = applyStateUpdates(previous, verdict.agentTree, undefined, undefined);
      return {
        outcome: { status: verdict.output.status, guard: "skipped" },
        failure: undefined,
        updated,
        progressed: madeProgress(previous, updated, undefined),
      };
    }
    case "leaf": {
      const { judgement, guard } = input;
      // The guard's verdict carries the failure the next iteration hears; without a guard, the judgement's.
      const judged = guard
        ? { outcome: guard.verdict.outcome, failure: guard.verdict.failure }
        : { outcome: judgement.outcome, failure: failureFeedback({ judgement }) };
      const leafId = input.leaf.leaf.id;
      const updated = applyStateUpdates(previous, input.answer.verdict.agentTree, leafId, judged.outcome);
      return { ...judged, updated, progressed: madeProgress(previous, updated, leafId) };
    }
  }
}
