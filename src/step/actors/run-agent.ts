// Step 5, a fresh agent session: the executor of `[executor] kind`, the prompt on stdin and the
// RUNNER_* environment (CONTRACT §6), within the iteration's budget (which starts now and is
// shared with the guard: the deadline is part of what this actor reports).
import { fromPromise } from "xstate";
import { executorFor } from "../../adapters/executors/registry.js";
import { IterationLog } from "../../adapters/iteration-log.js";
import { recordContainment } from "../../adapters/journal.js";
import type { AgentRunFacts } from "../../core/step-facts.js";
import { redactSecrets } from "../../core/text-limits.js";
import type { AgentRequest } from "../../../machines/iteration-types.js";
import type { ActorDeps } from "../deps.js";

export function runAgentActor({ root, env, state, secrets, now, abortSignal, onProgress }: ActorDeps) {
  return fromPromise<AgentRunFacts, AgentRequest>(async ({ input }) => {
    const log = new IterationLog(root, input.runId, input.iteration, secrets);
    const deadlineMs = now() + input.config.limits.iterationTimeoutSeconds * 1000;
    onProgress?.({ type: "phase", phase: "agent", iteration: input.iteration, nodeId: input.nodeId, title: input.title });
    const result = await executorFor(input.config.executor.kind).run({
      root,
      config: input.config.executor,
      prompt: input.prompt,
      promptFile: log.file("prompt.md"),
      outputFile: log.file("output.json"),
      env: {
        ...env,
        RUNNER_PROMPT_FILE: log.file("prompt.md"),
        RUNNER_OUTPUT_FILE: log.file("output.json"),
        RUNNER_RUN_ID: input.runId,
        RUNNER_ITERATION: String(input.iteration),
        RUNNER_NODE_ID: input.nodeId ?? "",
        RUNNER_STEP_KIND: input.stepKind,
        RUNNER_REPO_ROOT: root,
      },
      deadlineMs,
      logFile: log.file("executor.log"),
      capBytes: input.config.limits.outputCapBytes,
      secrets,
      abortSignal,
      onOutput: (chunk) => onProgress?.({ type: "output", phase: "agent", iteration: input.iteration, text: chunk }),
      onSpawn: (record) => recordContainment(state.journal, record),
    });
    return {
      exitCode: result.exitCode,
      timedOut: result.timedOut,
      aborted: result.aborted,
      spawnError: result.spawnError,
      durationMs: result.durationMs,
      argv: result.argv.map((arg) => redactSecrets(arg, secrets)),
      deadlineMs,
    };
  });
}
