// 5. A fresh agent session on the prompt, within the iteration's time budget. 6. Re-load and
// validate: the answer, the tree (immutability included), the changed paths. 7. Classify (DECOMPOSE
// / EXECUTE) and judge the agent's status (contract and path policies). Hands on to `guarding` (an
// EXECUTE iteration that says done), `stateUpdate`, `recording` (the tree left invalid, for the next
// repair step) or `recovery` (a runner error).
import { assign, setup } from "xstate";
import { judgeIteration, type Judgement } from "../src/core/guard/classify.js";
import { iterationRecord } from "../src/core/step/iteration-record.js";
import type { AgentRunFacts, CollectedFacts, RunnerErrorFact } from "../src/core/step/step-facts.js";
import { judgeAgentResult, judgeAgentRun } from "../src/core/step/step-verdicts.js";
import { ACTORS } from "./actors.js";
import { recoveryOf } from "./hand-offs.js";
import type { AgentPhase, AgentSessionInput, AnswerPhase, RecoveryInput, Route } from "./iteration-types.js";
import { FAILURE_GUARDS, finals, onFailure, recoverOnError, routeActions, type Routed, routedChild } from "./transitions.js";

/** The branch reloadTree takes: the result's verdict, told apart by the step (a repair has no leaf). */
type ResultBranch = "outputInvalid" | "agentTreeInvalid" | "repairAccepted" | "leafAccepted";

interface AgentSessionContext extends AgentSessionInput, Routed {
  /** 5. How the agent ran, and the verdict on it. */
  agent?: AgentPhase;
  /** 6. What the agent left, and the verdict on it. */
  answer?: AnswerPhase;
  result?: ResultBranch;
  /** 7. The classification and the judgement of the agent's status and changes (a leaf step's accepted result). */
  judgement?: Judgement;
}

export const agentSessionMachine = setup({
  types: { context: {} as AgentSessionContext, input: {} as AgentSessionInput, output: {} as Route },
  actors: { runAgent: ACTORS.runAgent, collectResult: ACTORS.collectResult },
  guards: {
    ...FAILURE_GUARDS,
    agentStopped: ({ context }) => context.agent?.verdict.kind === "agentStopped",
    agentNotStarted: ({ context }) => context.agent?.verdict.kind === "agentNotStarted",
    agentFailed: ({ context }) => context.agent?.verdict.kind === "agentFailed",
    agentFinished: ({ context }) => context.agent?.verdict.kind === "agentFinished",
    outputInvalid: ({ context }) => context.result === "outputInvalid",
    agentTreeInvalid: ({ context }) => context.result === "agentTreeInvalid",
    repairAccepted: ({ context }) => context.result === "repairAccepted",
    leafAccepted: ({ context }) => context.result === "leafAccepted",
    guardRequired: ({ context }) => context.judgement?.runGuard === true,
  },
  actions: routeActions<AgentSessionContext>(),
}).createMachine({
  ...routedChild<AgentSessionInput>("agentSession", "start record, leaf (none for a repair), prompt"),
  initial: "execute",
  // Whichever way the session ends, the step learns how the agent ran (meta.json, usage, limits).
  output: ({ context }) => (context.agent ? { ...context.route, learnt: { ...context.route.learnt, agent: context.agent.facts } } : context.route),
  states: {
    execute: {
      tags: ["recorded"],
      invoke: {
        id: "runAgent",
        src: "runAgent",
        input: ({ context }) => ({ start: context.start, leaf: context.leaf, prompt: context.prompt.text }),
        onDone: { actions: assign(({ context, event }) => ran(context, event.output)) },
        onError: onFailure(recoverOnError("other", recovering)),
      },
      always: [
        { guard: "agentStopped", target: "recovery" },
        { guard: "agentNotStarted", target: "recovery" },
        { guard: "agentFailed", target: "recovery" },
        { guard: "agentFinished", target: "reloadTree" },
      ],
    },
    reloadTree: {
      invoke: {
        id: "collectResult",
        src: "collectResult",
        input: ({ context }) => ({ start: context.start, answer: context.agent?.facts.answer }),
        onDone: { actions: assign(({ context, event }) => reloaded(context, event.output)) },
        onError: onFailure(recoverOnError("other", recovering)),
      },
      always: [
        { guard: "outputInvalid", target: "recovery" },
        // The tree is left as the agent wrote it and committed; the next step repairs it.
        { guard: "agentTreeInvalid", target: "recording" },
        { guard: "repairAccepted", target: "stateUpdate" },
        { guard: "leafAccepted", target: "classify" },
      ],
    },
    classify: {
      entry: assign(({ context }) => classified(context)),
      always: [{ guard: "guardRequired", target: "guarding" }, { target: "stateUpdate" }],
    },
    ...finals("recovery", "recording", "stateUpdate", "guarding", "crashed"),
  },
});

