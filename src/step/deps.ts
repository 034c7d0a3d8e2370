// What the step's actors are made from: the repository, the environment, the clock, and the
// callbacks of the command that runs the step. Created once per step by run-step.ts.
import type { GitRepo, RepoStatus } from "../adapters/git/git.js";
import type { RepositoryStatePaths } from "../adapters/state/runner-state.js";

export type Phase = "prompt" | "agent" | "guard" | "commit";

/** Live progress of a step, for the CLI's views. */
export interface ProgressEvent {
  type: "phase" | "output";
  phase: Phase;
  iteration?: number;
  nodeId?: string;
  title?: string;
  text?: string;
}

export interface StepDeps {
  root: string;
  /** The environment the runner was started with (agents and guards inherit it). */
  env: Record<string, string>;
  /** Wall clock for logs and deadlines only; nothing decided depends on it. */
  now: () => number;
  abortSignal?: AbortSignal;
  onProgress?: (event: ProgressEvent) => void;
  /** What is left of `runner run`'s cost budget ([limits] max_run_cost_usd), for an agent that caps its own spending. */
  costLeftUsd?: number;
  /**
   * Why this runner no longer holds the repository's lock, or undefined while it does
   * (src/adapters/state/lock.ts): asked right before the branch moves, so a runner that lost it commits nothing.
   */
  lockLost?: () => string | undefined;
  /** The safety check's first `git status`, when the command started it early (src/step/early-status.ts). */
  earlyStatus?: Promise<RepoStatus>;
}

/** StepDeps plus what every actor shares and never changes. */
export interface ActorDeps extends StepDeps {
  /** The repository's git folder. */
  gitDir: string;
  /** The runner's own state for this repository (its index, the journal), outside the repository. */
  state: RepositoryStatePaths;
  /** Git on the work tree with the runner's own index, hardened (src/adapters/git/git.ts). */
  git: GitRepo;
  /** Values replaced by `***` in everything written (CONTRACT §9). */
  secrets: readonly string[];
}
