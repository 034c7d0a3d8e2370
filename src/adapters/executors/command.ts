// kind = "command": the configured argv, run in the repository root.
import { outcomeOf, runProcess } from "../process/process-runner.js";
import type { Executor, ExecutorRequest, ExecutorResult } from "./executor.js";

/** Characters of stderr kept for a failure's message. */
const STDERR_TAIL_CHARS = 2_000;

export async function runArgv(argv: string[], request: ExecutorRequest, stdin: { throughPipe?: boolean } = {}): Promise<ExecutorResult> {
  let stderrTail = "";
  const result = await runProcess({
    argv,
    cwd: request.root,
    env: request.env,
    input: request.prompt,
    inputThroughPipe: stdin.throughPipe,
    deadlineMs: request.deadlineMs,
    logFile: request.logFile,
    logTop: request.root,
    capBytes: request.capBytes,
    secrets: request.secrets,
    abortSignal: request.abortSignal,
    onOutput: (chunk, stream) => {
      if (stream === "stderr") stderrTail = (stderrTail + chunk).slice(-STDERR_TAIL_CHARS);
      request.onOutput?.(chunk, stream);
    },
    observeStdout: request.observeStdout,
    onSpawn: request.onSpawn,
  });
  return { ...outcomeOf(result), argv, tail: result.tail, stderrTail };
}

export const commandExecutor: Executor = {
  run(request) {
    const argv = request.config.command;
    if (!argv || argv.length === 0) throw new Error('executor.command is required when kind = "command"');
    return runArgv([...argv], request);
  },
};
