// What happens after a runner error (seed 002 records every one the same way: a retry, guard
// skipped, attempts unchanged). `runner step` reports it and exits 1; `runner run` goes on after the
// errors a retry can cure, waits for a rate or usage limit to reset, and stops on the rest (seed
// 000: a timeout stops the run).
import { formatDuration } from "./durations.js";
import { iterationDir } from "../base/layout.js";
import type { RunnerErrorFact } from "./step-facts.js";

/** What `runner run` does after an iteration that ended in this runner error. */
export type ErrorAction = "retry" | "wait" | "stop";

/** The model API refused the agent's credentials: no retry cures that, a person must log in. */
const AUTH_FAILURE =
  /\b401\b|\b403\b|unauthori[sz]ed|invalid (?:api )?key|not logged in|please (?:log|sign) ?in|authentication (?:failed|error)|no authentication information|could not be validated|no api key found|please set an auth method/i;

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

/** The sentence a step that ended in a runner error ends with (its iteration was committed); it names the iteration's log folder. */
export function runnerErrorSentence(runId: string, iteration: number, error: RunnerErrorFact): string {
  const recorded = `it was recorded and committed as a retry without using an attempt (its logs: ${iterationDir(runId, iteration)}/)`;
  if (error.kind === "interrupted" || error.kind === "runner_stopped")
    return `Iteration ${iteration} was interrupted: ${error.message}; ${recorded}. Run \`runner run\` or \`runner step\` to go on.`;
  const next =
    afterRunnerError(error) === "stop" ? "fix the cause and run `runner step` again" : "run `runner step` again (`runner run` retries it by itself)";
  return `Iteration ${iteration} ended in a runner error: ${error.message}. ${recorded[0]!.toUpperCase()}${recorded.slice(1)}; ${next}.`;
}

// Waiting before the next iteration.

/** The longest wait between retries after runner errors. */
export const MAX_BACKOFF_SECONDS = 15 * 60;

/** Seconds to wait before the retry after the `errorsInARow`-th runner error in a row: the base, doubled each time, bounded. */
export function backoffSeconds(baseSeconds: number, errorsInARow: number): number {
  return Math.min(MAX_BACKOFF_SECONDS, baseSeconds * 2 ** Math.max(0, errorsInARow - 1));
}

/** What a rate or usage limit says about the wait: its reset (epoch ms, and as the agent's ISO text), or none. */
export interface LimitFact {
  kind: "rate" | "usage";
  resetsAtMs?: number;
  resetsAt?: string;
}

/** Seconds added to a reset time: the limit is gone a little after the minute the agent names. */
export const RESET_MARGIN_SECONDS = 5;
/** Without a reset time: the first wait for a rate limit, and for a usage limit (doubled on each hit in a row). */
const UNKNOWN_RESET_SECONDS = { rate: 60, usage: 15 * 60 } as const;

export type LimitWait = { action: "wait"; seconds: number; until: number } | { action: "stop"; reason: string };

/**
 * How long to wait for a limit: until its reset when the agent named one, else a growing guess
 * (`hits` limits in a row). Waiting longer than `maxWaitSeconds` in all (this wait plus `waitedSeconds`
 * of the same limit episode) or past the run's time budget (`deadline`, epoch ms) stops the run instead.
 */
