// Step 8, the guard (`just ci` by default), run in the repository root within what is left of the
// iteration's budget, with the runner's own `just` first on its PATH (as the agent had it); with
// `[guard] isolation = "worktree"`, in a clean checkout of exactly what the iteration will commit
// (after the guard's setup command), for proof that the committed content passes.
import { fromPromise } from "xstate";
import { candidateCommit, cleanRunResult, runInCleanCheckout } from "../../adapters/git/clean-checkout.js";
import { IterationLog } from "../../adapters/records/iteration-log.js";
import { recordContainment } from "../../adapters/records/journal.js";
import { outcomeOf, runProcess } from "../../adapters/process/process-runner.js";
import type { GuardFacts } from "../../core/step/step-facts.js";
import type { GuardRequest } from "../../../machines/iteration-types.js";
import type { ActorDeps } from "../deps.js";

export function runGuardActor({ root, env, git, state, secrets, abortSignal, onProgress }: ActorDeps) {
  return fromPromise<GuardFacts, GuardRequest>(async ({ input: { start, leaf, deadlineMs, batch } }) => {
    const log = new IterationLog(root, start.runId, start.iteration, secrets);
    const nodeId = leaf.leaf.id;
    onProgress?.({ type: "phase", phase: "guard", iteration: start.iteration, nodeId, title: leaf.leaf.title });
    const guardEnv = {
      ...env,
      RUNNER_RUN_ID: start.runId,
      RUNNER_ITERATION: String(start.iteration),
      RUNNER_NODE_ID: nodeId,
      // Every leaf this guard run judges (a re-check of plan-finished leaves judges several): a guard that judges per node judges them all.
      RUNNER_NODE_IDS: (batch ?? [nodeId]).join(" "),
    };
    const onOutput = (chunk: string) => onProgress?.({ type: "output", phase: "guard", iteration: start.iteration, text: chunk });
    const guard = start.config.guard;
    if (guard.isolation === "worktree") {
      const run = await runInCleanCheckout(git, {
        commit: await candidateCommit(git, start.from.head),
        guard: guard.command,
        setup: guard.setup,
        env: guardEnv,
        deadlineMs,
        setupLog: log.file("setup.log"),
        guardLog: log.file("guard.log"),
        logTop: root,
        capBytes: start.config.limits.outputCapBytes,
        secrets,
        abortSignal,
        onOutput,
      });
      const result = cleanRunResult(run);
      const output = run.guard ? result.excerpt : `The guard's setup \`${guard.setup!.join(" ")}\` failed in the clean checkout:\n${result.excerpt}`;
      return { ...outcomeOf(result), output };
    }
    // The program found before the agent ran (its identity was checked since): not a new PATH lookup.
    const [program, ...args] = guard.command;
    const result = await runProcess({
      argv: [start.guardProgram.file ?? program!, ...args],
      cwd: root,
      env: guardEnv,
      deadlineMs,
      logFile: log.file("guard.log"),
      logTop: root,
      capBytes: start.config.limits.outputCapBytes,
      secrets,
      abortSignal,
      onOutput,
      onSpawn: (record) => recordContainment(state.journal, record),
    });
    return { ...outcomeOf(result), output: result.excerpt };
  });
}