/** A runner error during the session: the recovery gets the answer as the agent's session read it. */
function recovering(context: AgentSessionContext, runnerError: RunnerErrorFact): RecoveryInput {
  return recoveryOf({ start: context.start, leaf: context.leaf, agentAnswer: context.agent?.facts.answer, answer: context.answer }, runnerError);
}

/** The verdict on the agent's run; a stop, a failure to start or the agent's own failure is a runner error. */
function ran(context: AgentSessionContext, facts: AgentRunFacts): Partial<Pick<AgentSessionContext, "agent" | "route">> {
  const verdict = judgeAgentRun(facts, context.start.config.limits.iterationTimeoutSeconds);
  const agent = { facts, verdict };
  if (verdict.kind === "agentFinished") return { agent };
  return { agent, route: { to: "recovery", input: recovering({ ...context, agent }, verdict.runnerError) } };
}

/** The verdict on what the agent left, the branch it takes, and where the step goes on (a leaf's result: classify decides). */
function reloaded(context: AgentSessionContext, collected: CollectedFacts): Partial<Pick<AgentSessionContext, "answer" | "result" | "route">> {
  const { start, leaf } = context;
  const verdict = judgeAgentResult({
    previousTree: start.previousTree,
    previousTreeText: start.previousTreeText,
    collected,
    // The node that must still exist after the agent: the selected leaf, or for a repair the node that broke the tree.
    requiredNodeId: start.repair ? start.repair.requiredNodeId : leaf?.leaf.id,
  });
  const answer = { collected, verdict };
  switch (verdict.kind) {
    case "outputInvalid":
      return { answer, result: "outputInvalid", route: { to: "recovery", input: recovering({ ...context, answer }, verdict.runnerError) } };
    case "agentTreeInvalid":
      return { answer, result: "agentTreeInvalid", route: { to: "recording", input: { start, record: iterationRecord({ start, leaf, answer }) } } };
    case "resultAccepted":
      if (leaf) return { answer, result: "leafAccepted" };
      return { answer, result: "repairAccepted", route: { to: "stateUpdate", input: { kind: "repair", start, answer: { collected, verdict } } } };
    case "recovered":
      // (only a runner error's recovery gives this verdict)
      return { answer };
  }
}

/** 7. A leaf step's accepted result classified and judged; the guard runs on an EXECUTE iteration that says done. */
function classified(context: AgentSessionContext): Partial<Pick<AgentSessionContext, "judgement" | "route">> {
  const { start, leaf, answer, agent } = context;
  if (!leaf || !agent || answer?.verdict.kind !== "resultAccepted") return {};
  const accepted = { collected: answer.collected, verdict: answer.verdict };
  const judgement = judgeIteration({
    previousLeaf: leaf.leaf,
    agentTree: accepted.verdict.agentTree,
    status: accepted.verdict.output.status,
    changedPaths: accepted.collected.changedPaths,
    protectedPaths: start.config.guard.protectedPaths,
    allowedWritePaths: context.prompt.allowedWritePaths,
    git: accepted.collected.git,
  });
  if (!judgement.runGuard)
    return { judgement, route: { to: "stateUpdate", input: { kind: "leaf", start, leaf, answer: accepted, judgement, guard: undefined } } };
  const input = {
    kind: "leaf" as const,
    start,
    leaf,
    deadlineMs: agent.facts.deadlineMs,
    answer: accepted,
    judgement,
    agentAnswer: agent.facts.answer,
  };
  return { judgement, route: { to: "guarding", input } };
}
