// Seed 002 "Runner Error Recovery": retry, guard skipped, attempts unchanged. What the agent left is
// collected; its tree is kept when valid, else left for the next repair step; then `recording`
// persists and commits it and reports the error.
import { assign, setup } from "xstate";
import { iterationRecord } from "../src/core/step/iteration-record.js";
import type { CollectedFacts } from "../src/core/step/step-facts.js";
import { recoverIteration } from "../src/core/step/step-verdicts.js";
import { madeProgress } from "../src/core/tree/state-update.js";
import { ACTORS } from "./actors.js";
import type { AnswerPhase, RecoveryInput, Route, UpdatePhase } from "./iteration-types.js";
import { FAILURE_GUARDS, finals, onFailure, routeActions, type Routed, routedChild } from "./transitions.js";

interface RecoveryContext extends RecoveryInput, Routed {
  /** The recovery's outcome: retry, guard skipped; the agent's tree when valid. */
  update?: UpdatePhase;
}

export const recoveryMachine = setup({
  types: { context: {} as RecoveryContext, input: {} as RecoveryInput, output: {} as Route },
  actors: { collectResult: ACTORS.collectResult },
  guards: FAILURE_GUARDS,
  actions: {
    ...routeActions<RecoveryContext>(),
    /** Collecting the facts failed too: what the records hold stays. */
    recoverWithoutFacts: assign(({ context }) => recovered(context, undefined)),
  },
}).createMachine({
  ...routedChild<RecoveryInput>("recovery", "start record, leaf, runner error"),
  initial: "recover",
  states: {
    recover: {
      tags: ["recorded"],
      invoke: {
        id: "collectAfterError",
        src: "collectResult",
        input: ({ context }) => ({ start: context.start, answer: context.agentAnswer }),
        onDone: { target: "recording", actions: assign(({ context, event }) => recovered(context, event.output)) },
        onError: onFailure({ target: "recording", actions: "recoverWithoutFacts" }),
      },
    },
    ...finals("recording", "crashed"),
  },
});

/** What could be kept of what the agent left, the recovery's outcome, and the iteration's record. */
function recovered(context: RecoveryContext, collected: CollectedFacts | undefined): Pick<RecoveryContext, "answer" | "update" | "route"> {
  const { start } = context;
  const selectedId = start.stepKind === "repair" ? undefined : context.leaf?.leaf.id;
  const recovery = recoverIteration({
    previousTree: start.previousTree,
    previousTreeText: start.previousTreeText,
    collected,
    // The node that must still exist after the agent: the selected leaf, or for a repair the node that broke the tree.
    requiredNodeId: start.repair ? start.repair.requiredNodeId : context.leaf?.leaf.id,
    selectedId,
  });
  const progressed = recovery.updated !== undefined && madeProgress(start.previousTree, recovery.updated, selectedId);
  const update: UpdatePhase = { outcome: recovery.outcome, failure: undefined, updated: recovery.updated, progressed };
  // What could be kept of what the agent left; without facts, what the iteration had collected before.
  const answer: AnswerPhase | undefined = collected && recovery.verdict ? { collected, verdict: recovery.verdict } : context.answer;
  const record = iterationRecord({
    start,
    leaf: context.leaf,
    journalNodeId: context.journalNodeId,
    answer,
    judgement: context.judgement,
    update,
    runnerError: context.runnerError,
  });
  return { answer, update, route: { to: "recording", input: { start, record } } };
}
