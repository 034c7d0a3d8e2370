// Iteration classification (seed 001 §5 step 7, CONTRACT §7).

export type IterationKind = "decompose" | "execute";

/** Paths under `.runner/` belong to the runner's state and notes; anything else is the project. */
export function isRunnerPath(path: string): boolean {
  return path === ".runner" || path.startsWith(".runner/");
}

/** EXECUTE if any changed path lies outside `.runner/`, else DECOMPOSE (no change at all included). */
export function classifyChangedPaths(changedPaths: readonly string[]): IterationKind {
  return changedPaths.some((path) => !isRunnerPath(path)) ? "execute" : "decompose";
}
