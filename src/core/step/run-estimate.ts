// How long a run in progress may still take, from its recent iterations (what `runner watch` shows):
// the iterations left are the open leaves at the recent pace (iterations per leaf passed), or what
// max_iterations still allows, whichever comes first; each takes the recent mean time; the run's time
// budget caps it. An estimate, nothing decides on it. Pure.

export interface EstimateInput {
  /** The newest iterations, oldest first: how long each took (ms) and whether it passed a leaf. */
  recent: readonly { ms: number; passed: boolean }[];
  /** Open leaves in the tree now. */
  openLeaves: number;
  /** Iterations the run may still take (max_iterations less those done), where known. */
  iterationsLeft: number | undefined;
  /** What is left of the run's time budget (ms), where it has one. */
  budgetMsLeft: number | undefined;
}

export interface Estimate {
  iterations: number;
  ms: number;
  /** What ends the run first: its work done, max_iterations, or the time budget. */
  bound: "work" | "max_iterations" | "time budget";
}

/** How many recent iterations the pace is taken from. */
export const ESTIMATE_WINDOW = 10;

/** The estimate, or undefined when there is nothing to take a pace from (no iteration yet, or none passed and no limit). */
export function estimateToEnd(input: EstimateInput): Estimate | undefined {
  const recent = input.recent.slice(-ESTIMATE_WINDOW);
  if (input.openLeaves === 0) return { iterations: 0, ms: 0, bound: "work" };
  if (recent.length === 0) return undefined;
  const meanMs = recent.reduce((sum, it) => sum + it.ms, 0) / recent.length;
  const passed = recent.filter((it) => it.passed).length;
  const forWork = passed > 0 ? Math.ceil((input.openLeaves * recent.length) / passed) : undefined;
  const left = input.iterationsLeft === undefined ? undefined : Math.max(0, input.iterationsLeft);
  let estimate: Estimate;
  if (forWork !== undefined && (left === undefined || forWork <= left)) estimate = { iterations: forWork, ms: forWork * meanMs, bound: "work" };
  else if (left !== undefined) estimate = { iterations: left, ms: left * meanMs, bound: "max_iterations" };
  else return undefined;
  if (input.budgetMsLeft !== undefined && input.budgetMsLeft < estimate.ms) {
    const budget = Math.max(0, input.budgetMsLeft);
    return { iterations: Math.min(estimate.iterations, Math.ceil(budget / Math.max(1, meanMs))), ms: budget, bound: "time budget" };
  }
  return estimate;
}
