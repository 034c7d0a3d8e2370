// Records what a run of the iteration machine did, through XState's inspection API, as the flat graph
// of its composition says (src/diagram/graph.ts `compositionGraph`): the children's states it entered
// (meta.json `path`) and every transition it took (events.jsonl), eventless ones named `always`,
// actor results that only record facts (no target) as a transition to the same state. A child's
// transition into one of its final states is recorded once the parent has followed the route: to the
// first state of the next child, or to the parent's final state. The parent's own states only hand
// over, and are not recorded.
import type { AnyTransitionDefinition, InspectionEvent } from "xstate";
import type { CompositionGraph } from "../src/diagram/graph.js";

export interface Transition {
  from: string;
  event: string;
  to: string;
}

/** A machine transition behind a recorded one: the machine's id and XState's transition. */
export interface MachineStep {
  machine: string;
  transition: AnyTransitionDefinition;
}

export interface Recorder {
  /** The states entered, in order, the initial one first. */
  readonly path: string[];
  /** Every transition taken, in order, the first being the start (`(start)` → the initial state). */
  readonly transitions: Transition[];
  /** Pass as `createActor(machine, { inspect })`. */
  inspect(event: InspectionEvent): void;
}

type Microstep = Extract<InspectionEvent, { type: "@xstate.microstep" }>;

/**
 * `onEnter` is called on entry to each state, before the state's actor starts (XState starts
 * invoked actors after the microstep that entered the state); for the initial state, at once.
 * `onTransition` is told the machine transitions each recorded one is made of.
 */
export function createRecorder(
  graph: CompositionGraph,
  hooks: { onEnter?: (state: string) => void; onTransition?: (transition: Transition, steps: MachineStep[]) => void } = {},
): Recorder {
  const [parent, ...children] = graph.machines;
  if (!parent) throw new Error("a composition without machines");
  /** The child each of the parent's states invokes, by the state's name. */
  const childOf = new Map(parent.states.flatMap((state) => (state.child !== undefined ? [[state.id, state.child] as const] : [])));
  const initials = new Map(children.map((child) => [child.id, child.initial]));
  /** Where entering the parent's state lands: the first state of its child, or the parent's final state. */
  const landing = (state: string) => initials.get(childOf.get(state) ?? "") ?? state;
  const finals = new Map(graph.machines.map((machine) => [machine.id, new Set(machine.states.filter((s) => s.final).map((s) => s.id))]));
  /** A child's transition into one of its final states, until the parent follows its route. */
  const leaving = new Map<string, { from: string; event: string; steps: MachineStep[] }>();
  /** Microsteps of a child the parent has not entered yet (a child whose first state is eventless runs before). */
  const early = new Map<string, Microstep[]>();
  const entered = new Set<string>([childOf.get(parent.initial) ?? ""]);

  const path = [graph.initial];
  const start = { from: "(start)", event: "xstate.init", to: graph.initial };
  const transitions: Transition[] = [start];
  hooks.onTransition?.(start, []);
  hooks.onEnter?.(graph.initial);
  const record = (transition: Transition, steps: MachineStep[], enters: boolean) => {
    transitions.push(transition);
    hooks.onTransition?.(transition, steps);
    if (!enters) return;
    path.push(transition.to);
    hooks.onEnter?.(transition.to);
  };
  const eventOf = (event: Microstep, transition: AnyTransitionDefinition) => (transition.eventType === "" ? "always" : event.event.type);

  const childStep = (child: string, event: Microstep) => {
    for (const transition of event._transitions) {
      const from = transition.source.key;
      const to = transition.target?.[0]?.key;
      const taken = { from, event: eventOf(event, transition), steps: [{ machine: child, transition }] };
      if (to !== undefined && finals.get(child)?.has(to)) leaving.set(child, taken);
      else record({ from, event: taken.event, to: to ?? from }, taken.steps, to !== undefined);
    }
  };
  const parentStep = (event: Microstep) => {
    for (const transition of event._transitions) {
      const child = childOf.get(transition.source.key);
      const to = transition.target?.[0]?.key;
      const left = child === undefined ? undefined : leaving.get(child);
      if (to === undefined || child === undefined || !left) continue;
      leaving.delete(child);
      record({ from: left.from, event: left.event, to: landing(to) }, [...left.steps, { machine: parent.id, transition }], true);
      const next = childOf.get(to);
      if (next === undefined) continue;
      entered.add(next);
      for (const step of early.get(next) ?? []) childStep(next, step);
      early.delete(next);
    }
  };

  return {
    path,
    transitions,
    inspect(event) {
      if (event.type !== "@xstate.microstep") return; // only machines take microsteps
      const machine = (event.snapshot as { machine?: { id?: string } }).machine?.id;
      if (machine === parent.id) return parentStep(event);
      if (machine === undefined || !initials.has(machine)) return;
      if (entered.has(machine)) return childStep(machine, event);
      early.set(machine, [...(early.get(machine) ?? []), event]);
    },
  };
}
