// meta.json of an iteration (CONTRACT §8): what happened, in one JSON object.
import type { IterationContext, StepOutput } from "../../machines/iteration-types.js";
import { commitSubjectOf, type IterationRecord } from "../core/iteration-record.js";
import { formatCommitSubject } from "../core/run-id.js";

export function iterationMeta(input: {
  context: IterationContext;
  output: StepOutput;
  record: IterationRecord;
  path: readonly string[];
  durations: { agentMs: number; guardMs: number; totalMs: number };
  startedAt: number;
  finishedAt: number;
}): object {
  const { context, output, record, durations } = input;
  return {
    run_id: record.runId,
    iteration: record.iteration,
    step_kind: record.stepKind,
    node_id: record.nodeId ?? null,
    kind: record.kind,
    agent_status: record.status ?? null,
    guard_outcome: record.guard,
    attempts_before: record.attemptsBefore ?? null,
    attempts_after: record.attemptsAfter ?? null,
    max_attempts: record.maxAttempts ?? null,
    passes_after: record.passesAfter ?? null,
    derived_passes: record.derivedPasses,
    summary: record.summary,
    failure: record.failure ?? null,
    runner_error: record.runnerError ?? null,
    tree_problems: record.treeProblems,
    changed_paths: record.changedPaths,
    // What the agent did to git itself (undone by the runner): its own commits, HEAD, control files.
    agent_git: record.agentGit ?? null,
    executor: context.agent ? { argv: context.agent.argv, exit_code: context.agent.exitCode ?? null, timed_out: context.agent.timedOut, spawn_error: context.agent.spawnError ?? null } : null,
    guard: context.guardRun ? { command: context.config?.guard.command, exit_code: context.guardRun.exitCode ?? null, timed_out: context.guardRun.timedOut, spawn_error: context.guardRun.spawnError ?? null } : null,
    durations: { agent_ms: durations.agentMs, guard_ms: durations.guardMs, total_ms: durations.totalMs },
    started_at: new Date(input.startedAt).toISOString(),
    finished_at: new Date(input.finishedAt).toISOString(),
    outcome: output.outcome,
    message: output.message,
    commit: output.commit ?? null,
    subject: formatCommitSubject(commitSubjectOf(record)),
    path: input.path,
  };
}
