// 2. Load and validate config and tree; number the iteration from the branch's loop commits.
// 3. Select the leftmost open leaf (a re-check: the open leaf a person named). Hands on to
//    `leafPrompt` (a leaf step), `recheckPrep` (the guard alone judges the leaf: `runner recheck`,
//    or a leaf an imported plan marks finished) or `repairPrompt` (5.1 REPAIR TREE: the tree is invalid).
import { assign, setup } from "xstate";
import { errorMessage } from "../src/errors.js";
import type { LoadedState } from "../src/core/step/step-facts.js";
import { judgeLoadedState, judgeSelection, type LoadVerdict } from "../src/core/step/step-verdicts.js";
import { ACTORS } from "./actors.js";
import { learntFrom } from "./hand-offs.js";
import type { IterationStart, LoadingInput, Route } from "./iteration-types.js";
import { endOnError, FAILURE_GUARDS, finals, onFailure, routeActions, type Routed, routedChild } from "./transitions.js";

/** The branch selectLeaf takes: the selection's verdict, told apart by the step it starts. */
type Selection = "rootPasses" | "recheckRefused" | "leafSelected" | "finishedSelected" | "recheckSelected";

interface LoadingContext extends LoadingInput, Routed {
  /** The loaded state's verdict. */
  load?: LoadVerdict;
  /** The iteration's start record, once the state is loaded (a valid tree, or one to repair). */
  start?: IterationStart;
  /** What the selection found (a valid tree only). */
  selection?: Selection;
}

export const loadingMachine = setup({
  types: { context: {} as LoadingContext, input: {} as LoadingInput, output: {} as Route },
  actors: { loadState: ACTORS.loadState },
  guards: {
    ...FAILURE_GUARDS,
    configInvalid: ({ context }) => context.load?.kind === "configInvalid",
    preflightFailed: ({ context }) => context.load?.kind === "preflightFailed",
    treeMissing: ({ context }) => context.load?.kind === "treeMissing",
    passesDisagree: ({ context }) => context.load?.kind === "passesDisagree",
    repairsExhausted: ({ context }) => context.load?.kind === "repairsExhausted",
    noValidTreeInHistory: ({ context }) => context.load?.kind === "noValidTreeInHistory",
    recheckOnInvalidTree: ({ context }) => context.load?.kind === "recheckOnInvalidTree",
    treeValid: ({ context }) => context.load?.kind === "treeValid",
    treeInvalid: ({ context }) => context.load?.kind === "treeInvalid",
    rootPasses: ({ context }) => context.selection === "rootPasses",
    recheckRefused: ({ context }) => context.selection === "recheckRefused",
    leafSelected: ({ context }) => context.selection === "leafSelected",
    finishedSelected: ({ context }) => context.selection === "finishedSelected",
    recheckSelected: ({ context }) => context.selection === "recheckSelected",
  },
  actions: routeActions<LoadingContext>(),
}).createMachine({
  ...routedChild<LoadingInput>("loading", "the run, its branch and commit"),
  initial: "loadTree",
  states: {
    loadTree: {
      invoke: {
        id: "loadState",
        src: "loadState",
        input: ({ context }) => ({ runId: context.runId, head: context.from.head }),
        onDone: { actions: assign(({ context, event }) => loaded(context, event.output)) },
        onError: onFailure(endOnError("failed", (error) => ({ message: errorMessage(error), record: undefined, commit: undefined }))),
      },
      always: [
        { guard: "configInvalid", target: "refused" },
        { guard: "preflightFailed", target: "refused" },
        { guard: "treeMissing", target: "refused" },
        { guard: "passesDisagree", target: "refused" },
        { guard: "noValidTreeInHistory", target: "refused" },
        { guard: "repairsExhausted", target: "failed" },
        { guard: "recheckOnInvalidTree", target: "refused" },
        { guard: "treeValid", target: "selectLeaf" },
        // 5.1 REPAIR TREE: the tree is invalid after an agent session.
        { guard: "treeInvalid", target: "repairPrompt" },
      ],
    },
    // The leaf is selected with the tree it is loaded from (loaded below); this state takes the branch.
    selectLeaf: {
      always: [
        { guard: "rootPasses", target: "nothingToDo" },
        { guard: "recheckRefused", target: "refused" },
        { guard: "leafSelected", target: "leafPrompt" },
        // A leaf an imported plan marks finished: the guard alone judges it first (with the others still pending), no agent.
        { guard: "finishedSelected", target: "recheckPrep" },
        { guard: "recheckSelected", target: "recheckPrep" },
      ],
    },
    ...finals("refused", "failed", "nothingToDo", "crashed", "leafPrompt", "recheckPrep", "repairPrompt"),
  },
});

/** The loaded state's verdict; for a valid tree the start record and the selection; where the step goes on. */
function loaded(context: LoadingContext, state: LoadedState): Partial<Pick<LoadingContext, "load" | "start" | "selection" | "route">> {
  const load = judgeLoadedState(state, { recheck: context.recheck !== undefined });
  if (load.kind === "repairsExhausted") return { load, route: { to: "failed", message: load.message, record: undefined, commit: undefined } };
  if (load.kind !== "treeValid" && load.kind !== "treeInvalid") return { load, route: { to: "refused", message: load.message } };
  const start: IterationStart = {
    runId: context.runId,
    iteration: load.iteration,
    stepKind: load.kind === "treeInvalid" ? "repair" : context.recheck ? "recheck" : "leaf",
    config: load.config,
    records: load.records,
    previousTree: load.previousTree,
    // A leaf step's (or a re-check's) tree is the tree file at the start; a repair's is from further back.
    treeFromStart: load.kind === "treeValid",
    ...(load.kind === "treeValid" && state.tree.ok && state.tree.text !== undefined ? { previousTreeText: state.tree.text } : {}),
    guardProgram: state.guardProgram,
    ...(state.finished !== undefined && state.finished.length > 0 ? { finished: state.finished } : {}),
    identity: state.identity,
    from: context.from,
    control: context.control,
    ...(load.kind === "treeInvalid" ? { repair: { treeProblems: load.treeProblems, requiredNodeId: load.requiredNodeId } } : {}),
  };
  const learnt = learntFrom(start);
  if (load.kind === "treeInvalid") return { load, start, route: { to: "repairPrompt", input: { start }, learnt } };
  const plan = start.finished ? { finished: start.finished, records: start.records } : undefined;
  const selected = judgeSelection(start.previousTree, start.runId, context.recheck, plan);
  if (selected.kind === "complete") return { load, start, selection: "rootPasses", route: { to: "nothingToDo", message: selected.message, learnt } };
  if (selected.kind === "recheckRefused")
    return { load, start, selection: "recheckRefused", route: { to: "refused", message: selected.message, learnt } };
  const { leaf, batch } = selected;
  if (start.stepKind === "recheck")
    return { load, start, selection: "recheckSelected", route: { to: "recheckPrep", input: { start, leaf, batch }, learnt } };
  // A plan-finished leaf: a re-check by its step kind, though `runner step` started it.
  if (batch !== undefined) {
    const recheck = { ...start, stepKind: "recheck" as const };
    return { load, start, selection: "finishedSelected", route: { to: "recheckPrep", input: { start: recheck, leaf, batch }, learnt } };
  }
  return { load, start, selection: "leafSelected", route: { to: "leafPrompt", input: { start, leaf }, learnt } };
}
