// What happens after a runner error (seed 002 records every one the same way: a retry, guard
// skipped, attempts unchanged). `runner step` reports it and exits 1; `runner run` goes on after the
// errors a retry can cure, waits for a rate or usage limit to reset, and stops on the rest (seed
// 000: a timeout stops the run).
import type { RunnerErrorFact } from "./step-facts.js";

/** What `runner run` does after an iteration that ended in this runner error. */
export type ErrorAction = "retry" | "wait" | "stop";

/** The model API refused the agent's credentials: no retry cures that, a person must log in. */
const AUTH_FAILURE = /\b401\b|\b403\b|unauthori[sz]ed|invalid (?:api )?key|not logged in|please (?:log|sign) ?in|authentication (?:failed|error)/i;

export function afterRunnerError(error: RunnerErrorFact): ErrorAction {
  switch (error.kind) {
    // Another session may well answer: the agent crashed or its model API failed (5xx, overload,
    // network) — unless the API refused its credentials —, it left no valid answer, or the runner
    // itself was killed mid-iteration.
    case "agent_failed":
      return AUTH_FAILURE.test(error.message) ? "stop" : "retry";
    case "output_parse_error":
    case "runner_stopped":
      return "retry";
    case "agent_limit":
      return "wait";
    // A timeout (seed 000), the user's Ctrl-C, a guard that cannot run, git or the file system
    // failing: the same again would fail the same way, or a person asked to stop.
    case "executor_timeout":
    case "interrupted":
    case "guard_error":
    case "other":
      return "stop";
  }
}

/** The sentence a step that ended in a runner error ends with (its iteration was committed). */
export function runnerErrorSentence(iteration: number, error: RunnerErrorFact): string {
  const recorded = "it was recorded and committed as a retry without using an attempt";
  if (error.kind === "interrupted" || error.kind === "runner_stopped") return `Iteration ${iteration} was interrupted: ${error.message}; ${recorded}. Run \`runner run\` or \`runner step\` to go on.`;
  const next = afterRunnerError(error) === "stop" ? "fix the cause and run `runner step` again" : "run `runner step` again (`runner run` retries it by itself)";
  return `Iteration ${iteration} ended in a runner error: ${error.message}. It was recorded and committed as a retry without using an attempt; ${next}.`;
}
