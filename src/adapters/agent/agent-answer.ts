// The agent's answer (CONTRACT §6): the one file the agent writes its JSON answer to, in the
// iteration's log folder. This module alone names it; the prompt, the agent's environment and the
// executors get its path from here, and it is read and checked once per iteration.
import { parseAgentOutput, type AgentOutputCheck } from "../../core/agent/agent-output.js";
import { iterationDir } from "../../core/base/layout.js";
import type { IterationLog } from "../records/iteration-log.js";
import { readAgentFile } from "../files/safe-files.js";

const ANSWER_FILE = "output.json";

/** The answer file's absolute path (RUNNER_OUTPUT_FILE). */
export function answerFile(log: IterationLog): string {
  return log.file(ANSWER_FILE);
}

/** The answer file's path relative to the repository, as messages name it. */
function answerFileName(runId: string, iteration: number): string {
  return `${iterationDir(runId, iteration)}/${ANSWER_FILE}`;
}

/**
 * The answer read and checked against the agent output schema. The file is in the agent's reach:
 * only a regular file is read, never through a symbolic link (a FIFO or a device planted there is no
 * answer and cannot block; a link to a file elsewhere is no answer either).
 */
export function readAgentAnswer(log: IterationLog): AgentOutputCheck {
  const name = answerFileName(log.runId, log.iteration);
  const read = readAgentFile(answerFile(log));
  if (read.kind === "not-regular") return { ok: false, reason: `the output file ${name} is not a regular file` };
  return parseAgentOutput(read.kind === "text" ? read.text : undefined, name);
}
