// The iteration's machines as plain graphs, read from the machine definitions themselves
// (`machine.root`), `always` transitions included (toDirectedGraph leaves them out). Every renderer,
// the recorder of `runner step` and the model-based tests start here.
//
// `compositionGraph` reads a parent machine that invokes one child machine per state (machines/
// iteration.ts) and gives both each machine's own graph and the flat graph of the composition: the
// children's states and the parent's final states, one transition per child transition, where a
// transition into a child's final state goes on where the parent's route for that final state leads
// (the first state of the next child, or the parent's final state). The flat graph is what an
// iteration goes through: its states are meta.json's `path`, its transitions events.jsonl's lines.
import type { AnyStateMachine } from "xstate";

export interface DiagramState {
  id: string;
  final: boolean;
  /** The invoked actor's id, if the state invokes one. */
  invoke?: string;
  /** The child machine the state invokes (a parent's state), by its id. */
  child?: string;
  tags?: string[];
}

export interface DiagramTransition {
  from: string;
  to: string;
  /** The machine's event type (`xstate.done.actor.runAgent`, ...) or `always`. */
  event: string;
  /** A short label: `done runAgent`, `error runAgent`, `always`. */
  label: string;
  guard?: string;
  /** The guard's parameters (a parent's route: the state it leads to). */
  params?: Record<string, unknown>;
}

export interface DiagramGraph {
  id: string;
  /** The machine's own description: for a child machine, the input it is invoked with. */
  description?: string;
  initial: string;
  states: DiagramState[];
  transitions: DiagramTransition[];
}

/** A child machine of a composition: its id, and the states of the flat graph that are its. */
export interface DiagramCluster {
  id: string;
  states: string[];
}

/** One machine transition of a composition: the machine's id and the transition's index in its graph. */
export interface MachineTransitionRef {
  machine: string;
  index: number;
}

export interface CompositionGraph extends DiagramGraph {
  /** The children, in the order the parent declares the states that invoke them. */
  clusters: DiagramCluster[];
  /** Each machine's own graph: the parent's first, then the children's. */
  machines: DiagramGraph[];
  /** For each flat transition (same index): the machine transitions it is made of, in order. */
  through: MachineTransitionRef[][];
}

interface TransitionLike {
  target?: readonly { key: string }[];
  guard?: unknown;
}

function guardOf(guard: unknown): { guard?: string; params?: Record<string, unknown> } {
  if (guard === undefined || guard === null) return {};
  if (typeof guard === "string") return { guard };
  if (typeof guard === "object" && "type" in guard) {
    const params = (guard as { params?: unknown }).params;
    return {
      guard: String((guard as { type: unknown }).type),
      ...(params && typeof params === "object" ? { params: params as Record<string, unknown> } : {}),
    };
  }
  return { guard: "inline" };
}

export function eventLabel(event: string): string {
  const done = /^xstate\.done\.actor\.(.+)$/.exec(event);
  if (done) return `done ${done[1]}`;
  const error = /^xstate\.error\.actor\.(.+)$/.exec(event);
  if (error) return `error ${error[1]}`;
  return event;
}

/** A machine that invokes `src`, if its implementation is a machine itself. */
function childMachine(machine: AnyStateMachine, src: unknown): AnyStateMachine | undefined {
  const logic = typeof src === "string" ? (machine.implementations.actors as Record<string, unknown>)[src] : src;
  return logic && typeof logic === "object" && "root" in logic && "implementations" in logic ? (logic as AnyStateMachine) : undefined;
}

/** One machine's own graph: its top-level states and every transition with a target. */
export function machineGraph(machine: AnyStateMachine): DiagramGraph {
  const root = machine.root;
  const states: DiagramState[] = [];
  const transitions: DiagramTransition[] = [];
  const push = (from: string, event: string, transition: TransitionLike) => {
    for (const target of transition.target ?? [])
      transitions.push({ from, to: target.key, event, label: eventLabel(event), ...guardOf(transition.guard) });
  };
  for (const [key, node] of Object.entries(root.states)) {
    const invoked = node.invoke[0];
    const child = invoked ? childMachine(machine, invoked.src) : undefined;
    states.push({
      id: key,
      final: node.type === "final",
      ...(invoked ? { invoke: invoked.id } : {}),
      ...(child ? { child: child.id } : {}),
      ...(node.tags.length > 0 ? { tags: [...node.tags] } : {}),
    });
    for (const [event, list] of node.transitions) for (const transition of list) push(key, event, transition as TransitionLike);
    for (const transition of node.always ?? []) push(key, "always", transition as TransitionLike);
  }
  return {
    id: root.key,
    ...(root.description !== undefined ? { description: root.description } : {}),
    initial: String(root.initial?.target?.[0]?.key ?? states[0]?.id),
    states,
    transitions,
  };
}

/**
 * The composition of a parent machine whose states each invoke a child machine (or are final), and
 * whose routes out of a child's state each name, as their guard's `to`, the child's final state they
 * follow (machines/iteration.ts `routesOut`). Throws when the two do not fit: a bug in the machines.
 */
export function compositionGraph(parent: AnyStateMachine): CompositionGraph {
  const top = machineGraph(parent);
  const children = new Map<string, DiagramGraph>();
  for (const state of top.states) {
    if (state.final) continue;
    const node = parent.root.states[state.id]!;
    const child = childMachine(parent, node.invoke[0]?.src);
    if (!child) throw new Error(`state ${state.id} of ${top.id} invokes no child machine`);
    children.set(state.id, machineGraph(child));
  }
  const finalsOf = (graph: DiagramGraph) => new Set(graph.states.filter((s) => s.final).map((s) => s.id));
  /** Where entering the parent's state `to` lands in the flat graph. */
  const landing = (to: string): string => children.get(to)?.initial ?? to;

  const states: DiagramState[] = [];
  const transitions: DiagramTransition[] = [];
  const through: MachineTransitionRef[][] = [];
  const clusters: DiagramCluster[] = [];
  for (const [container, child] of children) {
    const finals = finalsOf(child);
    const own = child.states.filter((s) => !s.final);
    clusters.push({ id: child.id, states: own.map((s) => s.id) });
    states.push(...own.map(({ final: _final, ...s }) => ({ ...s, final: false })));
    child.transitions.forEach((t, index) => {
      const via: MachineTransitionRef[] = [{ machine: child.id, index }];
      let to = t.to;
      if (finals.has(t.to)) {
        const routeIndex = top.transitions.findIndex((r) => r.from === container && r.params?.to === t.to);
        if (routeIndex < 0) throw new Error(`${top.id} has no route out of ${container} for its child's final state ${t.to}`);
        via.push({ machine: top.id, index: routeIndex });
        to = landing(top.transitions[routeIndex]!.to);
      }
      const { params: _params, ...flat } = t;
      transitions.push({ ...flat, to });
      through.push(via);
    });
  }
  states.push(...top.states.filter((s) => s.final));
  return {
    id: top.id,
    initial: landing(top.initial),
    states,
    transitions,
    clusters,
    machines: [top, ...children.values()],
    through,
  };
}
