// One `runner step`: the iteration machine run with the real actors; every transition appended to
// events.jsonl as it happens, the iteration's meta.json written at the end.
import { createActor, toPromise } from "xstate";
import { iterationMachine, iterationNamed } from "../../machines/iteration.js";
import type { RecheckRequest, StepOutput } from "../../machines/iteration-types.js";
import { createRecorder, type Transition } from "../../machines/recorder.js";
import { IterationLog } from "../adapters/iteration-log.js";
import { IterationError, isSystemError } from "../errors.js";
import type { AgentLimit } from "../core/agent-limits.js";
import type { AgentUsage } from "../core/agent-usage.js";
import { iterationMeta } from "./meta.js";
import { createStepActors } from "./actors/index.js";
import type { StepDeps } from "./deps.js";
import { killOnEntry, withInjectedFaults } from "./test-hooks.js";

export interface StepResult extends StepOutput {
  iteration?: number;
  runId?: string;
  path: string[];
  durations: { agentMs: number; guardMs: number; totalMs: number };
  /** The agent's tokens and cost, as its event stream told them. */
  usage?: AgentUsage;
  /** A rate or usage limit the agent met. */
  limit?: AgentLimit;
}

export async function runStep(step: StepDeps & { runIdOption?: string; recheck?: RecheckRequest }): Promise<StepResult> {
  const startedAt = step.now();
  const { actors, deps } = await createStepActors(step);
  const machine = iterationMachine.provide({ actors: withInjectedFaults(step.env, actors) });

  // Transitions are appended to events.jsonl once the iteration is certain to be recorded (a state
  // tagged "recorded" was entered: the agent starts, or a runner error is being recorded): a refusal
  // before that leaves no trace under an iteration number the next real iteration will reuse. Each
  // is stamped when it happens.
  let log: IterationLog | undefined;
  let recorded = false;
  const pending: (Transition & { time: string })[] = [];
  const flush = () => {
    const snapshot = actor.getSnapshot();
    recorded ||= snapshot.hasTag("recorded");
    const named = iterationNamed(snapshot.context);
    if (!named || !recorded) return;
    log ??= new IterationLog(step.root, named.runId, named.iteration, deps.secrets);
    log.appendEvents(pending.splice(0).map((t) => ({ iteration: named.iteration, from: t.from, event: t.event, to: t.to, time: t.time })));
  };
  const recorder = createRecorder("safetyCheck", {
    onEnter: killOnEntry(step.env),
    onTransition: (transition) => pending.push({ ...transition, time: new Date(step.now()).toISOString() }),
  });
  const actor = createActor(machine, { input: { runIdOption: step.runIdOption, recheck: step.recheck }, inspect: recorder.inspect });
  actor.subscribe({ next: flush, error: () => undefined });
  actor.start();
  const output = await toPromise(actor);
  const context = actor.getSnapshot().context;
  flush();
  const named = iterationNamed(context);

  const durations = {
    agentMs: Math.round(context.agent?.facts.durationMs ?? 0),
    guardMs: Math.round(context.guard?.facts.durationMs ?? 0),
    totalMs: Math.round(step.now() - startedAt),
  };
  if (log && output.record) {
    try {
      log.writeJson(
        "meta.json",
        iterationMeta({ context, output, record: output.record, path: recorder.path, durations, startedAt, finishedAt: step.now() }),
      );
    } catch (error) {
      if (!isSystemError(error)) throw error;
      const committed = output.commit ? `was committed (${output.commit.slice(0, 7)})` : "ended";
      throw new IterationError(
        `Iteration ${named?.iteration} ${committed}, but its log could not be written (${error.message}); make room on the disk of ${log.dir}, then run the next step.`,
        { cause: error },
      );
    }
  }
  return {
    ...output,
    iteration: named?.iteration,
    runId: named?.runId ?? (context.safety?.kind === "safe" ? context.safety.runId : undefined),
    path: recorder.path,
    durations,
    usage: context.agent?.facts.usage,
    limit: context.agent?.facts.limit,
  };
}
