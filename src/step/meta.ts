// meta.json of an iteration (CONTRACT §8): what happened, in one JSON object.
import type { StepOutput, StepTrace } from "../../machines/iteration-types.js";
import { commitSubjectOf, type IterationRecord } from "../core/step/iteration-record.js";
import { formatCommitSubject } from "../core/commit/commit-message.js";
import type { AgentRunFacts } from "../core/step/step-facts.js";
import { keptSummary } from "../core/commit/loop-history.js";

export function iterationMeta(input: {
  /** What the step learnt on its way (machines/iteration.ts). */
  trace: StepTrace;
  output: StepOutput;
  record: IterationRecord;
  path: readonly string[];
  durations: { agentMs: number; guardMs: number; totalMs: number };
  startedAt: number;
  finishedAt: number;
}): object {
  const { trace, output, record, durations } = input;
  const agent = trace.agent;
  const guard = trace.guard;
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
    // A re-check of plan-finished leaves: the others its green guard passed.
    rechecked: record.rechecked,
    // (bounded: output.json beside it holds the agent's whole answer, which may be any size)
    summary: keptSummary(record.summary),
    failure: record.failure ?? null,
    runner_error: record.runnerError ?? null,
    tree_problems: record.treeProblems,
    changed_paths: record.changedPaths,
    tests_changed: record.testFilesChanged,
    // What the agent did to git itself (undone by the runner): its own commits, HEAD, control files.
    agent_git: record.agentGit ?? null,
    executor: agent ? executorMeta(agent) : null,
    // Tokens and cost of the agent's session (src/core/agent/agent-usage.ts), its own figures under its name.
    usage: agent?.usage ?? null,
    // A rate or usage limit the agent met; the run loop decides whether to wait for resets_at.
    limit: agent?.limit ? { kind: agent.limit.kind, resets_at: agent.limit.resetsAt ?? null, message: agent.limit.message } : null,
    guard: guard
      ? {
          command: trace.guardCommand,
          exit_code: guard.exitCode ?? null,
          timed_out: guard.timedOut,
          spawn_error: guard.spawnError ?? null,
        }
      : null,
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

/** How the agent ran: argv, exit, its own error (the failure the runner reported, else the message it gave anyway), session, isolation. */
function executorMeta(agent: AgentRunFacts): object {
  return {
    argv: agent.argv,
    exit_code: agent.exitCode ?? null,
    timed_out: agent.timedOut,
    spawn_error: agent.spawnError ?? null,
    error: agent.failure ?? agent.ownError ?? null,
    session_id: agent.sessionId ?? null,
    isolation: agent.isolation ?? null,
  };
}
