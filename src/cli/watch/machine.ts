// The iteration machine as `runner watch` shows it: the states the newest iteration went through and
// when it entered each, from the run's events.jsonl (CONTRACT §8: one line per transition —
// iteration, from, event, to, time). The lines are the agent's to write as well: a line that is not
// a transition (not JSON, a field of the wrong type or size, a time that is not one) is skipped, and
// only so many states are kept.

export interface StateVisit {
  state: string;
  /** When the machine entered it (epoch ms). */
  at: number;
}

export interface MachineTrack {
  iteration: number;
  /** The states in the order entered; the last is where the machine is (or ended). */
  visits: StateVisit[];
}

/** The final states of the machine (CONTRACT §4): an iteration that reached one is over. */
export const FINAL_STATES = new Set(["committed", "nothingToDo", "refused", "failed", "crashed"]);

const MAX_VISITS = 64;
/** The `from` of an iteration's first line: the machine starting. */
export const START = "(start)";
const STATE_NAME = /^[A-Za-z]{1,40}$/;

/** One transition line, or undefined when the line is not one. */
export function parseTransition(line: string): { iteration: number; from: string; to: string; at: number } | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const { iteration, from, to, time } = value as Record<string, unknown>;
  if (typeof iteration !== "number" || !Number.isSafeInteger(iteration) || iteration < 1) return undefined;
  if (typeof from !== "string" || typeof to !== "string" || !(STATE_NAME.test(from) || from === START) || !STATE_NAME.test(to)) return undefined;
  const at = typeof time === "string" && time.length <= 40 ? Date.parse(time) : Number.NaN;
  return Number.isFinite(at) ? { iteration, from, to, at } : undefined;
}

/** A transition as the watch tells it: into `to`, after `spentMs` in `from` (where its entry is known). */
export interface MachineStep {
  iteration: number;
  from: string;
  to: string;
  at: number;
  spentMs: number | undefined;
}

/** The track with the new lines taken in (a line of a newer iteration starts a new track), and the steps they told. */
export function followMachine(track: MachineTrack | undefined, lines: readonly string[]): { track: MachineTrack | undefined; steps: MachineStep[] } {
  let current = track;
  const steps: MachineStep[] = [];
  for (const line of lines) {
    const step = parseTransition(line);
    if (step === undefined || (current !== undefined && step.iteration < current.iteration)) continue;
    if (current === undefined || step.iteration > current.iteration) {
      // Where the iteration's first line is missing (read from the middle), its first state counts from its first transition out.
      current = { iteration: step.iteration, visits: step.from === START ? [] : [{ state: step.from, at: step.at }] };
      if (step.from !== START) {
        if (step.to !== step.from) {
          steps.push({ ...step, spentMs: undefined });
          current.visits.push({ state: step.to, at: step.at });
        }
        continue;
      }
    }
    // A transition that stays in its state (an actor's result taken, then an eventless one out) is no visit.
    if (step.to === step.from) continue;
    const last = current.visits.at(-1);
    steps.push({ ...step, spentMs: last?.state === step.from ? step.at - last.at : undefined });
    current.visits = [...current.visits, { state: step.to, at: step.at }].slice(-MAX_VISITS);
  }
  return { track: current, steps };
}

/** Whether the track's iteration is over (the machine reached a final state). */
export function trackEnded(track: MachineTrack): boolean {
  return FINAL_STATES.has(track.visits.at(-1)?.state ?? "");
}
