// The model of the iteration's machines that the model-based tests walk, and the paths over it.
//
// The model is derived from the machine definitions (`compositionGraph(iterationMachine)`, which
// reads the parent machine and each child machine it invokes, `always` transitions included): one
// model state per state of the flat graph (the children's states and the parent's final states),
// one model event per child transition, i.e. per (state, actor outcome): `done` + guard, `error`, or
// `always` + guard — a transition into a child's final state going on where the parent's route for
// it leads. Actor outcomes are events, so `xstate/graph`'s `TestModel` can walk it
// (`createTestModel` refuses machines that invoke actors). Coverage is counted on the flat graph and
// on each machine (`machineCoverage`): every state and transition of every machine.
//
// A state that invokes an actor records the actor's result as one verdict (a transition without a
// target, which the graph leaves out) and then leaves by an `always` branch on the verdict: in the
// model that is one event, `<state>:always:<guard>`, which the driver plays by settling the actor
// with facts that make exactly that verdict. Most guards read such a verdict, so the facts decide
// them and the model leaves them free. Some read what earlier transitions put in the context and
// are fixed, or ruled out, by the path itself: `hadRunnerError` (the iteration went through
// `recover`), and `repairAccepted` / `leafAccepted` (a repair step or a leaf). Without them the
// model would offer paths the machine can never take (e.g. recover → persist → commit →
// committed), so the model carries that much of the context (MODEL_CONTEXT_GUARDS, modelEffect).
// The machine-layer test checks at every step that the real machine's context agrees with it.
import { assign, createMachine, type AnyMachineSnapshot, type AnyStateMachine } from "xstate";
import { TestModel, type TestPath } from "xstate/graph";
import { iterationMachine } from "../../machines/iteration.js";
import { compositionGraph, type DiagramTransition } from "../../src/diagram/graph.js";

export const GRAPH = compositionGraph(iterationMachine);
/** The child machines the parent invokes, in the order of its states. */
export const CHILD_MACHINES: readonly AnyStateMachine[] = Object.values(iterationMachine.root.states).flatMap((node) => {
  const src = node.invoke[0]?.src;
  return typeof src === "string" ? [(iterationMachine.implementations.actors as Record<string, AnyStateMachine>)[src]!] : [];
});
export const STATES = GRAPH.states.map((state) => state.id);
export const FINAL_STATES = GRAPH.states.filter((state) => state.final).map((state) => state.id);
export const INVOKES: ReadonlyMap<string, string> = new Map(GRAPH.states.filter((s) => s.invoke).map((s) => [s.id, s.invoke!]));

export type Outcome = "done" | "error" | "always";

/** One transition of the machine, as the model sees it. */
export interface ModelEdge extends DiagramTransition {
  /** `<from>:<done|error|always>[:<guard>]`: the model's event type; fact builders and recipes are keyed by it. */
  key: string;
  outcome: Outcome;
  /** The invoked actor's id (`xstate.done.actor.<id>`), for done and error. */
  actor?: string;
  /** Position among the transitions of the same state and event: guards are tried in this order. */
  rank: number;
}

function outcomeOf(event: string): { outcome: Outcome; actor?: string } {
  if (event === "always") return { outcome: "always" };
  const match = /^xstate\.(done|error)\.actor\.(.+)$/.exec(event);
  if (!match) throw new Error(`the model does not know the machine event ${event}: teach test/model/paths.ts about it`);
  return { outcome: match[1] as "done" | "error", actor: match[2]! };
}

export const EDGES: readonly ModelEdge[] = GRAPH.transitions.map((transition, index, all) => {
  const { outcome, actor } = outcomeOf(transition.event);
  const rank = all.slice(0, index).filter((t) => t.from === transition.from && t.event === transition.event).length;
  return {
    ...transition,
    key: `${transition.from}:${outcome}${transition.guard ? `:${transition.guard}` : ""}`,
    outcome,
    ...(actor ? { actor } : {}),
    rank,
  };
});

export const EDGE_BY_KEY: ReadonlyMap<string, ModelEdge> = new Map(EDGES.map((edge) => [edge.key, edge]));

