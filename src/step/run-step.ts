// One `runner step`: the iteration machine run with the real actors; every transition appended to
// events.jsonl as it happens, the iteration's meta.json written at the end.
import { createActor, toPromise } from "xstate";
import { createIterationMachine, iterationMachine } from "../../machines/iteration.js";
import type { RecheckRequest, StepOutput } from "../../machines/iteration-types.js";
import { createRecorder, type Transition } from "../../machines/recorder.js";
import { IterationLog } from "../adapters/records/iteration-log.js";
import { discardAheadStart } from "../adapters/process/process-runner.js";
import { compositionGraph } from "../diagram/graph.js";
import { IterationError, isSystemError } from "../errors.js";
import type { AgentLimit } from "../core/agent/agent-limits.js";
import type { AgentUsage } from "../core/agent/agent-usage.js";
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

/** The states and transitions the step records: the flat graph of the iteration's machines. */
const GRAPH = compositionGraph(iterationMachine);
/** Once one of these states is entered, the iteration is certain to be recorded (the agent starts, or a runner error is being recorded). */
const RECORDED = new Set(GRAPH.states.filter((state) => state.tags?.includes("recorded")).map((state) => state.id));

export async function runStep(step: StepDeps & { runIdOption?: string; recheck?: RecheckRequest }): Promise<StepResult> {
  const startedAt = step.now();
  const { actors, deps } = await createStepActors(step);
  const machine = createIterationMachine(withInjectedFaults(step.env, actors));

  // Transitions are appended to events.jsonl once the iteration is certain to be recorded (a state
  // tagged "recorded" was entered): a refusal before that leaves no trace under an iteration number
  // the next real iteration will reuse. Each is stamped when it happens, and appended once the
  // machine that took it is at rest.
  let log: IterationLog | undefined;
  let recorded = false;
  let started = false;
  const pending: (Transition & { time: string })[] = [];
  const flush = () => {
    const named = started ? actor.getSnapshot().context.trace.iteration : undefined;
    if (!named || !recorded) return;
    log ??= new IterationLog(step.root, named.runId, named.iteration, deps.secrets);
    log.appendEvents(pending.splice(0).map((t) => ({ iteration: named.iteration, from: t.from, event: t.event, to: t.to, time: t.time })));
  };
  const kill = killOnEntry(step.env);
  const recorder = createRecorder(GRAPH, {
    onEnter: (state) => {
      recorded ||= RECORDED.has(state);
      kill?.(state);
    },
    onTransition: (transition) => pending.push({ ...transition, time: new Date(step.now()).toISOString() }),
  });
  const actor = createActor(machine, {
    input: { runIdOption: step.runIdOption, recheck: step.recheck },
    inspect: (event) => {
      recorder.inspect(event);
      if (event.type === "@xstate.snapshot") flush();
    },
  });
  started = true;
  actor.start();
  // (a contained start made ahead that no run took ends with the step)
  const output = await toPromise(actor).finally(discardAheadStart);
  const { trace } = actor.getSnapshot().context;
  flush();
  const named = trace.iteration;

  const durations = {
    agentMs: Math.round(trace.agent?.durationMs ?? 0),
    guardMs: Math.round(trace.guard?.durationMs ?? 0),
    totalMs: Math.round(step.now() - startedAt),
  };
  const unwritten = (problem: string, cause?: unknown) => {
    const committed = output.commit ? `was committed (${output.commit.slice(0, 7)})` : "ended";
    return new IterationError(
      `Iteration ${named?.iteration} ${committed}, but its log could not be written (${problem}); make room on the disk of ${log?.dir}, then run the next step.`,
      { cause },
    );
  };
  if (log && output.record) {
    try {
      log.writeJson(
        "meta.json",
        iterationMeta({ trace, output, record: output.record, path: recorder.path, durations, startedAt, finishedAt: step.now() }),
      );
    } catch (error) {
      if (!isSystemError(error)) throw error;
      throw unwritten(error.message, error);
    }
  }
  if (output.logError !== undefined) throw unwritten(output.logError);
  return {
    ...output,
    iteration: named?.iteration,
    runId: named?.runId ?? trace.runId,
    path: recorder.path,
    durations,
    usage: trace.agent?.usage,
    limit: trace.agent?.limit,
  };
}
