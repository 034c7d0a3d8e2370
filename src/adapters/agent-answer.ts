// The agent's answer (CONTRACT §6): the one file the agent writes its JSON answer to, in the
// iteration's log folder. This module alone names it; the prompt, the agent's environment and the
// executors get its path from here, and it is read and checked once per iteration.
import { readFile, stat } from "node:fs/promises";
import { parseAgentOutput, type AgentOutputCheck } from "../core/agent-output.js";
import { iterationDir } from "../core/layout.js";
import type { IterationLog } from "./iteration-log.js";

const ANSWER_FILE = "output.json";

/** The answer file's absolute path (RUNNER_OUTPUT_FILE). */
export function answerFile(log: IterationLog): string {
  return log.file(ANSWER_FILE);
}

/** The answer file's path relative to the repository, as messages name it. */
export function answerFileName(runId: string, iteration: number): string {
  return `${iterationDir(runId, iteration)}/${ANSWER_FILE}`;
}

/**
 * The answer read and checked against the agent output schema. The file is in the agent's reach:
 * only a regular file is read (a FIFO or a device planted there is no answer and cannot block).
 */
export async function readAgentAnswer(log: IterationLog): Promise<AgentOutputCheck> {
  const file = answerFile(log);
  const name = answerFileName(log.runId, log.iteration);
  let text: string | undefined;
  try {
    const info = await stat(file);
    if (!info.isFile()) return { ok: false, reason: `the output file ${name} is not a regular file` };
    text = await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  return parseAgentOutput(text, name);
}
