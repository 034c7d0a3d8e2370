// The iteration machine as a plain graph, read from the machine definition itself (`machine.root`),
// `always` transitions included (toDirectedGraph leaves them out). Every renderer starts here.
import type { AnyStateMachine } from "xstate";

export interface DiagramState {
  id: string;
  final: boolean;
  /** The invoked actor's id, if the state invokes one. */
  invoke?: string;
}

export interface DiagramTransition {
  from: string;
  to: string;
  /** The machine's event type (`xstate.done.actor.runAgent`, ...) or `always`. */
  event: string;
  /** A short label: `done runAgent`, `error runAgent`, `always`. */
  label: string;
  guard?: string;
}

export interface DiagramGraph {
  id: string;
  initial: string;
  states: DiagramState[];
  transitions: DiagramTransition[];
}

interface TransitionLike {
  target?: readonly { key: string }[];
  guard?: unknown;
}

function guardName(guard: unknown): string | undefined {
  if (guard === undefined || guard === null) return undefined;
  if (typeof guard === "string") return guard;
  if (typeof guard === "object" && "type" in guard) return String((guard as { type: unknown }).type);
  return "inline";
}

export function eventLabel(event: string): string {
  const done = /^xstate\.done\.actor\.(.+)$/.exec(event);
  if (done) return `done ${done[1]}`;
  const error = /^xstate\.error\.actor\.(.+)$/.exec(event);
  if (error) return `error ${error[1]}`;
  return event;
}

export function machineGraph(machine: AnyStateMachine): DiagramGraph {
  const root = machine.root;
  const states: DiagramState[] = [];
  const transitions: DiagramTransition[] = [];
  const push = (from: string, event: string, transition: TransitionLike) => {
    for (const target of transition.target ?? []) {
      const guard = guardName(transition.guard);
      transitions.push({ from, to: target.key, event, label: eventLabel(event), ...(guard ? { guard } : {}) });
    }
  };
  for (const [key, node] of Object.entries(root.states)) {
    const invoke = node.invoke[0]?.id;
    states.push({ id: key, final: node.type === "final", ...(invoke ? { invoke } : {}) });
    for (const [event, list] of node.transitions) for (const transition of list) push(key, event, transition as TransitionLike);
    for (const transition of node.always ?? []) push(key, "always", transition as TransitionLike);
  }
  return { id: root.key, initial: String(root.initial?.target?.[0]?.key ?? states[0]?.id), states, transitions };
}
