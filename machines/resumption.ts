// An interrupted iteration (a runner killed or crashed before its commit) is recorded as a runner
// error (seed 002: retry, guard skipped, attempts unchanged) and committed, from the tree it began
// from: its state is loaded as its journal names it, then handed to `recovery`.
import { setup } from "xstate";
import { errorMessage } from "../src/errors.js";
import { iterationRecord } from "../src/core/step/iteration-record.js";
import { selectionOf } from "../src/core/tree/select.js";
import type { InterruptedState } from "../src/core/step/step-facts.js";
import { ACTORS } from "./actors.js";
import { learntFrom } from "./hand-offs.js";
import type { IterationStart, ResumptionInput, Route } from "./iteration-types.js";
import { endOnError, FAILURE_GUARDS, finals, onFailure, routeActions, type Routed, routedChild } from "./transitions.js";

type ResumptionContext = ResumptionInput & Routed;

export const resumptionMachine = setup({
  types: { context: {} as ResumptionContext, input: {} as ResumptionInput, output: {} as Route },
  actors: { loadInterrupted: ACTORS.loadInterrupted },
  guards: FAILURE_GUARDS,
  actions: routeActions<ResumptionContext>(),
}).createMachine({
  ...routedChild<ResumptionInput>("resumption", "the interrupted iteration's journal"),
  initial: "resumeInterrupted",
  states: {
    resumeInterrupted: {
      tags: ["recorded"],
      invoke: {
        id: "loadInterrupted",
        src: "loadInterrupted",
        input: ({ context }) => ({ runId: context.interrupted.runId, head: context.from.head }),
        onDone: { target: "recovery", actions: { type: "route", params: ({ context, event }) => ({ route: resumed(context, event.output) }) } },
        onError: onFailure(
          endOnError("failed", (error, context: ResumptionContext) => ({
            message: `Could not record the interrupted iteration: ${errorMessage(error)}.`,
            // (its state could not be loaded: recorded from its journal alone)
            record: iterationRecord({
              start: { runId: context.interrupted.runId, iteration: context.interrupted.iteration, stepKind: context.interrupted.stepKind },
              journalNodeId: context.interrupted.nodeId ?? undefined,
              runnerError: context.runnerError,
            }),
            commit: undefined,
          })),
        ),
      },
    },
    ...finals("recovery", "failed", "crashed"),
  },
});

/** The interrupted iteration's start record, from its journal and the state it began from. */
function resumed(context: ResumptionContext, loaded: InterruptedState): Route {
  const { interrupted } = context;
  const start: IterationStart = {
    runId: interrupted.runId,
    iteration: interrupted.iteration,
    stepKind: interrupted.stepKind,
    config: loaded.config,
    records: loaded.records,
    previousTree: loaded.previousTree,
    treeFromStart: loaded.treeFromStart,
    guardProgram: loaded.guardProgram,
    identity: loaded.identity,
    from: context.from,
    control: context.control,
    ...(interrupted.stepKind === "repair" ? { repair: { treeProblems: [], requiredNodeId: interrupted.nodeId ?? undefined } } : {}),
  };
  const nodeId = interrupted.stepKind === "repair" ? null : interrupted.nodeId;
  return {
    to: "recovery",
    input: {
      start,
      leaf: nodeId === null ? undefined : selectionOf(loaded.previousTree, nodeId),
      runnerError: context.runnerError,
      agentAnswer: undefined,
      answer: undefined,
      judgement: undefined,
      journalNodeId: interrupted.nodeId ?? undefined,
    },
    learnt: learntFrom(start),
  };
}
