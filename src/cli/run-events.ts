// The events of `runner run` as JSON objects: one line each of `runner run --json`, and what a hook
// gets on stdin ([hooks] in the config) — the same shape, so a script written against one reads both.
import { totalsOf } from "../core/agent/agent-usage.js";
import type { RunNotice, RunSummary } from "../run/run-loop.js";
import type { StepResult } from "../step/run-step.js";
import { stepJson } from "./step-report.js";

export type RunEvent = Record<string, unknown> & { type: "iteration" | "summary" | "wait" | "stuck" | "lock"; time: string };

export function iterationEvent(result: StepResult, now: number): RunEvent {
  return { type: "iteration", ...(stepJson(result) as object), time: iso(now) };
}

export function summaryEvent(summary: RunSummary, now: number): RunEvent {
  return {
    type: "summary",
    exit_code: summary.exitCode,
    reason: summary.reason,
    run_id: summary.runId ?? null,
    iterations: summary.iterations,
    passes: summary.passes,
    failures: summary.failures.total,
    failure_kinds: summary.failures,
    agent_ms: summary.agentMs,
    guard_ms: summary.guardMs,
    wait_ms: summary.waitMs,
    runner_ms: summary.runnerMs,
    total_ms: summary.totalMs,
    usage: summary.usage ? totalsOf(summary.usage) : null,
    time: iso(now),
  };
}

export function noticeEvent(notice: RunNotice, runId: string | undefined, now: number): RunEvent {
  if (notice.type === "wait") {
    return {
      type: "wait",
      run_id: runId ?? null,
      cause: notice.cause,
      seconds: notice.seconds,
      until: iso(notice.until),
      message: notice.message,
      time: iso(now),
    };
  }
  if (notice.type === "lock") return { type: "lock", run_id: runId ?? null, cause: notice.cause, message: notice.message, time: iso(now) };
  return {
    type: "stuck",
    run_id: runId ?? null,
    node_id: notice.nodeId ?? null,
    cause: notice.cause,
    attempts: notice.attempts ?? null,
    max_attempts: notice.maxAttempts ?? null,
    message: notice.message,
    time: iso(now),
  };
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
