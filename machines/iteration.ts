// The iteration machine: one `runner step` is one run of it (seed 001 §5, seed 002). It invokes one
// child machine per phase of the iteration, each with the records that phase relies on as its
// required input (machines/iteration-types.ts), and each hands back a route as its output: the
// child the step goes on with, and that child's input, or how the step ends. This machine only
// follows the routes; its final state says how the step ended.
//
//   inspection    safetyCheck                      → resumption | loading | refused
//   resumption    resumeInterrupted                → recovery | failed
//   loading       loadTree, selectLeaf             → leafPrompt | recheckPrep | repairPrompt | nothingToDo | refused | failed
//   recheckPrep   prepareRecheck                   → guarding | recovery
//   leafPrompt    buildPrompt                      → agentSession | recovery | refused
//   repairPrompt  repairTree                       → agentSession | recovery
//   agentSession  execute, reloadTree, classify    → guarding | stateUpdate | recording | recovery
//   guarding      guard                            → stateUpdate | recovery
//   stateUpdate   updateState                      → recording
//   recovery      recover                          → recording
//   recording     persist, commit                  → committed | failed
//
// (and any of them → crashed: a bug). The I/O is done by the actors the children invoke, supplied
// with `createIterationMachine(actors)`. What `runner step` records (meta.json `path`, events.jsonl)
// is the children's states, in order (machines/recorder.ts): this machine's states only hand over.
import { assign, setup, type DoneActorEvent } from "xstate";
import type { IterationActors } from "./actors.js";
import { agentSessionMachine } from "./agent-session.js";
import { guardingMachine } from "./guarding.js";
import { inspectionMachine } from "./inspection.js";
import type { ChildInputs, ChildName, Route, StepInput, StepOutput, StepTrace } from "./iteration-types.js";
import { leafPromptMachine } from "./leaf-prompt.js";
import { loadingMachine } from "./loading.js";
import { recheckPrepMachine } from "./recheck-prep.js";
import { recordingMachine } from "./recording.js";
import { recoveryMachine } from "./recovery.js";
import { repairPromptMachine } from "./repair-prompt.js";
import { resumptionMachine } from "./resumption.js";
import { stateUpdateMachine } from "./state-update.js";

interface IterationContext {
  request: StepInput;
  /** Where the step goes on: the route the last child handed back (at first: to the inspection). */
  next: Route;
  /** What the step learnt on its way (the routes' `learnt`). */
  trace: StepTrace;
}

/** The children, each invoked by the state of its name; a route names the state it leads to. */
const CHILDREN = {
  inspection: inspectionMachine,
  resumption: resumptionMachine,
  loading: loadingMachine,
  recheckPrep: recheckPrepMachine,
  leafPrompt: leafPromptMachine,
  repairPrompt: repairPromptMachine,
  agentSession: agentSessionMachine,
  guarding: guardingMachine,
  stateUpdate: stateUpdateMachine,
  recovery: recoveryMachine,
  recording: recordingMachine,
} satisfies Record<ChildName, unknown>;

/** A child's route, as its done event carries it. */
const routeOf = (event: unknown): Route => (event as DoneActorEvent<Route>).output;

export const iterationMachine = setup({
  types: { context: {} as IterationContext, input: {} as StepInput, output: {} as StepOutput },
  actors: CHILDREN,
  guards: {
    /** The child's route leads to the state `to`. */
    routesTo: ({ event }, params: { to: string }) => routeOf(event).to === params.to,
  },
  actions: {
    /** The step goes on where the child's route says, and learns what it learnt. */
    takeRoute: assign(({ context, event }) => {
      const route = routeOf(event);
      return { next: route, trace: { ...context.trace, ...route.learnt } };
    }),
  },
}).createMachine({
  id: "iteration",
  initial: "inspection",
  context: ({ input }) => ({ request: input, next: { to: "inspection", input }, trace: {} }),
  output: ({ context }) => stepOutput(context.next),
  states: {
    inspection: invokeChild("inspection"),
    resumption: invokeChild("resumption"),
    loading: invokeChild("loading"),
    recheckPrep: invokeChild("recheckPrep"),
    leafPrompt: invokeChild("leafPrompt"),
    repairPrompt: invokeChild("repairPrompt"),
    agentSession: invokeChild("agentSession"),
    guarding: invokeChild("guarding"),
    stateUpdate: invokeChild("stateUpdate"),
    recovery: invokeChild("recovery"),
    recording: invokeChild("recording"),
    committed: { type: "final" },
    nothingToDo: { type: "final" },
    refused: { type: "final" },
    failed: { type: "final" },
    crashed: { type: "final" },
  },
});

