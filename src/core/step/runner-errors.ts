// Runner errors (seed 002 "Runner Error Recovery"): what can go wrong inside the runner rather than in
// the agent's work, and the one way each is recorded.
import type { ProcessFacts } from "../process/process-facts.js";

/**
 * The kinds of runner-internal failure of seed 002's recovery table. Each is recorded the same way
 * (a retry, guard skipped, attempts unchanged); they differ in what `runner run` does next
 * (src/core/step/run-policy.ts): `agent_failed` (the agent crashed or its model API failed),
 * `output_parse_error` and `runner_stopped` (the runner was killed mid-iteration) are retried,
 * `agent_limit` waits for the limit to reset, the others stop the run.
 */
export type RunnerErrorKind =
  | "executor_timeout"
  | "output_parse_error"
  | "guard_error"
  | "agent_failed"
  | "agent_limit"
  | "interrupted"
  | "runner_stopped"
  | "other";

/** A runner-internal failure of seed 002's recovery table: recorded as a retry, no attempt counted. */
export interface RunnerErrorFact {
  kind: RunnerErrorKind;
  message: string;
}

/** Seed 002's recovery table, one row for every kind: a retry with the guard skipped and attempts unchanged. */
export const RUNNER_ERROR_RECOVERY = { status: "retry", guard: "skipped", attempts: "unchanged" } as const;

/** The runner error of an agent or guard stopped by the budget or by an interrupted run. */
export function stoppedError(who: "agent" | "guard", facts: ProcessFacts, timeoutSeconds: number): RunnerErrorFact {
  if (facts.aborted) return { kind: "interrupted", message: `the run was stopped while the ${who} ran` };
  return { kind: "executor_timeout", message: `the ${who} did not finish within the iteration budget of ${timeoutSeconds} s and was killed` };
}