/** The transitions of `state` for the same event as `edge`, in the order their guards are tried. */
export function siblings(edge: ModelEdge): ModelEdge[] {
  return EDGES.filter((other) => other.from === edge.from && other.event === edge.event);
}

export function describeEdge(edge: ModelEdge): string {
  return `${edge.from} → ${edge.to} (${edge.label}${edge.guard ? ` [${edge.guard}]` : ""})`;
}

// ---------------------------------------------------------------------------------------------
// The part of the context the model tracks.

export interface ModelContext {
  /**
   * none: not known yet; journal: an interrupted iteration's (leaf or repair, as its journal says);
   * valid: a valid tree was loaded, for a leaf or a re-check (the input decides which).
   */
  stepKind: "none" | "leaf" | "repair" | "recheck" | "valid" | "journal";
  /** Whether the iteration has a runner error (it went through `recover`, or is an interrupted one). */
  runnerError: boolean;
  /**
   * Whether the step is `runner recheck` (its input): undefined while no transition has told. A
   * `runner step` that reaches a leaf an imported plan marks finished re-checks it too (stepKind
   * "recheck"), but it is still a step: recheck false.
   */
  recheck: boolean | undefined;
}

export const INITIAL_MODEL_CONTEXT: ModelContext = { stepKind: "none", runnerError: false, recheck: undefined };

/**
 * Guards that read the machine's context rather than the settled actor's output, and whose value
 * the path decides: true, false, or undefined when the facts may still go either way.
 */
export const MODEL_CONTEXT_GUARDS: Record<string, (context: ModelContext) => boolean | undefined> = {
  repairAccepted: (c) => (c.stepKind === "leaf" || c.stepKind === "valid" ? false : undefined),
  leafAccepted: (c) => (c.stepKind === "repair" ? false : undefined),
  hadRunnerError: (c) => c.runnerError,
  // The input (`runner step` or `runner recheck`) and the facts decide these together.
  recheckOnInvalidTree: (c) => (c.recheck === false ? false : undefined),
  treeInvalid: (c) => (c.recheck === true ? false : undefined),
  recheckRefused: (c) => (c.recheck === false ? false : undefined),
  leafSelected: (c) => (c.recheck === true ? false : undefined),
  finishedSelected: (c) => (c.recheck === true ? false : undefined),
  recheckSelected: (c) => (c.recheck === false ? false : undefined),
};

/** Transitions only a re-check takes, and transitions only a step takes. */
const RECHECK_EDGES = new Set(["loadTree:always:recheckOnInvalidTree", "selectLeaf:always:recheckRefused", "selectLeaf:always:recheckSelected"]);
const STEP_EDGES = new Set(["loadTree:always:treeInvalid", "selectLeaf:always:leafSelected", "selectLeaf:always:finishedSelected"]);

/**
 * Guards that read the context, but a context the facts of an earlier actor decide freely (the tree
 * loaded, the agent's result): the fact builders make them hold or not.
 */
export const FACT_DECIDED_CONTEXT_GUARDS = ["rootPasses", "guardRequired"];

/** What taking a transition does to the tracked context (the machine's assign actions, abstracted). */
export function modelEffect(edge: ModelEdge, context: ModelContext): ModelContext {
  let stepKind = context.stepKind;
  const recheck = RECHECK_EDGES.has(edge.key) ? true : STEP_EDGES.has(edge.key) ? false : context.recheck;
  if (edge.key === "loadTree:always:treeValid") stepKind = recheck === true ? "recheck" : recheck === false ? "leaf" : "valid";
  if (edge.key === "selectLeaf:always:leafSelected") stepKind = "leaf";
  if (edge.key === "selectLeaf:always:recheckSelected" || edge.key === "selectLeaf:always:finishedSelected") stepKind = "recheck";
  if (edge.to === "repairTree") stepKind = "repair";
  if (edge.key === "safetyCheck:always:wasInterrupted") stepKind = "journal";
  const runnerError = context.runnerError || edge.to === "recover" || edge.key === "safetyCheck:always:wasInterrupted";
  return { stepKind, runnerError, recheck };
}