export function limitWait(
  limit: LimitFact,
  input: { now: number; hits: number; waitedSeconds: number; maxWaitSeconds: number; deadline?: number },
): LimitWait {
  const known = limit.resetsAtMs !== undefined && Number.isFinite(limit.resetsAtMs);
  const seconds = known
    ? Math.max(1, Math.ceil((limit.resetsAtMs! - input.now) / 1000) + RESET_MARGIN_SECONDS)
    : Math.min(MAX_BACKOFF_SECONDS * 4, UNKNOWN_RESET_SECONDS[limit.kind] * 2 ** Math.max(0, input.hits - 1));
  const until = input.now + seconds * 1000;
  const what = `the agent's ${limit.kind} limit${known && limit.resetsAt ? ` resets at ${limit.resetsAt}` : ""}`;
  if (input.waitedSeconds + seconds > input.maxWaitSeconds) {
    const waited = input.waitedSeconds > 0 ? ` after waiting ${formatDuration(input.waitedSeconds * 1000)} for it` : "";
    return {
      action: "stop",
      reason: `Stopped early: ${what}${known ? "" : " (no reset time given)"}${waited}, beyond [limits] max_limit_wait_seconds (${input.maxWaitSeconds}); run \`runner run\` again once it has reset, or raise the limit.`,
    };
  }
  if (input.deadline !== undefined && until > input.deadline) {
    return {
      action: "stop",
      reason: `Stopped early: ${what}, after the end of the run's time budget ([limits] max_run_seconds); run \`runner run\` again later.`,
    };
  }
  return { action: "wait", seconds, until };
}

// Budgets of one run.

export interface RunBudgets {
  maxRunSeconds: number | undefined;
  maxRunTokens: number | undefined;
  maxRunCostUsd: number | undefined;
}

export interface RunSpend {
  elapsedSeconds: number;
  tokens: number;
  costUsd: number;
}

/** The sentence a run stops with when it reached one of its budgets, or undefined. */
export function budgetReached(budgets: RunBudgets, spend: RunSpend): string | undefined {
  const again = "raise it in .runner/state/config.toml, or run `runner run` again to go on with a fresh budget";
  if (budgets.maxRunSeconds !== undefined && spend.elapsedSeconds >= budgets.maxRunSeconds) {
    return `Stopped early: the run reached its time budget ([limits] max_run_seconds = ${budgets.maxRunSeconds}) after ${formatDuration(spend.elapsedSeconds * 1000)}; ${again}.`;
  }
  if (budgets.maxRunTokens !== undefined && spend.tokens >= budgets.maxRunTokens) {
    return `Stopped early: the run reached its token budget ([limits] max_run_tokens = ${budgets.maxRunTokens}) with ${spend.tokens} tokens used; ${again}.`;
  }
  if (budgets.maxRunCostUsd !== undefined && spend.costUsd >= budgets.maxRunCostUsd) {
    return `Stopped early: the run reached its cost budget ([limits] max_run_cost_usd = ${budgets.maxRunCostUsd}) with $${spend.costUsd.toFixed(2)} spent; ${again}.`;
  }
  return undefined;
}

// Progress.

/** What an iteration without progress did, in a few words, for the sentence the run stops with. */
export function stallReason(record: {
  stepKind: string;
  kind: string;
  status: string | undefined;
  guard: string;
  treeToWrite: unknown;
  attemptsAfter: number | undefined;
  maxAttempts: number | undefined;
}): string {
  const saturated = record.attemptsAfter !== undefined && record.maxAttempts !== undefined && record.attemptsAfter >= record.maxAttempts;
  if (record.stepKind === "repair") return "the repairs only put back the last valid tree";
  if (record.treeToWrite === undefined) return "the agent left the task tree invalid";
  if (record.kind === "decompose" && record.status === "done")
    return "the agent said done but changed nothing outside .runner/, so the guard did not run";
  if (record.guard === "fail" && saturated) return "the guard failed with the leaf's attempts already at max_attempts";
  if (record.status === "retry" && saturated)
    return "the agent said retry with the leaf's attempts already at max_attempts, and did not decompose it";
  return "nothing in the task tree changed";
}

/** The sentence a run stops with after `count` iterations in a row without progress on `nodeId`. */
export function stallSentence(nodeId: string | undefined, count: number, reason: string): string {
  const leaf = nodeId === undefined ? "the task tree" : `leaf ${nodeId}`;
  const way =
    nodeId === undefined
      ? "fix the tree by hand and commit it"
      : `if its work is already on the branch, run \`runner recheck ${nodeId}\` (a green guard passes it); otherwise change its goal, or split it into children in .runner/state/tree.json, and commit`;
  return `Stopped early: ${leaf} made no progress in ${count} iterations in a row (${reason}); ${way}.`;
}
