// Whether an agent that ran to its end failed, and in whose words. An agent fails when it gave no
// usable answer and either said it failed (Codex `turn.failed`, Claude's result with `is_error`) or
// exited with a code other than 0. The sentence names the agent's exit status and its own message
// (else the last lines of its stderr), never "no output file": that the answer is missing follows
// from the failure. An agent that answered is judged on its answer, whatever its exit code.
import { oneLine } from "../base/text-limits.js";

export interface AgentEnd {
  /** "codex", "claude", or the command's program. */
  agent: string;
  exitCode: number | undefined;
  /** The agent's own failure message, from its event stream. */
  ownError: string | undefined;
  /** The output file holds a valid answer. */
  answered: boolean;
  /** The end of the agent's stderr (redacted). */
  stderrTail: string;
}

const MAX_MESSAGE = 600;
const STDERR_LINES = 3;

/** The last few non-empty lines of stderr, joined with " / ". */
export function lastLines(text: string, count = STDERR_LINES): string {
  const lines = text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== "");
  return lines.slice(-count).join(" / ");
}

/** One line without a closing period (the runner's sentence goes on after it), clipped. */
function clause(text: string): string {
  return oneLine(text.replace(/[.\s]+$/, ""), MAX_MESSAGE);
}

/** The failure as one clause, or undefined when the agent did not fail (or answered anyway). */
export function agentFailure(end: AgentEnd): string | undefined {
  if (end.answered) return undefined;
  const exit = end.exitCode === undefined ? "" : ` (exit code ${end.exitCode})`;
  if (end.ownError !== undefined && end.ownError.trim() !== "") return `${end.agent} failed${exit}: ${clause(end.ownError)}`;
  if (end.exitCode === undefined || end.exitCode === 0) return undefined;
  const stderr = lastLines(end.stderrTail);
  return `${end.agent} exited with code ${end.exitCode}${stderr ? `: ${clause(stderr)}` : " and wrote nothing on stderr"}`;
}