/** Whether the machine can take `edge` with this context: its own guard may hold, no earlier one must. */
export function feasible(edge: ModelEdge, context: ModelContext): boolean {
  for (const other of siblings(edge)) {
    const fixed = other.guard === undefined ? undefined : MODEL_CONTEXT_GUARDS[other.guard]?.(context);
    if (other === edge) return fixed !== false;
    if (fixed === true) return false;
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// The model and its paths.

type ModelEvent = { type: string };

const stateConfig = (id: string) => {
  const final = FINAL_STATES.includes(id);
  if (final) return { type: "final" as const };
  const on: Record<string, unknown> = {};
  for (const edge of EDGES.filter((e) => e.from === id)) {
    on[edge.key] = {
      target: edge.to,
      guard: ({ context }: { context: ModelContext }) => feasible(edge, context),
      actions: assign(({ context }: { context: ModelContext }) => modelEffect(edge, context)),
    };
  }
  return { on };
};

export const modelMachine = createMachine({
  id: "iterationModel",
  types: {} as { context: ModelContext; events: ModelEvent },
  context: { ...INITIAL_MODEL_CONTEXT },
  initial: GRAPH.initial,
  states: Object.fromEntries(STATES.map((id) => [id, stateConfig(id)])) as never,
});

export type ModelSnapshot = AnyMachineSnapshot & { context: ModelContext; value: string };

export const testModel = new TestModel(modelMachine, {
  // The events a model state offers: its machine transitions that the tracked context allows.
  events: (snapshot) => EDGES.filter((edge) => edge.from === snapshot.value && feasible(edge, snapshot.context)).map((edge) => ({ type: edge.key })),
  serializeState: (snapshot) => `${String(snapshot.value)} ${JSON.stringify(snapshot.context)}`,
  serializeEvent: (event) => event.type,
});

export interface ModelPath {
  /** The transitions taken, in order. */
  edges: ModelEdge[];
  /** The states entered, the initial one first (what meta.json `path` must say). */
  states: string[];
  /** The tracked context after each state of `states`. */
  contexts: ModelContext[];
  /** The last state. */
  end: string;
  /** Human-readable: the states, with the guard or outcome of each transition. */
  name: string;
  /** TestModel's path, to drive with `path.test({ events, states })`. */
  test: TestPath<ModelSnapshot, ModelEvent>;
}

function toModelPath(path: TestPath<ModelSnapshot, ModelEvent>): ModelPath {
  // xstate/graph paths begin with an `xstate.init` step; each step holds the state after its event.
  const steps = path.steps;
  const edges = steps.slice(1).map((step) => {
    const edge = EDGE_BY_KEY.get(step.event.type);
    if (!edge) throw new Error(`model event ${step.event.type} is no machine transition`);
    return edge;
  });
  const states = steps.map((step) => String(step.state.value));
  const contexts = steps.map((step) => step.state.context);
  const name = [
    states[0],
    ...edges.map((edge) => `${edge.outcome === "always" ? "" : `${edge.outcome}`}${edge.guard ? `[${edge.guard}]` : ""}→ ${edge.to}`),
  ].join(" ");
  return { edges, states, contexts, end: states[states.length - 1]!, name, test: path };
}

const keyOf = (path: ModelPath) => path.edges.map((edge) => edge.key).join(" ");

/** Shortest paths: one to every model state (a machine state with the tracked context). */
export function shortestPaths(): ModelPath[] {
  return testModel.getShortestPaths({ allowDuplicatePaths: true }).map((path) => toModelPath(path as TestPath<ModelSnapshot, ModelEvent>));
}

/** Every simple path from the initial state to a final state. */
export function simplePathsToFinals(): ModelPath[] {
  return testModel
    .getSimplePaths({ allowDuplicatePaths: true, toState: (snapshot) => FINAL_STATES.includes(String(snapshot.value)) })
    .map((path) => toModelPath(path as TestPath<ModelSnapshot, ModelEvent>));
}

/** Paths without repeats (same transitions in the same order), first occurrence kept. */
export function dedupe(paths: readonly ModelPath[]): ModelPath[] {
  const seen = new Set<string>();
  return paths.filter((path) => {
    const key = keyOf(path);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** The machine layer's paths: the shortest path to every state, then the simple paths to each final state. */
export function machinePaths(): { paths: ModelPath[]; shortest: number; simple: number } {
  const shortest = shortestPaths();
  const simple = simplePathsToFinals();
  return { paths: dedupe([...shortest, ...simple]), shortest: shortest.length, simple: simple.length };
}

/** The shortest continuation of `path` to a final state (the machine always runs to one). */
export function completeToFinal(path: ModelPath, candidates: readonly ModelPath[]): ModelPath | undefined {
  const prefix = keyOf(path);
  return candidates
    .filter(
      (candidate) =>
        FINAL_STATES.includes(candidate.end) && (prefix === "" || keyOf(candidate) === prefix || keyOf(candidate).startsWith(`${prefix} `)),
    )
    .sort((a, b) => a.edges.length - b.edges.length)[0];
}

export interface Coverage {
  states: { covered: number; total: number; missing: string[] };
  transitions: { covered: number; total: number; missing: string[] };
}

export function coverage(paths: readonly ModelPath[], edges: readonly ModelEdge[] = EDGES): Coverage {
  const states = new Set(paths.flatMap((path) => path.states));
  const keys = new Set(paths.flatMap((path) => path.edges.map((edge) => edge.key)));
  const missingStates = STATES.filter((state) => !states.has(state));
  const missingEdges = edges.filter((edge) => !keys.has(edge.key)).map(describeEdge);
  return {
    states: { covered: STATES.length - missingStates.length, total: STATES.length, missing: missingStates },
    transitions: { covered: edges.length - missingEdges.length, total: edges.length, missing: missingEdges },
  };
}

/** Coverage of each machine of the composition: the machine transitions the paths' edges are made of, and the states they enter. */
export function machineCoverage(paths: readonly ModelPath[]): (Coverage & { machine: string })[] {
  const taken = new Set(
    paths.flatMap((path) => path.edges.flatMap((edge) => GRAPH.through[EDGES.indexOf(edge)]!.map((ref) => `${ref.machine} ${ref.index}`))),
  );
  const visited = new Set(paths.flatMap((path) => path.states));
  return GRAPH.machines.map((machine) => {
    const isTaken = (index: number) => taken.has(`${machine.id} ${index}`);
    // A machine's states: its first one when it ran (the parent always does; a child when one of its states was visited), and each one a taken transition enters.
    const ran = machine.id === GRAPH.id || machine.states.some((state) => visited.has(state.id));
    const entered = new Set([...(ran ? [machine.initial] : []), ...machine.transitions.filter((_, i) => isTaken(i)).map((t) => t.to)]);
    const missingStates = machine.states.filter((state) => !entered.has(state.id)).map((state) => state.id);
    const missingTransitions = machine.transitions
      .filter((_, i) => !isTaken(i))
      .map((t) => `${t.from} → ${t.to} (${t.label}${t.guard ? ` [${t.guard}${t.params?.to ? ` ${String(t.params.to)}` : ""}]` : ""})`);
    return {
      machine: machine.id,
      states: { covered: machine.states.length - missingStates.length, total: machine.states.length, missing: missingStates },
      transitions: {
        covered: machine.transitions.length - missingTransitions.length,
        total: machine.transitions.length,
        missing: missingTransitions,
      },
    };
  });
}

export function formatCoverage(layer: string, cover: Coverage, paths: number): string {
  const percent = (a: number, b: number) => `${Math.round((100 * a) / b)}%`;
  return `${layer}: ${paths} paths; states ${cover.states.covered}/${cover.states.total} (${percent(cover.states.covered, cover.states.total)}), transitions ${cover.transitions.covered}/${cover.transitions.total} (${percent(cover.transitions.covered, cover.transitions.total)})`;
}

/**
 * What the recorder writes to events.jsonl for a path (after its start): each transition, and
 * before an `always` branch out of a state that invokes an actor, the actor's result recorded as a
 * transition to the same state.
 */
export function recordedTransitions(edges: readonly ModelEdge[]): string[] {
  return edges.flatMap((edge) => {
    const taken = `${edge.from} ${edge.event} ${edge.to}`;
    return edge.outcome === "always" && INVOKES.has(edge.from)
      ? [`${edge.from} xstate.done.actor.${INVOKES.get(edge.from)} ${edge.from}`, taken]
      : [taken];
  });
}
