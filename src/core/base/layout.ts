// Where everything lives in the user's repository (CONTRACT §2). Repository-relative, `/`-separated.

export const RUNNER_DIR = ".runner";
export const LAYOUT = {
  goal: ".runner/GOAL.md",
  tree: ".runner/state/tree.json",
  schema: ".runner/state/schema.json",
  config: ".runner/state/config.toml",
  /** The leaves an imported plan marks finished, for the guard to judge first (src/core/plan/plan-finished.ts). */
  finished: ".runner/state/finished.json",
  assumptions: ".runner/state/assumptions.md",
  questions: ".runner/state/questions.md",
  feedback: ".runner/state/feedback.md",
  improvements: ".runner/state/improvements.md",
  prompts: ".runner/prompts",
  nodes: ".runner/nodes",
  context: ".runner/context",
  iterations: ".runner/iterations",
  gitignore: ".runner/.gitignore",
} as const;

/** The lines `runner init` writes to `.runner/.gitignore`: local-only folders never committed. */
export const RUNNER_GITIGNORE = "# Written by `runner init`: local-only, never committed.\ncontext/\niterations/\n";

export function nodeSidecar(nodeId: string, file: "context.md" | "policy.json"): string {
  return `${LAYOUT.nodes}/${nodeId}/${file}`;
}

export function iterationDir(runId: string, iteration: number): string {
  return `${LAYOUT.iterations}/${runId}/${String(iteration).padStart(4, "0")}`;
}

export function eventsFile(runId: string): string {
  return `${LAYOUT.iterations}/${runId}/events.jsonl`;
}

/** The status file of a `runner run` in progress, for `runner watch` (src/core/step/live-status.ts). */
export function liveStatusFile(runId: string): string {
  return `${LAYOUT.iterations}/${runId}/live.json`;
}
