// 1. Repository safety (seed 001 §5): not main/master, a run branch, a clean working tree, the logs
//    ignored; or an interrupted iteration (the journal says one began here and was never committed).
//    Hands on to `loading` (a safe repository) or `resumption` (an interrupted iteration).
import { assign, setup } from "xstate";
import { errorMessage } from "../src/errors.js";
import type { RepositoryFacts } from "../src/core/step/safety.js";
import { judgeRepository, type SafetyVerdict } from "../src/core/step/step-verdicts.js";
import { ACTORS } from "./actors.js";
import type { Route, StartPoint, StepInput } from "./iteration-types.js";
import { endOnError, FAILURE_GUARDS, finals, onFailure, routeActions, type Routed, unrouted } from "./transitions.js";

interface InspectionContext extends Routed {
  request: StepInput;
  /** What the safety check found. */
  safety?: SafetyVerdict;
}

export const inspectionMachine = setup({
  types: { context: {} as InspectionContext, input: {} as StepInput, output: {} as Route },
  actors: { inspectRepository: ACTORS.inspectRepository },
  guards: {
    ...FAILURE_GUARDS,
    repositoryUnsafe: ({ context }) => context.safety?.kind === "unsafe",
    wasInterrupted: ({ context }) => context.safety?.kind === "interrupted",
    repositorySafe: ({ context }) => context.safety?.kind === "safe",
  },
  actions: routeActions<InspectionContext>(),
}).createMachine({
  id: "inspection",
  description: "the step's options",
  initial: "safetyCheck",
  context: ({ input }) => ({ request: input, route: unrouted("inspection") }),
  output: ({ context }) => context.route,
  states: {
    safetyCheck: {
      invoke: {
        id: "inspectRepository",
        src: "inspectRepository",
        input: ({ context }) => ({ runIdOption: context.request.runIdOption }),
        onDone: { actions: assign(({ context, event }) => inspected(context.request, event.output)) },
        onError: onFailure(endOnError("refused", (error) => ({ message: errorMessage(error) }))),
      },
      always: [
        { guard: "repositoryUnsafe", target: "refused" },
        { guard: "wasInterrupted", target: "resumption" },
        { guard: "repositorySafe", target: "loading" },
      ],
    },
    ...finals("refused", "crashed", "resumption", "loading"),
  },
});

/** The safety verdict, and where the step goes on from it. */
function inspected(request: StepInput, facts: RepositoryFacts): Pick<InspectionContext, "safety" | "route"> {
  const safety = judgeRepository(facts, request.runIdOption);
  switch (safety.kind) {
    case "unsafe":
      return { safety, route: { to: "refused", message: safety.message } };
    case "interrupted": {
      // (the journal's branch and commit are where HEAD is: that is what makes it one to resume)
      const { interrupted, runnerError } = safety;
      const from = { branch: interrupted.branch, head: interrupted.head, runStart: facts.runStarts[interrupted.runId] };
      const learnt = { runId: interrupted.runId, iteration: { runId: interrupted.runId, iteration: interrupted.iteration } };
      return { safety, route: { to: "resumption", input: { interrupted, runnerError, from, control: facts.control }, learnt } };
    }
    case "safe": {
      const from = startPoint(facts, safety.runId);
      if (!from) return { safety, route: unrouted("inspection") };
      const input = { recheck: request.recheck, runId: safety.runId, from, control: facts.control };
      return { safety, route: { to: "loading", input, learnt: { runId: safety.runId } } };
    }
  }
}

/** The run branch and its commit: a safe repository has both (the safety check refuses a detached HEAD or a branch without commits). */
function startPoint(facts: RepositoryFacts, runId: string): StartPoint | undefined {
  const { branch, head } = facts;
  return branch !== undefined && head !== undefined ? { branch, head, runStart: facts.runStarts[runId] } : undefined;
}
