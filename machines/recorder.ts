// Records what a run of the iteration machine did, through XState's inspection API: the states it
// entered (meta.json `path`) and every transition it took (events.jsonl), eventless ones named
// `always`, actor results that only record facts (no target) as a transition to the same state.
import type { InspectionEvent } from "xstate";

export interface Transition {
  from: string;
  event: string;
  to: string;
}

export interface Recorder {
  /** The states entered, in order, the initial one first. */
  readonly path: string[];
  /** Every transition taken, in order, the first being the start (`(start)` → the initial state). */
  readonly transitions: Transition[];
  /** Pass as `createActor(machine, { inspect })`. */
  inspect(event: InspectionEvent): void;
}

/**
 * `onEnter` is called on entry to each state, before the state's actor starts (XState starts
 * invoked actors after the microstep that entered the state); for the initial state, at once.
 */
export function createRecorder(
  initial: string,
  hooks: { onEnter?: (state: string) => void; onTransition?: (transition: Transition) => void } = {},
): Recorder {
  const path = [initial];
  const start = { from: "(start)", event: "xstate.init", to: initial };
  const transitions: Transition[] = [start];
  hooks.onTransition?.(start);
  hooks.onEnter?.(initial);
  return {
    path,
    transitions,
    inspect(event) {
      if (event.type !== "@xstate.microstep") return; // only machines take microsteps: this one
      for (const transition of event._transitions) {
        const from = transition.source.key;
        const target = transition.target?.[0]?.key;
        const recorded = { from, event: transition.eventType === "" ? "always" : event.event.type, to: target ?? from };
        transitions.push(recorded);
        hooks.onTransition?.(recorded);
        if (target !== undefined) {
          path.push(target);
          hooks.onEnter?.(target);
        }
      }
    },
  };
}
