// How a step is told: its sentence, its line (and the guard's last lines after a red guard), its
// JSON, and its exit code. Shared by `runner step`, `runner recheck`, `runner run`'s live view and
// its --json events.
import { totalsOf, type UsageTotals } from "../core/agent/agent-usage.js";
import { outcomeLabel } from "../core/commit/iteration-outcome.js";
import { recordFacts } from "../core/step/iteration-record.js";
import { firstFew } from "../core/base/text-limits.js";
import { bugSentence } from "../errors.js";
import { EXIT, exitCodeOfStep } from "../exit-codes.js";
import type { StepResult } from "../step/run-step.js";
import { guardTail } from "./guard-tail.js";
import { printError, printLine, reportError } from "./output.js";
import { PLAIN, type Style } from "./style.js";

/** How many of the guard's last lines follow the line of an iteration whose guard failed. */
export const GUARD_TAIL_LINES = 5;

/** A step as `--json` prints it (`runner step`, `runner recheck`, and `runner mcp`'s recheck tool). */
export interface StepJson {
  outcome: StepResult["outcome"];
  message: string;
  run_id: string | null;
  iteration: number | null;
  node_id: string | null;
  kind: string | null;
  agent_status: string | null;
  guard_outcome: string | null;
  attempts_after: number | null;
  passes_after: boolean | null;
  commit: string | null;
  usage: UsageTotals | null;
  path: string[];
  guard_output_tail: string[];
  tests_changed: string[];
}

export function stepJson(result: StepResult): StepJson {
  const record = result.record;
  return {
    outcome: result.outcome,
    message: describeStep(result),
    run_id: result.runId ?? null,
    iteration: record?.iteration ?? null,
    node_id: record?.nodeId ?? null,
    kind: record?.kind ?? null,
    agent_status: record?.status ?? null,
    guard_outcome: record?.guard ?? null,
    attempts_after: record?.attemptsAfter ?? null,
    passes_after: record?.passesAfter ?? null,
    commit: result.commit ?? null,
    usage: result.usage ? totalsOf(result.usage) : null,
    path: result.path,
    guard_output_tail: guardTail(record?.failure, GUARD_TAIL_LINES),
    tests_changed: record?.testFilesChanged ?? [],
  };
}

/** The sentence a step ends with. */
export function describeStep(result: StepResult): string {
  if (result.outcome === "crashed") return bugSentence(result.error);
  if (result.outcome !== "committed" || !result.record) return result.message;
  return describeIteration(result) ?? result.message;
}

/** One line about the iteration a step recorded (committed, or ended in a runner error), or undefined when it recorded none. */
function describeIteration(result: StepResult): string | undefined {
  const record = result.record;
  if (!record || result.outcome === "crashed") return undefined;
  const commit = result.commit ? ` (commit ${result.commit.slice(0, 7)})` : "";
  if (record.stepKind === "repair") {
    if (record.runnerError) return `Iteration ${record.iteration}: repair of the task tree${commit} — runner error: ${record.runnerError.message}`;
    return record.treeToWrite
      ? `Iteration ${record.iteration}: repaired the task tree${commit}.`
      : `Iteration ${record.iteration}: the repair left the tree invalid${commit}; the next step tries again.`;
  }
  if (record.stepKind === "recheck") {
    const failed = record.failure ? ` — ${record.failure.split("\n")[0]}` : "";
    const others = record.rechecked.length;
    const also = others === 0 ? "" : ` with ${others} more plan-finished ${others === 1 ? "leaf" : "leaves"} (${firstFew(record.rechecked)})`;
    return record.passesAfter
      ? `Iteration ${record.iteration}: re-checked node ${record.nodeId}, guard=pass; ${record.nodeId} passed${also}${commit}.`
      : `Iteration ${record.iteration}: re-checked node ${record.nodeId}, guard=${record.guard}; ${record.nodeId} stays open, attempts ${record.attemptsAfter}/${record.maxAttempts}${commit}${failed}`;
  }
  // A runner error is named as what it was (an unreadable answer, an interruption), not by the retry the runner records for it.
  const head = record.runnerError
    ? `Iteration ${record.iteration}: node ${record.nodeId}, ${outcomeLabel(recordFacts(record))}, guard=${record.guard}`
    : `Iteration ${record.iteration}: node ${record.nodeId} ${record.kind}, agent said ${record.status ?? "?"}, guard=${record.guard}`;
  if (!record.treeToWrite) return `${head}; the agent left the task tree invalid${commit}, so the next step repairs it.`;
  const result2 = record.passesAfter ? `${record.nodeId} passed` : `${record.nodeId} open, attempts ${record.attemptsAfter}/${record.maxAttempts}`;
  const failure = record.runnerError ? ` — ${record.runnerError.message}` : record.failure ? ` — ${record.failure.split("\n")[0]}` : "";
  return `${head}; ${result2}${commit}${failure}`;
}

/** How an iteration's line is coloured: green when its node passed, red for a failure, yellow for a leaf that used its last attempt. */
function iterationTone(result: StepResult): "passed" | "failed" | "warning" | undefined {
  const record = result.record;
  if (!record) return undefined;
  if (record.runnerError || record.guard === "fail" || record.failure || (!record.treeToWrite && record.stepKind !== "repair")) return "failed";
  if (record.passesAfter) return "passed";
  if (record.attemptsAfter !== undefined && record.maxAttempts !== undefined && record.attemptsAfter >= record.maxAttempts) return "warning";
  return undefined;
}

/**
 * The iteration's line, then the last lines of the guard's output when its guard failed (indented,
 * dim): what failed, where a person looks first. Empty when the step recorded no iteration.
 */
export function iterationLines(result: StepResult, style: Style = PLAIN): string[] {
  const line = describeIteration(result);
  if (line === undefined) return [];
  const tail = guardTail(result.record?.failure, GUARD_TAIL_LINES).map((text) => style.dim(`    ${text}`));
  return [style.tone(iterationTone(result), line), ...tail];
}

/** Prints the outcome (a bug: its sentence, and the stack with --debug) and returns the exit code. */
export function reportStep(result: StepResult, print: boolean, debug: boolean, style: Style = PLAIN): number {
  const code = exitCodeOfStep(result.outcome);
  if (result.outcome === "crashed") reportError(result.error, debug);
  else if (code !== EXIT.ok) printError(describeStep(result));
  else if (print) {
    const lines = iterationLines(result, style);
    if (lines.length > 0) for (const line of lines) printLine(line);
    else printLine(describeStep(result));
  }
  return code;
}
