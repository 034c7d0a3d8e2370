// One `runner step`: run the iteration machine with the real actors, record every transition in
// events.jsonl as it happens, and write the iteration's final meta.json.
import { createActor, toPromise } from "xstate";
import { iterationMachine, type IterationContext, type StepOutput, type Transition } from "../../machines/iteration.js";
import { IterationLog } from "../adapters/iteration-log.js";
import { commitSubjectOf, createStepActors, type StepDeps } from "./services.js";
import { formatCommitSubject } from "../core/run-id.js";

export interface StepResult extends StepOutput {
  iteration?: number;
  runId?: string;
  path: string[];
  durations: { agentMs: number; guardMs: number; totalMs: number };
}

/** States from which an iteration is certain to be committed (or recovered by the next step). */
const RECORDED_FROM = new Set(["execute", "recover", "resumeInterrupted"]);

/**
 * The crash-test hook: with RUNNER_TEST_HOOKS=1 and RUNNER_TEST_KILL_AT=<state>, the runner kills
 * itself with SIGKILL on entry to that state (before the state's actor starts). Off otherwise.
 */
function crashTestHook(env: Record<string, string>) {
  const target = env.RUNNER_TEST_HOOKS === "1" ? env.RUNNER_TEST_KILL_AT : undefined;
  return (_: unknown, params: { state: string }) => {
    if (target !== undefined && params.state === target) process.kill(process.pid, "SIGKILL");
  };
}

export async function runStep(deps: StepDeps & { runIdOption?: string }): Promise<StepResult> {
  const startedAt = deps.now();
  const { actors, state } = createStepActors(deps);
  const machine = iterationMachine.provide({ actors, actions: { enterState: crashTestHook(deps.env) } });
  const actor = createActor(machine, { input: { runIdOption: deps.runIdOption } });

  // Transitions are appended to events.jsonl once the iteration (and so its folder) is known.
  // Each transition is stamped when first seen, even if it is written later.
  let written = 0;
  const times: string[] = [];
  let latest: IterationContext | undefined;
  let log: IterationLog | undefined;
  const flush = (context: IterationContext) => {
    latest = context;
    while (times.length < context.transitions.length) times.push(new Date(deps.now()).toISOString());
    if (context.runId === undefined || context.iteration === undefined) return;
    // Transitions are written once the iteration is certain to be recorded (the agent starts, or a
    // runner error is being recorded): a refusal before that leaves no trace under its number.
    if (!context.path.some((state) => RECORDED_FROM.has(state))) return;
    log ??= new IterationLog(deps.root, context.runId, context.iteration, state.secrets);
    const fresh: Transition[] = context.transitions.slice(written);
    log.appendEvents(fresh.map((t, i) => ({ iteration: context.iteration, from: t.from, event: t.event, to: t.to, time: times[written + i] })));
    written = context.transitions.length;
  };
  actor.subscribe({ next: (snapshot) => flush(snapshot.context), error: () => undefined });
  actor.start();
  const output = await toPromise(actor);
  const context = latest ?? actor.getSnapshot().context;
  flush(context);
  // A refusal never touches the journal: it refuses before anything is written (an invalid node
  // policy included), and a journal it found (another branch's, or one behind a refusal such as a
  // merge in progress) must survive until the step that can record it.

  const durations = {
    agentMs: Math.round(context.agent?.durationMs ?? 0),
    guardMs: Math.round(context.guardRun?.durationMs ?? 0),
    totalMs: Math.round(deps.now() - startedAt),
  };
  if (log && output.record) {
    const record = output.record;
    log.writeJson("meta.json", {
      run_id: record.runId,
      iteration: record.iteration,
      step_kind: record.stepKind,
      node_id: record.nodeId ?? null,
      kind: record.kind,
      agent_status: record.status ?? null,
      guard_outcome: record.guard,
      attempts_before: record.attemptsBefore ?? null,
      attempts_after: record.attemptsAfter ?? null,
      max_attempts: record.maxAttempts ?? null,
      passes_after: record.passesAfter ?? null,
      derived_passes: record.derivedPasses,
      summary: record.summary,
      failure: record.failure ?? null,
      runner_error: record.runnerError ?? null,
      tree_problems: record.treeProblems,
      changed_paths: record.changedPaths,
      executor: context.agent ? { argv: context.agent.argv, exit_code: context.agent.exitCode ?? null, timed_out: context.agent.timedOut, spawn_error: context.agent.spawnError ?? null } : null,
      guard: context.guardRun ? { command: context.config?.guard.command, exit_code: context.guardRun.exitCode ?? null, timed_out: context.guardRun.timedOut, spawn_error: context.guardRun.spawnError ?? null } : null,
      durations: { agent_ms: durations.agentMs, guard_ms: durations.guardMs, total_ms: durations.totalMs },
      started_at: new Date(startedAt).toISOString(),
      finished_at: new Date(deps.now()).toISOString(),
      outcome: output.outcome,
      message: output.message,
      commit: output.commit ?? null,
      subject: formatCommitSubject(commitSubjectOf(record)),
      path: context.path,
    });
  }
  return { ...output, iteration: context.iteration, runId: context.runId, path: context.path, durations };
}
