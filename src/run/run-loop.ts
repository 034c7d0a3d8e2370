// `runner run`: steps until the root passes, a stop condition, or an error (CONTRACT §4), made to
// last a night unattended:
// - a runner error a retry can cure (src/core/step/run-policy.ts) is retried after a backoff, until
//   `[limits] max_consecutive_runner_errors` come in a row; a rate or usage limit is waited out
//   (until its reset, bounded by `max_limit_wait_seconds`); other runner errors stop the run (seed
//   000: a timeout stops it);
// - `max_stalled_iterations` iterations in a row that change nothing in the task tree stop it
//   (exit 3), naming the leaf, the reason and `runner recheck`;
// - the run's budgets (time, tokens, cost) are checked between iterations;
// - what happens is told as notices (a wait, a stuck leaf) beside the steps, for the views and hooks.
import { setTimeout as wait } from "node:timers/promises";
import { loadConfig, loadTree } from "../adapters/files/project-files.js";
import { addUsage, type UsageTotals } from "../core/agent/agent-usage.js";
import { countFailures, failureKindOf, type FailureCounts } from "../core/commit/iteration-outcome.js";
import { recordFacts } from "../core/step/iteration-record.js";
import { DEFAULT_LIMITS, type ResolvedConfig } from "../core/config/config.js";
import { checkDerivedPasses } from "../core/tree/invariants.js";
import { formatDuration } from "../core/step/durations.js";
import { afterRunnerError, backoffSeconds, budgetReached, limitWait, stallReason, stallSentence } from "../core/step/run-policy.js";
import { selectLeftmostOpenLeaf } from "../core/tree/select.js";
import { EXIT, exitCodeOfStep, type ExitCode } from "../exit-codes.js";
import { bugSentence } from "../errors.js";
import { runStep, type StepResult } from "../step/run-step.js";
import type { ProgressEvent } from "../step/deps.js";
import { waitScale } from "../step/test-hooks.js";

export interface RunOptions {
  root: string;
  runIdOption?: string;
  /** Iterations this invocation may run; default `[limits] max_iterations`. */
  maxIterations?: number;
  haltOnStuck: boolean;
  env: Record<string, string>;
  now: () => number;
  abortSignal?: AbortSignal;
  onProgress?: (event: ProgressEvent) => void;
  onStep?: (result: StepResult) => void | Promise<void>;
  onNotice?: (notice: RunNotice) => void | Promise<void>;
  /** Why the runner no longer holds the repository's lock (src/step/deps.ts), for every step. */
  lockLost?: () => string | undefined;
  /** Called before each iteration: where a person's edit waiting for the lock is made (the lock handed over). */
  betweenIterations?: () => Promise<void>;
  /** Before each iteration: who asked this run to stop after its current iteration (a person, from `runner watch`), if anyone. */
  stopRequested?: () => string | undefined;
}

/** What the run tells beside its steps. */
export type RunNotice =
  | {
      type: "wait";
      /** Why: a retry after a runner error, or a rate or usage limit. */
      cause: "retry" | "limit";
      seconds: number;
      /** Epoch ms. */
      until: number;
      /** One sentence for the user. */
      message: string;
    }
  | {
      type: "lock";
      /** A waiting file that asked for the lock without a person behind it, or the lock handed to a person's edit. */
      cause: "ignored" | "handed-over";
      message: string;
    }
  | {
      type: "stuck";
      nodeId: string | undefined;
      /** A leaf whose attempts reached max_attempts, or a run that stops for lack of progress. */
      cause: "attempts" | "no-progress";
      /** The run stops on it (its message is the summary's reason, which a person reads once). */
      endsRun: boolean;
      attempts?: number;
      maxAttempts?: number;
      message: string;
    };

export interface RunSummary {
  exitCode: ExitCode;
  /** The sentence the run ends with. */
  reason: string;
  runId?: string;
  iterations: number;
  passes: number;
  /** The iterations that failed, by kind (src/core/commit/iteration-outcome.ts: the one rule for every view). */
  failures: FailureCounts;
  agentMs: number;
  guardMs: number;
  runnerMs: number;
  totalMs: number;
  /** Time spent waiting (retries, limits). */
  waitMs: number;
  /** Tokens and cost of the agents, summed over the iterations that reported them. */
  usage?: UsageTotals;
  last?: StepResult;
}

/** The stuck leaf `runner step` would select next, if any (an invalid tree is the step's to repair). */
async function stuckLeaf(root: string): Promise<{ id: string; attempts: number; max: number } | undefined> {
  const load = await loadTree(root);
  if (!load.ok || checkDerivedPasses(load.tree).length > 0) return undefined;
  const selection = selectLeftmostOpenLeaf(load.tree);
  if (selection.kind !== "leaf" || !selection.stuck) return undefined;
  return { id: selection.leaf.id, attempts: selection.leaf.attempts, max: selection.leaf.max_attempts };
}

