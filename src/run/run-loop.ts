// `runner run`: steps until the root passes, a stop condition, or an error (CONTRACT §4).
// Seed 000: a timeout stops the whole run — every runner error ends the run after its iteration
// was committed.
import { readIterationUsage } from "../adapters/iteration-usage.js";
import { loadConfig, loadTree } from "../adapters/project-files.js";
import { addUsage, type UsageTotals } from "../core/agent-usage.js";
import { checkDerivedPasses } from "../core/invariants.js";
import { selectLeftmostOpenLeaf } from "../core/select.js";
import { EXIT, exitCodeOfStep, type ExitCode } from "../exit-codes.js";
import { bugSentence } from "../errors.js";
import { runStep, type StepResult } from "../step/run-step.js";
import type { ProgressEvent } from "../step/deps.js";

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
  onStep?: (result: StepResult) => void;
}

export interface RunSummary {
  exitCode: ExitCode;
  /** The sentence the run ends with. */
  reason: string;
  runId?: string;
  iterations: number;
  passes: number;
  failures: number;
  agentMs: number;
  guardMs: number;
  runnerMs: number;
  totalMs: number;
  /** Tokens and cost of the agents, summed over the iterations whose meta.json recorded them. */
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

export async function runLoop(options: RunOptions): Promise<RunSummary> {
  const startedAt = options.now();
  const summary: RunSummary = { exitCode: 0, reason: "", iterations: 0, passes: 0, failures: 0, agentMs: 0, guardMs: 0, runnerMs: 0, totalMs: 0 };
  const config = await loadConfig(options.root);
  const maxIterations = options.maxIterations ?? (config.ok ? config.config.limits.maxIterations : 50);
  const finish = (exitCode: ExitCode, reason: string): RunSummary => {
    summary.exitCode = exitCode;
    summary.reason = reason;
    summary.totalMs = Math.round(options.now() - startedAt);
    summary.runnerMs = Math.max(0, summary.totalMs - summary.agentMs - summary.guardMs);
    return summary;
  };

  for (;;) {
    if (options.abortSignal?.aborted) return finish(EXIT.failed, "Stopped: the run was interrupted.");
    if (summary.iterations >= maxIterations) {
      return finish(EXIT.stoppedEarly, `Stopped early: reached max_iterations (${maxIterations}) with work left; run \`runner run\` again to continue.`);
    }
    if (options.haltOnStuck) {
      const stuck = await stuckLeaf(options.root);
      if (stuck) {
        return finish(EXIT.stoppedEarly, `Stopped early: leaf ${stuck.id} is stuck (${stuck.attempts}/${stuck.max} attempts); decompose it by hand or run without --halt-on-stuck to let the agent decompose it.`);
      }
    }
    const result = await runStep({
      root: options.root,
      env: options.env,
      now: options.now,
      runIdOption: options.runIdOption,
      abortSignal: options.abortSignal,
      onProgress: options.onProgress,
    });
    summary.last = result;
    summary.runId = result.runId ?? summary.runId;
    if (result.record) {
      summary.iterations += 1;
      summary.agentMs += result.durations.agentMs;
      summary.guardMs += result.durations.guardMs;
      const record = result.record;
      summary.usage = addUsage(summary.usage, await readIterationUsage(options.root, record.runId, record.iteration));
      if (record.passesAfter && record.guard === "pass") summary.passes += 1;
      if (record.runnerError || record.guard === "fail" || record.failure) summary.failures += 1;
    }
    options.onStep?.(result);
    // The iteration that made the root pass ends the run, whatever the iteration limit.
    if (result.outcome === "nothing-to-do" || (result.outcome === "committed" && result.record?.treeToWrite?.root.passes)) {
      return finish(EXIT.ok, `Done: the root passes (run ${result.runId}).`);
    }
    if (result.outcome === "crashed") return finish(EXIT.bug, bugSentence(result.error));
    if (exitCodeOfStep(result.outcome) !== EXIT.ok) return finish(EXIT.failed, result.message);
  }
}
