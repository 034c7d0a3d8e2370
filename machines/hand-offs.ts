// The records one machine builds for the next: what the step learns from a start record, and what a
// runner error's recovery is handed. Pure: the machines call them where the facts arrive.
import type { AgentOutputCheck } from "../src/core/agent/agent-output.js";
import type { Judgement } from "../src/core/guard/classify.js";
import type { LeafSelection } from "../src/core/tree/select.js";
import type { RunnerErrorFact } from "../src/core/step/step-facts.js";
import type { AnswerPhase, IterationStart, RecoveryInput, StepTrace } from "./iteration-types.js";

/** What the step learns once the iteration is numbered: which one, and the guard it runs. */
export function learntFrom(start: IterationStart): StepTrace {
  return { runId: start.runId, iteration: { runId: start.runId, iteration: start.iteration }, guardCommand: start.config.guard.command };
}

/** A runner error of an iteration that has begun: what its recovery needs. */
export function recoveryOf(
  known: { start: IterationStart; leaf: LeafSelection | undefined; agentAnswer?: AgentOutputCheck; answer?: AnswerPhase; judgement?: Judgement },
  runnerError: RunnerErrorFact,
): RecoveryInput {
  return {
    start: known.start,
    leaf: known.leaf,
    runnerError,
    agentAnswer: known.agentAnswer,
    answer: known.answer,
    judgement: known.judgement,
    journalNodeId: undefined,
  };
}