/** What a person can do about a stuck leaf, as one clause. */
export function stuckCommands(id: string): string {
  return `give it more attempts (\`runner unstick ${id}\`), reword it (\`runner edit ${id} --goal …\`), split it (\`runner add ${id} --title …\`) or drop it (\`runner remove ${id}\`)`;
}

/** Waits `ms`, or less when the run is stopped. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return wait(ms, undefined, { signal }).catch(() => undefined); // (aborted: the run is being stopped)
}

export async function runLoop(options: RunOptions): Promise<RunSummary> {
  const startedAt = options.now();
  const summary: RunSummary = {
    exitCode: 0,
    reason: "",
    iterations: 0,
    passes: 0,
    failures: countFailures([]),
    agentMs: 0,
    guardMs: 0,
    runnerMs: 0,
    totalMs: 0,
    waitMs: 0,
  };
  const loaded = await loadConfig(options.root);
  // (an invalid config: the first step refuses and says why)
  const limits: ResolvedConfig["limits"] = loaded.ok ? loaded.config.limits : DEFAULT_LIMITS;
  const maxIterations = options.maxIterations ?? limits.maxIterations;
  const scale = waitScale(options.env);
  const deadline = limits.maxRunSeconds === undefined ? undefined : startedAt + limits.maxRunSeconds * 1000;
  const finish = (exitCode: ExitCode, reason: string): RunSummary => {
    summary.exitCode = exitCode;
    summary.reason = reason;
    summary.totalMs = Math.round(options.now() - startedAt);
    summary.runnerMs = Math.max(0, summary.totalMs - summary.agentMs - summary.guardMs - summary.waitMs);
    return summary;
  };
  /** Who asked the run to stop after its current iteration, once someone did. */
  let asker: string | undefined;
  const stopAsked = () => (asker ??= options.stopRequested?.()) !== undefined;
  const wait = async (notice: Extract<RunNotice, { type: "wait" }>) => {
    await options.onNotice?.(notice);
    const before = options.now();
    const until = before + notice.seconds * 1000 * scale;
    // Looked at every second: a person's request to stop ends a wait (no iteration is under way).
    while (!options.abortSignal?.aborted && !stopAsked()) {
      const left = until - options.now();
      if (left <= 0) break;
      await sleep(Math.min(left, 1000), options.abortSignal);
    }
    summary.waitMs += Math.round(options.now() - before);
  };

  /** Runner errors in a row (retries), with their sentences; limit hits in a row and the time waited for them. */
  const errors: string[] = [];
  let limitHits = 0;
  let limitWaited = 0;
  /** Iterations in a row without progress, and the leaf they were on. */
  let stalled = 0;
  let stalledLeaf: string | undefined;

  for (;;) {
    if (options.abortSignal?.aborted) return finish(EXIT.failed, "Stopped: the run was interrupted.");
    if (summary.iterations >= maxIterations) {
      return finish(
        EXIT.stoppedEarly,
        `Stopped early: reached max_iterations (${maxIterations}) with work left; run \`runner run\` again to continue.`,
      );
    }
    const spentUsd = summary.usage?.cost_usd ?? 0;
    const budget = budgetReached(limits, {
      elapsedSeconds: (options.now() - startedAt) / 1000,
      tokens: (summary.usage?.input_tokens ?? 0) + (summary.usage?.output_tokens ?? 0),
      costUsd: spentUsd,
    });
    if (budget) return finish(EXIT.stoppedEarly, budget);
    if (stopAsked()) {
      return finish(
        EXIT.stoppedEarly,
        `Stopped early: ${asker} asked to stop after the current iteration (${summary.iterations} done); run \`runner run\` again to continue.`,
      );
    }
    await options.betweenIterations?.();
    if (options.haltOnStuck) {
      const stuck = await stuckLeaf(options.root);
      if (stuck) {
        const reason = `Stopped early: leaf ${stuck.id} is stuck (${stuck.attempts}/${stuck.max} attempts); ${stuckCommands(stuck.id)}, or run without --halt-on-stuck to let the agent decompose it.`;
        await options.onNotice?.({
          type: "stuck",
          nodeId: stuck.id,
          cause: "attempts",
          attempts: stuck.attempts,
          maxAttempts: stuck.max,
          message: reason,
          endsRun: true,
        });
        return finish(EXIT.stoppedEarly, reason);
      }
    }
    const result = await runStep({
      root: options.root,
      env: options.env,
      now: options.now,
      runIdOption: options.runIdOption,
      abortSignal: options.abortSignal,
      onProgress: options.onProgress,
      lockLost: options.lockLost,
      costLeftUsd: limits.maxRunCostUsd === undefined ? undefined : limits.maxRunCostUsd - spentUsd,
    });
    summary.last = result;
    summary.runId = result.runId ?? summary.runId;
    const record = result.record;
    if (record) {
      summary.iterations += 1;
      summary.agentMs += result.durations.agentMs;
      summary.guardMs += result.durations.guardMs;
      summary.usage = addUsage(summary.usage, result.usage);
      if (record.passesAfter && record.guard === "pass") summary.passes += 1;
      const failed = failureKindOf(recordFacts(record));
      if (failed) {
        summary.failures.total += 1;
        summary.failures[failed] += 1;
      }
    }
    await options.onStep?.(result);
    // The iteration that made the root pass ends the run, whatever the iteration limit.
    if (result.outcome === "nothing-to-do" || (result.outcome === "committed" && record?.treeToWrite?.root.passes)) {
      return finish(EXIT.ok, `Done: the root passes (run ${result.runId}).`);
    }
    if (result.outcome === "crashed") return finish(EXIT.bug, bugSentence(result.error));

    const error = result.outcome === "failed" && record?.runnerError && result.commit !== undefined ? record.runnerError : undefined;
    if (!error) {
      // A refusal, or a step that could not persist or commit its iteration: a person must look.
      if (exitCodeOfStep(result.outcome) !== EXIT.ok) return finish(EXIT.failed, result.message);
      errors.length = 0;
      limitHits = 0;
      limitWaited = 0;
      if (!record) continue;
      // A leaf that has just used its last attempt.
      if (
        record.stepKind === "leaf" &&
        !record.passesAfter &&
        record.attemptsAfter !== undefined &&
        record.maxAttempts !== undefined &&
        record.attemptsAfter >= record.maxAttempts &&
        (record.attemptsBefore ?? 0) < record.maxAttempts
      ) {
        await options.onNotice?.({
          type: "stuck",
          nodeId: record.nodeId,
          cause: "attempts",
          attempts: record.attemptsAfter,
          maxAttempts: record.maxAttempts,
          message: `Leaf ${record.nodeId} is stuck (${record.attemptsAfter}/${record.maxAttempts} attempts); the next iteration asks the agent to decompose it.`,
          endsRun: false,
        });
      }
      if (record.progressed) {
        stalled = 0;
        continue;
      }
      stalled += 1;
      stalledLeaf = record.nodeId ?? stalledLeaf;
      if (limits.maxStalledIterations > 0 && stalled >= limits.maxStalledIterations) {
        const reason = stallSentence(stalledLeaf, stalled, stallReason(record));
        await options.onNotice?.({ type: "stuck", nodeId: stalledLeaf, cause: "no-progress", message: reason, endsRun: true });
        return finish(EXIT.stoppedEarly, reason);
      }
      continue;
    }

    // A runner error, recorded and committed: retry, wait, or stop.
    const action = afterRunnerError(error);
    if (action === "stop") return finish(EXIT.failed, result.message);
    if (action === "wait" && result.limit) {
      limitHits += 1;
      const resetsAtMs = result.limit.resetsAt === undefined ? undefined : Date.parse(result.limit.resetsAt);
      const plan = limitWait(
        { ...result.limit, resetsAtMs },
        { now: options.now(), hits: limitHits, waitedSeconds: limitWaited, maxWaitSeconds: limits.maxLimitWaitSeconds, deadline },
      );
      if (plan.action === "stop") return finish(EXIT.stoppedEarly, plan.reason);
      limitWaited += plan.seconds;
      const reset =
        resetsAtMs !== undefined && Number.isFinite(resetsAtMs) ? ` (it resets at ${new Date(resetsAtMs).toLocaleTimeString("en-GB")})` : "";
      await wait({
        type: "wait",
        cause: "limit",
        seconds: plan.seconds,
        until: plan.until,
        message: `Waiting ${formatDuration(plan.seconds * 1000)} for the agent's ${result.limit.kind} limit${reset}; Ctrl-C stops the run.`,
      });
      continue;
    }
    errors.push(`iteration ${record!.iteration}: ${error.message}`);
    if (errors.length >= limits.maxConsecutiveRunnerErrors) {
      return finish(
        EXIT.failed,
        `Stopped: ${errors.length} runner errors in a row (${errors.join("; ")}); fix the cause and run \`runner run\` again.`,
      );
    }
    // (an iteration the runner's own death interrupted is recorded at the start of a run: no reason to wait)
    const seconds = error.kind === "runner_stopped" ? 0 : backoffSeconds(limits.retryBackoffSeconds, errors.length);
    if (deadline !== undefined && options.now() + seconds * 1000 > deadline) {
      return finish(
        EXIT.stoppedEarly,
        `Stopped early: a retry after the runner error of iteration ${record!.iteration} would come after the end of the run's time budget ([limits] max_run_seconds); run \`runner run\` again later.`,
      );
    }
    if (seconds === 0) continue;
    await wait({
      type: "wait",
      cause: "retry",
      seconds,
      until: options.now() + seconds * 1000,
      message: `Retrying in ${formatDuration(seconds * 1000)} after a runner error (${errors.length} of at most ${limits.maxConsecutiveRunnerErrors} in a row): ${error.message}`,
    });
  }
}
