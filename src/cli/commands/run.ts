// `runner run [--max-iterations N] [--halt-on-stuck]`: step until the root passes (exit 0), a stop
// condition (exit 3), or an error (1, or 2 for a bug). Ctrl-C kills the agent's process group; the
// interrupted iteration is recorded as a runner error and committed before the run stops.
import { GitRepo } from "../../adapters/git.js";
import { runLoop, type RunSummary } from "../../run/run-loop.js";
import { runIdFromBranch, runIdProblem } from "../../core/run-id.js";
import { UsageError } from "../../errors.js";
import { EXIT } from "../../exit-codes.js";
import type { GlobalArgs } from "../command-table.js";
import { processEnv } from "../environment.js";
import { printError } from "../output.js";
import { jsonView, plainView, terminalView, type ProgressView } from "../progress.js";
import { findProjectRoot } from "../repo.js";
import { withRepositoryLock } from "../repository-lock.js";

export interface RunArgs {
  maxIterations?: number;
  haltOnStuck: boolean;
  json: boolean;
  runId?: string;
}

export async function run(argv: RunArgs & GlobalArgs): Promise<number> {
  const root = findProjectRoot(argv.C);
  if (argv.runId !== undefined) {
    const problem = runIdProblem(argv.runId);
    if (problem) throw new UsageError(`${problem[0]!.toUpperCase()}${problem.slice(1)}.`);
  }
  const summary = await runWithView(root, argv);
  if (summary.last?.outcome === "crashed" && argv.debug && summary.last.error instanceof Error) printError(summary.last.error.stack ?? "");
  return summary.exitCode;
}

/** Runs the loop with the progress view that suits stdout, and Ctrl-C handling. */
export async function runWithView(root: string, argv: RunArgs, label?: string): Promise<RunSummary> {
  const write = (line: string) => process.stdout.write(line);
  const view: ProgressView = argv.json
    ? jsonView(write, Date.now)
    : process.stdout.isTTY
      ? terminalView(process.stdout, Date.now, label ?? argv.runId ?? (await branchRunId(root)) ?? "(no run branch)")
      : plainView(write);
  const controller = new AbortController();
  let interrupts = 0;
  const onSignal = () => {
    interrupts += 1;
    if (interrupts === 1) {
      printError("Stopping: the agent is being stopped; the iteration will be recorded and committed (Ctrl-C again to quit at once).");
      controller.abort();
    } else {
      process.exit(130);
    }
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  try {
    const summary = await withRepositoryLock(root, "runner run", () => runLoop({
      root,
      runIdOption: argv.runId,
      maxIterations: argv.maxIterations,
      haltOnStuck: argv.haltOnStuck,
      env: processEnv(),
      now: Date.now,
      abortSignal: controller.signal,
      onProgress: (event) => view.progress(event),
      onStep: (result) => view.step(result),
    }));
    if (controller.signal.aborted && summary.exitCode === 0) summary.exitCode = 1;
    view.summary(summary);
    // An error or a refusal: its sentence once, on stderr (a bug's, with the stack under --debug, by the caller).
    if (summary.exitCode === EXIT.failed || summary.exitCode === EXIT.bug) printError(summary.reason);
    return summary;
  } finally {
    view.close();
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}

/** The run id of the checked-out runner/<id> branch, for the progress header (the step itself decides and refuses). */
async function branchRunId(root: string): Promise<string | undefined> {
  try {
    return runIdFromBranch((await new GitRepo(root).status()).branch);
  } catch {
    return undefined;
  }
}
