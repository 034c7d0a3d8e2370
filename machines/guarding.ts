// 8. The guard (`just ci`) within what is left of the iteration's budget: after an agent's EXECUTE
// iteration that says done, or alone for a re-check. Hands on to `stateUpdate` (it ran to its end)
// or `recovery` (it was stopped or could not start: a runner error).
import { assign, setup } from "xstate";
import type { GuardFacts, RunnerErrorFact } from "../src/core/step/step-facts.js";
import { judgeGuardRun } from "../src/core/step/step-verdicts.js";
import { ACTORS } from "./actors.js";
import { recoveryOf } from "./hand-offs.js";
import type { GuardingInput, GuardPhase, RecoveryInput, Route, StateUpdateInput } from "./iteration-types.js";
import { FAILURE_GUARDS, finals, onFailure, recoverOnError, routeActions, type Routed, routedChild } from "./transitions.js";

type GuardingContext = GuardingInput & Routed & { guard?: GuardPhase };

export const guardingMachine = setup({
  types: { context: {} as GuardingContext, input: {} as GuardingInput, output: {} as Route },
  actors: { runGuard: ACTORS.runGuard },
  guards: {
    ...FAILURE_GUARDS,
    guardStopped: ({ context }) => context.guard?.verdict.kind === "guardStopped",
    guardNotStarted: ({ context }) => context.guard?.verdict.kind === "guardNotStarted",
    guardFinished: ({ context }) => context.guard?.verdict.kind === "guardFinished",
  },
  actions: routeActions<GuardingContext>(),
}).createMachine({
  ...routedChild<GuardingInput>("guarding", "start record, leaf, deadline (after the agent: its result, judgement)"),
  initial: "guard",
  // Whichever way the guard ends, the step learns how it ran (meta.json).
  output: ({ context }) => (context.guard ? { ...context.route, learnt: { ...context.route.learnt, guard: context.guard.facts } } : context.route),
  states: {
    guard: {
      invoke: {
        id: "runGuard",
        src: "runGuard",
        input: ({ context }) => ({
          start: context.start,
          leaf: context.leaf,
          deadlineMs: context.deadlineMs,
          ...(context.kind === "recheck" && context.batch !== undefined ? { batch: context.batch } : {}),
        }),
        onDone: { actions: assign(({ context, event }) => guarded(context, event.output)) },
        onError: onFailure(recoverOnError("guard_error", recovering)),
      },
      always: [
        { guard: "guardStopped", target: "recovery" },
        { guard: "guardNotStarted", target: "recovery" },
        { guard: "guardFinished", target: "stateUpdate" },
      ],
    },
    ...finals("recovery", "stateUpdate", "crashed"),
  },
});

/** A runner error of the guard: after an agent, its answer and judgement go with it. */
function recovering(context: GuardingContext, runnerError: RunnerErrorFact): RecoveryInput {
  const known = context.kind === "leaf" ? { agentAnswer: context.agentAnswer, answer: context.answer, judgement: context.judgement } : {};
  return recoveryOf({ start: context.start, leaf: context.leaf, ...known }, runnerError);
}

/** The guard's verdict (after the agent, with the iteration's judgement; a re-check on the guard alone), and where the step goes on. */
function guarded(context: GuardingContext, facts: GuardFacts): Pick<GuardingContext, "guard" | "route"> {
  const config = context.start.config;
  const verdict = judgeGuardRun(facts, {
    judgement: context.kind === "leaf" ? context.judgement : undefined,
    command: config.guard.command,
    timeoutSeconds: config.limits.iterationTimeoutSeconds,
  });
  const guard = { facts, verdict };
  if (verdict.kind !== "guardFinished") return { guard, route: { to: "recovery", input: recovering(context, verdict.runnerError) } };
  const finished = { facts, verdict };
  const update: StateUpdateInput =
    context.kind === "leaf"
      ? { kind: "leaf", start: context.start, leaf: context.leaf, answer: context.answer, judgement: context.judgement, guard: finished }
      : { kind: "recheck", start: context.start, leaf: context.leaf, batch: context.batch, guard: finished };
  return { guard, route: { to: "stateUpdate", input: update } };
}