/** The state that invokes child `name` with the input its route hands it, and follows the route the child hands back. */
function invokeChild<Name extends ChildName>(name: Name) {
  return {
    invoke: { id: name, src: name, input: ({ context }: { context: IterationContext }) => handedTo(context.next, name), onDone: routesOut(name) },
  };
}

/** The routes out of a child's state: one per final state of the child, to this machine's state of that name. */
function routesOut(child: ChildName) {
  return Object.entries(CHILDREN[child].root.states)
    .filter(([, node]) => node.type === "final")
    .map(([to]) => ({ guard: { type: "routesTo" as const, params: { to } }, target: to, actions: "takeRoute" as const }));
}

/**
 * The input the route hands to child `name`. The route is the one `routesTo` checked on the way into
 * the child's state, so it leads there: XState has no per-state context types to say so.
 */
function handedTo<Name extends ChildName>(next: Route, name: Name): ChildInputs[Name] {
  const handed: Partial<ChildInputs> = "input" in next ? { [next.to]: next.input } : {};
  const input = handed[name];
  if (input === undefined) throw new TypeError(`the iteration machine entered ${name} on a route to ${next.to}`);
  return input;
}

/** How the step ended, by the route that ended it. */
function stepOutput(route: Route): StepOutput {
  const logError = (commit: { logError?: string } | undefined) => (commit?.logError !== undefined ? { logError: commit.logError } : {});
  switch (route.to) {
    case "committed":
      return { outcome: "committed", message: "", record: route.record, commit: route.commit.sha, ...logError(route.commit) };
    case "failed":
      return { outcome: "failed", message: route.message, record: route.record, commit: route.commit?.sha, ...logError(route.commit) };
    case "refused":
      return { outcome: "refused", message: route.message };
    case "nothingToDo":
      return { outcome: "nothing-to-do", message: route.message };
    case "crashed":
      return { outcome: "crashed", message: "", error: route.error };
    default:
      return { outcome: "crashed", message: "", error: new TypeError(`the iteration machine ended on a route to ${route.to}`) };
  }
}

/** The iteration machine with the actors its children invoke. */
export function createIterationMachine(actors: IterationActors) {
  return iterationMachine.provide({
    actors: {
      inspection: inspectionMachine.provide({ actors: { inspectRepository: actors.inspectRepository } }),
      resumption: resumptionMachine.provide({ actors: { loadInterrupted: actors.loadInterrupted } }),
      loading: loadingMachine.provide({ actors: { loadState: actors.loadState } }),
      recheckPrep: recheckPrepMachine.provide({ actors: { prepareRecheck: actors.prepareRecheck } }),
      leafPrompt: leafPromptMachine.provide({ actors: { preparePrompt: actors.preparePrompt } }),
      repairPrompt: repairPromptMachine.provide({ actors: { preparePrompt: actors.preparePrompt } }),
      agentSession: agentSessionMachine.provide({ actors: { runAgent: actors.runAgent, collectResult: actors.collectResult } }),
      guarding: guardingMachine.provide({ actors: { runGuard: actors.runGuard } }),
      stateUpdate: stateUpdateMachine,
      recovery: recoveryMachine.provide({ actors: { collectResult: actors.collectResult } }),
      recording: recordingMachine.provide({ actors: { persistIteration: actors.persistIteration, commitIteration: actors.commitIteration } }),
    },
  });
}
