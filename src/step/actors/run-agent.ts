// Step 5, a fresh agent session: the executor of `[executor] kind`, the prompt on stdin and the
// RUNNER_* environment (CONTRACT §6), within the iteration's budget (which starts now and is
// shared with the guard: the deadline is part of what this actor reports). The runner's own `just`
// comes first on the agent's PATH, so the agent can run the guard itself. What the agent's event
// stream said (usage, session, its own error, a limit) is reported with how it ended; an agent that
// failed without an answer is reported with its own words (src/core/agent/agent-failure.ts).
import { fromPromise } from "xstate";
import { findAgent } from "../../agents/registry.js";
import { answerFile, readAgentAnswer } from "../../adapters/agent/agent-answer.js";
import { executorFor } from "../../adapters/executors/registry.js";
import { IterationLog } from "../../adapters/records/iteration-log.js";
import { recordContainment } from "../../adapters/records/journal.js";
import { outcomeOf, prepareAheadStart } from "../../adapters/process/process-runner.js";
import { agentFailure } from "../../core/agent/agent-failure.js";
import { agentStepKind, type AgentRunFacts } from "../../core/step/step-facts.js";
import { redactSecrets } from "../../core/base/text-limits.js";
import type { AgentRequest } from "../../../machines/iteration-types.js";
import type { ActorDeps } from "../deps.js";

export function runAgentActor({ root, env, state, secrets, now, abortSignal, onProgress, costLeftUsd }: ActorDeps) {
  return fromPromise<AgentRunFacts, AgentRequest>(async ({ input: { start, leaf, prompt } }) => {
    const log = new IterationLog(root, start.runId, start.iteration, secrets);
    const deadlineMs = now() + start.config.limits.iterationTimeoutSeconds * 1000;
    const nodeId = leaf?.leaf.id;
    onProgress?.({ type: "phase", phase: "agent", iteration: start.iteration, nodeId, title: leaf?.leaf.title });
    // What is left of the run's cost budget is the session's own cap when the agent has one (Claude --max-budget-usd).
    const configured = start.config.executor;
    const capCost = findAgent(configured.kind)?.capCost;
    const executor = capCost && costLeftUsd !== undefined ? { ...capCost(configured, costLeftUsd), kind: configured.kind } : configured;
    const result = await executorFor(executor.kind).run({
      root,
      config: executor,
      prompt,
      promptFile: log.file("prompt.md"),
      outputFile: answerFile(log),
      env: {
        ...env,
        RUNNER_PROMPT_FILE: log.file("prompt.md"),
        RUNNER_OUTPUT_FILE: answerFile(log),
        RUNNER_RUN_ID: start.runId,
        RUNNER_ITERATION: String(start.iteration),
        RUNNER_NODE_ID: nodeId ?? "",
        RUNNER_STEP_KIND: agentStepKind(start.stepKind),
        RUNNER_REPO_ROOT: root,
      },
      guardCommand: start.config.guard.command,
      deadlineMs,
      logFile: log.file("executor.log"),
      capBytes: start.config.limits.outputCapBytes,
      secrets,
      now,
      abortSignal,
      onOutput: (chunk) => onProgress?.({ type: "output", phase: "agent", iteration: start.iteration, text: chunk }),
      onSpawn: (record) => recordContainment(state.journal, record),
    });
    // Everything the agent started has ended (the executor waits for that): the guard's contained
    // start can begin while its answer, the tree and the work tree are looked at.
    prepareAheadStart();
    const session = result.session;
    const ended = !result.timedOut && !result.aborted && result.spawnError === undefined;
    // The answer, read and checked once (re-load takes it from here): whether the agent answered
    // decides whether a non-zero exit or its own error is a failure.
    const answer = ended ? readAgentAnswer(log) : undefined;
    const answered = answer?.ok === true;
    const failure = ended
      ? agentFailure({
          agent: executor.kind === "command" ? (executor.command?.[0] ?? "the agent") : executor.kind,
          exitCode: result.exitCode,
          ownError: session?.error,
          answered,
          stderrTail: result.stderrTail,
        })
      : undefined;
    return {
      ...outcomeOf(result),
      argv: result.argv.map((arg) => redactSecrets(arg, secrets)),
      deadlineMs,
      ...(answer !== undefined ? { answer } : {}),
      ...(failure !== undefined ? { failure } : {}),
      ...(session?.error !== undefined ? { ownError: session.error } : {}),
      ...(session?.usage !== undefined ? { usage: session.usage } : {}),
      ...(session?.limit !== undefined ? { limit: session.limit } : {}),
      ...(session?.sessionId !== undefined ? { sessionId: session.sessionId } : {}),
      ...(result.isolation !== undefined ? { isolation: result.isolation } : {}),
    };
  });
}
