// Step 8, the guard (`just ci` by default), run in the repository root within what is left of the
// iteration's budget, with the runner's own `just` first on its PATH (as the agent had it).
import { fromPromise } from "xstate";
import { IterationLog } from "../../adapters/iteration-log.js";
import { recordContainment } from "../../adapters/journal.js";
import { withRunnerJust } from "../../adapters/just-bin.js";
import { runProcess } from "../../adapters/process-runner.js";
import type { GuardFacts } from "../../core/step-facts.js";
import type { GuardRequest } from "../../../machines/iteration-types.js";
import type { ActorDeps } from "../deps.js";

export function runGuardActor({ root, env, state, secrets, abortSignal, onProgress }: ActorDeps) {
  return fromPromise<GuardFacts, GuardRequest>(async ({ input }) => {
    const log = new IterationLog(root, input.runId, input.iteration, secrets);
    onProgress?.({ type: "phase", phase: "guard", iteration: input.iteration, nodeId: input.nodeId, title: input.title });
    // The program found before the agent ran (its identity was checked since): not a new PATH lookup.
    const [program, ...args] = input.config.guard.command;
    const result = await runProcess({
      argv: [input.guardProgram.file ?? program!, ...args],
      cwd: root,
      env: { ...withRunnerJust(env), RUNNER_RUN_ID: input.runId, RUNNER_ITERATION: String(input.iteration), RUNNER_NODE_ID: input.nodeId ?? "" },
      deadlineMs: input.deadlineMs,
      logFile: log.file("guard.log"),
      capBytes: input.config.limits.outputCapBytes,
      secrets,
      abortSignal,
      onOutput: (chunk) => onProgress?.({ type: "output", phase: "guard", iteration: input.iteration, text: chunk }),
      onSpawn: (record) => recordContainment(state.journal, record),
    });
    return { exitCode: result.exitCode, timedOut: result.timedOut, aborted: result.aborted, spawnError: result.spawnError, durationMs: result.durationMs, output: result.excerpt };
  });
}
