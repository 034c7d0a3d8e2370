// `runner step`: one iteration (the machine of the seeds). Exit 0 when an iteration was committed or
// nothing is left to do, 1 when refused or when the iteration ended in a runner error after it was
// persisted and committed (CONTRACT §4). On a terminal, the live block of `runner run` while it
// works (one iteration); after a red guard, the last lines of the guard's output.
import type { StepResult } from "../../step/run-step.js";
import type { GlobalArgs } from "../command-table.js";
import { printJson } from "../output.js";
import { findProjectRoot } from "../repo.js";
import { processEnv } from "../environment.js";
import { withRepositoryLock } from "../repository-lock.js";
import { startEarlyStatus } from "../../step/early-status.js";
import { PLAIN, styleFor, type Style } from "../style.js";
import type { ProgressView } from "../progress.js";
import { reportStep, stepJson } from "../step-report.js";

export async function run(argv: GlobalArgs & { runId?: string; json?: boolean }): Promise<number> {
  const root = findProjectRoot(argv.C);
  const env = processEnv();
  const style = argv.json ? PLAIN : styleFor(process.stdout);
  const view = !argv.json && process.stdout.isTTY ? await liveBlock(root, argv.runId, style) : undefined;
  let result: StepResult;
  try {
    result = await withRepositoryLock(root, "runner step", async (lock) => {
      // git reads the work tree while the step's code loads.
      const early = await startEarlyStatus(root, env);
      const { runStep } = await import("../../step/run-step.js");
      return runStep({
        root,
        env,
        now: Date.now,
        runIdOption: argv.runId,
        earlyStatus: early?.status,
        lockLost: () => lock.lost(),
        onProgress: view ? (event) => view.progress(event) : undefined,
      });
    });
  } finally {
    view?.close();
  }
  if (argv.json) printJson(stepJson(result));
  return reportStep(result, !argv.json, argv.debug, style);
}

/** The live block of `runner run`, for one iteration. */
async function liveBlock(root: string, runIdOption: string | undefined, style: Style): Promise<ProgressView> {
  const [{ terminalView }, { branchRunId, currentLeaves }] = await Promise.all([import("../progress.js"), import("../run-facts.js")]);
  const startedAt = Date.now();
  const [runId, leaves] = await Promise.all([runIdOption ?? branchRunId(root), currentLeaves(root)]);
  return terminalView(process.stdout, Date.now, runId ?? "(no run branch)", { style, facts: { startedAt, maxIterations: 1, leaves } });
}
