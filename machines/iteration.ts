// The iteration machine: one `runner step` is one run of this machine (seed 001 §5, seed 002).
// States are the steps of the seeds; guards and assign actions call src/core; I/O is done by the
// invoked actors, declared here with placeholder bodies and supplied with `machine.provide()`
// (the CLI gives real adapters, tests give scripted ones). The machine has no logic of its own.
import { assign, enqueueActions, fromPromise, setup, type DoneActorEvent, type ErrorActorEvent } from "xstate";
import type { IterationKind } from "../src/core/classify.js";
import type { ResolvedConfig } from "../src/core/config.js";
import { checkAgentTree, failureFeedback, judgeIteration, type Judgement } from "../src/core/iteration.js";
import { lastLeafNode, nextIterationNumber, trailingRepairs, type LoopRecord } from "../src/core/loop-history.js";
import type { Problem } from "../src/core/problems.js";
import { effectiveRunId, safetyRefusal, type RepositoryFacts } from "../src/core/safety.js";
import { selectLeftmostOpenLeaf } from "../src/core/select.js";
import { classifyChangedPaths } from "../src/core/classify.js";
import { applyStateUpdates, applyStateUpdatesInPlace, applyStateUpdatesShared, recoveryFor, type AgentStatus, type GuardOutcome, type RunnerErrorKind, type StateUpdateResult } from "../src/core/state-update.js";
import type { TaskTree } from "../src/core/tree.js";
import type { AgentOutput } from "../src/schemas/types.generated.js";
import { validateAgentOutputSchema } from "../src/core/schema.js";
import { formatProblem, jsonSyntaxMessage } from "../src/core/problems.js";
import { iterationDir } from "../src/core/layout.js";
import { pathsInside } from "../src/core/path-rules.js";

// ---------------------------------------------------------------------------------------------
// Facts the actors report.

export interface LoadedState {
  config: { ok: true; config: ResolvedConfig } | { ok: false; problems: Problem[] };
  tree: { ok: true; tree: TaskTree } | { ok: false; problems: Problem[]; missing?: boolean };
  /** This run's loop commits, newest first. */
  records: LoopRecord[];
  /** When the tree is invalid: the newest valid tree in the branch's history. */
  lastValidTree?: TaskTree;
  /** The selected leaf's allowed_write_paths (filled after selection by the prompt actor). */
}

/** What recording an interrupted iteration needs: the tree it began from, the config, the history. */
export interface InterruptedState {
  config: ResolvedConfig;
  records: LoopRecord[];
  /** The valid tree the interrupted iteration began from (HEAD's, or the last accepted one). */
  previousTree: TaskTree;
}

export interface AgentRunFacts {
  exitCode: number | undefined;
  timedOut: boolean;
  aborted: boolean;
  spawnError: string | undefined;
  durationMs: number;
  argv: string[];
}

export interface CollectedFacts {
  /** The output file's text; undefined when the agent wrote none. */
  outputText: string | undefined;
  /** The tree file parsed as JSON, or the parse problem. */
  treeData: { ok: true; data: unknown } | { ok: false; problems: Problem[] };
  /** Changed paths (tracked and untracked, not ignored), sorted. */
  changedPaths: string[];
  /**
   * The parsed tree belongs to this step alone (a fresh parse nothing else holds): the state update
   * may work on it in place instead of on a copy. Same result either way.
   */
  treeOwned?: boolean;
}

export interface GuardFacts {
  exitCode: number | undefined;
  timedOut: boolean;
  aborted: boolean;
  spawnError: string | undefined;
  durationMs: number;
  output: string;
}

export interface PromptFacts {
  /** The selected node's allowed_write_paths (its policy sidecar), if any. */
  allowedWritePaths: string[] | undefined;
  /** The refusal sentence when the selected node's policy sidecar is invalid. */
  policyProblem?: string;
}

export type StepKind = "leaf" | "repair";

/** What an iteration hands to the persist and commit actors. */
export interface IterationRecord {
  runId: string;
  iteration: number;
  stepKind: StepKind;
  nodeId: string | undefined;
  kind: IterationKind | "repair";
  status: AgentStatus | undefined;
  guard: GuardOutcome;
  attemptsBefore: number | undefined;
  attemptsAfter: number | undefined;
  maxAttempts: number | undefined;
  passesAfter: boolean | undefined;
  summary: string;
  failure: string | undefined;
  runnerError: { kind: RunnerErrorKind; message: string } | undefined;
  /** The tree to write; undefined leaves the agent's (invalid) file for the next repair step. */
  treeToWrite: TaskTree | undefined;
  treeProblems: Problem[];
  changedPaths: string[];
  derivedPasses: string[];
  /** Changed paths the agent may not touch: restored before the commit. */
  protectedChanged: string[];
}

export interface StepInput {
  runIdOption?: string;
}

export type StepOutcome = "committed" | "nothing-to-do" | "refused" | "failed";

export interface StepOutput {
  outcome: StepOutcome;
  /** The sentence the CLI prints. */
  message: string;
  record?: IterationRecord;
  commit?: string;
}

export interface Transition {
  from: string;
  event: string;
  to: string;
}

export interface IterationContext {
  runIdOption: string | undefined;
  runId?: string;
  iteration?: number;
  config?: ResolvedConfig;
  stepKind?: StepKind;
  records: LoopRecord[];
  /** The valid tree the iteration starts from (a repair: the newest valid tree in history). */
  previousTree?: TaskTree;
  treeProblems: Problem[];
  /** The node that must still exist after the agent (the selected leaf, or for a repair the node that broke it). */
  requiredNodeId?: string;
  selection?: { leafId: string; pathIds: string[]; stuck: boolean };
  allowedWritePaths?: string[];
  agent?: AgentRunFacts;
  collected?: CollectedFacts;
  output?: AgentOutput;
  agentTree?: TaskTree;
  judgement?: Judgement;
  guardRun?: GuardFacts;
  outcome?: { status: AgentStatus; guard: GuardOutcome };
  failure?: string;
  updated?: StateUpdateResult;
  runnerError?: { kind: RunnerErrorKind; message: string };
  commit?: string;
  message?: string;
  /** The states entered, in order (meta.json `path`). */
  path: string[];
  /** Every transition taken (events.jsonl). */
  transitions: Transition[];
  /** The type of the event behind the last recorded transition (to tell `always` transitions apart). */
  lastEventType?: string;
}

// ---------------------------------------------------------------------------------------------
// Helpers over context (pure).

const outputOf = <T>(event: unknown): T => (event as DoneActorEvent<T>).output;
const errorMessage = (event: unknown): string => {
  const error = (event as ErrorActorEvent).error;
  return error instanceof Error ? error.message : String(error);
};

function selectedLeaf(context: IterationContext) {
  const id = context.selection?.leafId;
  if (!context.previousTree || id === undefined) return undefined;
  const selection = selectLeftmostOpenLeaf(context.previousTree);
  return selection.kind === "leaf" && selection.leaf.id === id ? selection.leaf : undefined;
}

/** `file` (repository-relative) names the output file in the reason. */
function parseOutput(text: string | undefined, file?: string): { ok: true; output: AgentOutput } | { ok: false; reason: string } {
  if (text === undefined) return { ok: false, reason: `the agent wrote no output file${file ? ` (${file})` : ""}` };
  const name = file ? `the output file ${file}` : "the output file";
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    return { ok: false, reason: `${name} ${jsonSyntaxMessage(text, error)}` };
  }
  const result = validateAgentOutputSchema(data);
  if (!result.ok) return { ok: false, reason: `${name} does not match the agent output schema: ${result.problems.map(formatProblem).join("; ")}` };
  return { ok: true, output: result.value };
}

// Guards and actions of one transition look at the same facts; check each agent tree once.
const treeChecks = new WeakMap<CollectedFacts, { tree?: TaskTree; problems: Problem[] }>();

/** The agent's tree checked against the previous one; undefined tree when invalid. */
function agentTreeCheck(context: IterationContext, collected: CollectedFacts): { tree?: TaskTree; problems: Problem[] } {
  const known = treeChecks.get(collected);
  if (known) return known;
  const check = collected.treeData.ok
    ? checkAgentTree(context.previousTree!, collected.treeData.data, context.requiredNodeId)
    : { problems: collected.treeData.problems };
  treeChecks.set(collected, check);
  return check;
}

/**
 * applyStateUpdates on the agent's tree: in place when the tree is the step's own fresh parse
 * (`treeOwned`); when the agent left the tree file as it was (the tree is the previous one), by
 * copying only the path to the selected node where the previous tree is settled; else on a copy.
 * Same result in every case.
 */
function updateAgentTree(
  context: IterationContext,
  collected: CollectedFacts,
  tree: TaskTree,
  selectedId: string | undefined,
  outcome: { status: AgentStatus; guard: GuardOutcome } | undefined,
): StateUpdateResult {
  const own = collected.treeOwned === true && collected.treeData.ok && collected.treeData.data === tree && tree !== context.previousTree;
  if (own) return applyStateUpdatesInPlace(context.previousTree!, tree, selectedId, outcome);
  const shared = tree === context.previousTree && selectedId !== undefined ? applyStateUpdatesShared(tree, selectedId, outcome) : undefined;
  return shared ?? applyStateUpdates(context.previousTree!, tree, selectedId, outcome);
}

/** The record persist and commit work from. */
export function iterationRecord(context: IterationContext): IterationRecord {
  const leaf = selectedLeaf(context);
  const after = context.updated?.selected;
  const isRepair = context.stepKind === "repair";
  const changedPaths = context.collected?.changedPaths ?? [];
  return {
    runId: context.runId!,
    iteration: context.iteration!,
    stepKind: context.stepKind ?? "leaf",
    nodeId: isRepair ? undefined : context.selection?.leafId,
    kind: isRepair ? "repair" : context.judgement?.kind ?? classifyChangedPaths(changedPaths),
    status: context.runnerError ? "retry" : context.outcome?.status ?? context.output?.status,
    guard: context.outcome?.guard ?? "skipped",
    attemptsBefore: leaf?.attempts,
    attemptsAfter: after ? after.attempts : leaf?.attempts,
    maxAttempts: after ? after.max_attempts : leaf?.max_attempts,
    passesAfter: after ? after.passes : leaf?.passes,
    summary: context.output?.summary ?? "",
    failure: context.failure,
    runnerError: context.runnerError,
    treeToWrite: context.updated?.tree,
    treeProblems: context.treeProblems,
    changedPaths,
    derivedPasses: context.updated?.derivedPasses ?? [],
    protectedChanged: context.config ? pathsInside(changedPaths, context.config.guard.protectedPaths) : [],
  };
}

/** The runner error of an agent or guard stopped by the budget or by an interrupted run (seed 002). */
function stoppedError(who: "agent" | "guard", facts: { aborted: boolean }, context: IterationContext) {
  return {
    kind: "executor_timeout" as const,
    message: facts.aborted
      ? `the ${who} was interrupted (the run was stopped)`
      : `the ${who} did not finish within the iteration budget of ${context.config!.limits.iterationTimeoutSeconds} s and was killed`,
  };
}

const notProvided = (name: string) =>
  fromPromise<never, unknown>(async () => {
    throw new Error(`actor ${name} was not provided`);
  });

// ---------------------------------------------------------------------------------------------
// The machine.

export const iterationMachine = setup({
  types: {
    context: {} as IterationContext,
    input: {} as StepInput,
    output: {} as StepOutput,
  },
  actors: {
    inspectRepository: notProvided("inspectRepository") as unknown as ReturnType<typeof fromPromise<RepositoryFacts, { runIdOption: string | undefined }>>,
    loadState: notProvided("loadState") as unknown as ReturnType<typeof fromPromise<LoadedState, { runId: string }>>,
    loadInterrupted: notProvided("loadInterrupted") as unknown as ReturnType<typeof fromPromise<InterruptedState, { runId: string }>>,
    preparePrompt: notProvided("preparePrompt") as unknown as ReturnType<typeof fromPromise<PromptFacts, { context: IterationContext }>>,
    runAgent: notProvided("runAgent") as unknown as ReturnType<typeof fromPromise<AgentRunFacts, { context: IterationContext }>>,
    collectResult: notProvided("collectResult") as unknown as ReturnType<typeof fromPromise<CollectedFacts, { context: IterationContext }>>,
    runGuard: notProvided("runGuard") as unknown as ReturnType<typeof fromPromise<GuardFacts, { context: IterationContext }>>,
    persistIteration: notProvided("persistIteration") as unknown as ReturnType<typeof fromPromise<void, { record: IterationRecord }>>,
    commitIteration: notProvided("commitIteration") as unknown as ReturnType<typeof fromPromise<{ sha: string }, { record: IterationRecord }>>,
  },
  actions: {
    /** On entry to every state: record it (meta.json `path`, events.jsonl), then the entry hook. */
    record: enqueueActions(({ context, event, enqueue }, params: { state: string }) => {
      // An eventless (`always`) transition runs in the same macrostep as the event before it and
      // sees that event again: a repeat of the last event's type is the `always` transition.
      const eventless = context.lastEventType === event.type;
      enqueue.assign({
        path: [...context.path, params.state],
        transitions: [...context.transitions, { from: context.path[context.path.length - 1] ?? "(start)", event: eventless ? "always" : event.type, to: params.state }],
        lastEventType: event.type,
      });
      // (setup's action map is not visible to its own enqueueActions: name the action untyped)
      enqueue({ type: "enterState", params } as never);
    }),
    /** Provided by the driver: the crash-test hook (kill the runner on entry to a named state). */
    enterState: (_, _params: { state: string }) => {},
    /** The agent's output and tree are valid: keep them for classification and the update. */
    acceptAgentResult: assign(({ context, event }) => {
      const collected = outputOf<CollectedFacts>(event);
      const parsed = parseOutput(collected.outputText);
      return {
        collected,
        output: parsed.ok ? parsed.output : undefined,
        agentTree: agentTreeCheck(context, collected).tree,
      };
    }),
  },
  guards: {
    repositoryUnsafe: ({ context, event }) => safetyRefusal(outputOf<RepositoryFacts>(event), context.runIdOption) !== undefined,
    wasInterrupted: ({ event }) => outputOf<RepositoryFacts>(event).interrupted?.status === "resume",
    configInvalid: ({ event }) => !outputOf<LoadedState>(event).config.ok,
    treeMissing: ({ event }) => {
      const tree = outputOf<LoadedState>(event).tree;
      return !tree.ok && tree.missing === true;
    },
    treeValid: ({ event }) => outputOf<LoadedState>(event).tree.ok,
    noValidTreeInHistory: ({ event }) => outputOf<LoadedState>(event).lastValidTree === undefined,
    repairsExhausted: ({ event }) => {
      const loaded = outputOf<LoadedState>(event);
      return loaded.config.ok && trailingRepairs(loaded.records) >= loaded.config.config.limits.maxRepairAttempts;
    },
    policyInvalid: ({ event }) => outputOf<PromptFacts>(event).policyProblem !== undefined,
    rootPasses: ({ context }) => selectLeftmostOpenLeaf(context.previousTree!).kind === "complete",
    agentTimedOut: ({ event }) => outputOf<AgentRunFacts>(event).timedOut || outputOf<AgentRunFacts>(event).aborted,
    agentNotStarted: ({ event }) => outputOf<AgentRunFacts>(event).spawnError !== undefined,
    outputInvalid: ({ event }) => !parseOutput(outputOf<CollectedFacts>(event).outputText).ok,
    agentTreeInvalid: ({ context, event }) => agentTreeCheck(context, outputOf<CollectedFacts>(event)).tree === undefined,
    isRepair: ({ context }) => context.stepKind === "repair",
    guardRequired: ({ context }) => context.judgement!.runGuard,
    guardTimedOut: ({ event }) => outputOf<GuardFacts>(event).timedOut || outputOf<GuardFacts>(event).aborted,
    guardNotStarted: ({ event }) => outputOf<GuardFacts>(event).spawnError !== undefined,
    hadRunnerError: ({ context }) => context.runnerError !== undefined,
  },
}).createMachine({
  id: "iteration",
  initial: "safetyCheck",
  context: ({ input }) => ({ runIdOption: input.runIdOption, records: [], treeProblems: [], path: [], transitions: [] }),
  output: ({ context }) => {
    if (context.path.includes("refused")) return { outcome: "refused", message: context.message ?? "refused" };
    if (context.path.includes("nothingToDo")) return { outcome: "nothing-to-do", message: context.message ?? "nothing to do" };
    const record = context.runId !== undefined && context.iteration !== undefined ? iterationRecord(context) : undefined;
    if (context.path.includes("committed")) return { outcome: "committed", message: context.message ?? "", record, commit: context.commit };
    return { outcome: "failed", message: context.message ?? "the iteration failed", record, commit: context.commit };
  },
  states: {
    // 1. Repository safety: not main/master, a run branch, clean working tree, logs ignored.
    safetyCheck: {
      entry: { type: "record", params: { state: "safetyCheck" } },
      invoke: {
        id: "inspectRepository",
        src: "inspectRepository",
        input: ({ context }) => ({ runIdOption: context.runIdOption }),
        onDone: [
          {
            guard: "repositoryUnsafe",
            target: "refused",
            actions: assign({ message: ({ context, event }) => safetyRefusal(event.output, context.runIdOption) }),
          },
          {
            // The journal says an iteration began here and was never committed (the runner was killed).
            guard: "wasInterrupted",
            target: "resumeInterrupted",
            actions: assign(({ event }) => {
              const interrupted = event.output.interrupted!;
              return {
                runId: interrupted.runId,
                iteration: interrupted.iteration,
                stepKind: interrupted.stepKind,
                selection: interrupted.nodeId === null ? undefined : { leafId: interrupted.nodeId, pathIds: [], stuck: false },
                requiredNodeId: interrupted.nodeId ?? undefined,
                runnerError: {
                  kind: "other" as const,
                  message: `the runner stopped (killed or crashed) during iteration ${interrupted.iteration} before committing it`,
                },
              };
            }),
          },
          { target: "loadTree", actions: assign({ runId: ({ context, event }) => effectiveRunId(event.output, context.runIdOption) }) },
        ],
        onError: { target: "refused", actions: assign({ message: ({ event }) => errorMessage(event) }) },
      },
    },
    // An interrupted iteration is recorded as a runner error (seed 002: retry, guard skipped,
    // attempts unchanged) and committed, from the tree it began from.
    resumeInterrupted: {
      entry: { type: "record", params: { state: "resumeInterrupted" } },
      invoke: {
        id: "loadInterrupted",
        src: "loadInterrupted",
        input: ({ context }) => ({ runId: context.runId! }),
        onDone: {
          target: "recover",
          actions: assign(({ event }) => ({
            config: event.output.config,
            records: event.output.records,
            previousTree: event.output.previousTree,
          })),
        },
        onError: { target: "failed", actions: assign({ message: ({ event }) => `Could not record the interrupted iteration: ${errorMessage(event)}.` }) },
      },
    },
    // 2. Load and validate config and tree; number the iteration from the branch's loop commits.
    loadTree: {
      entry: { type: "record", params: { state: "loadTree" } },
      invoke: {
        id: "loadState",
        src: "loadState",
        input: ({ context }) => ({ runId: context.runId! }),
        onDone: [
          {
            guard: "configInvalid",
            target: "refused",
            actions: assign({
              message: ({ event }) => {
                const config = event.output.config;
                const first = config.ok ? "" : formatProblem(config.problems[0]!);
                return `.runner/state/config.toml is invalid: ${first}; fix it (\`runner validate\` lists every problem) and run \`runner step\` again.`;
              },
            }),
          },
          {
            guard: "treeMissing",
            target: "refused",
            actions: assign({ message: () => ".runner/state/tree.json does not exist; run `runner init` and commit it first." }),
          },
          {
            guard: "treeValid",
            target: "selectLeaf",
            actions: assign(({ event }) => {
              const loaded = event.output;
              return {
                config: loaded.config.ok ? loaded.config.config : undefined,
                records: loaded.records,
                iteration: nextIterationNumber(loaded.records),
                previousTree: loaded.tree.ok ? loaded.tree.tree : undefined,
                stepKind: "leaf" as const,
              };
            }),
          },
          {
            guard: "repairsExhausted",
            target: "failed",
            actions: assign({
              message: ({ event }) =>
                `The task tree is still invalid after ${trailingRepairs(event.output.records)} repair steps in a row; restore the last valid tree by hand (\`git log -- .runner/state/tree.json\`, then \`git checkout <commit> -- .runner/state/tree.json\` and commit it) and run \`runner step\` again.`,
            }),
          },
          {
            guard: "noValidTreeInHistory",
            target: "refused",
            actions: assign({
              message: ({ event }) => {
                const tree = event.output.tree;
                const first = tree.ok ? "" : formatProblem(tree.problems[0]!);
                return `.runner/state/tree.json is invalid (${first}) and no valid tree exists in this branch's history to repair it against; fix it by hand (\`runner validate\` lists every problem) and commit.`;
              },
            }),
          },
          // 5.1 REPAIR TREE: the tree is invalid after an agent session.
          {
            target: "repairTree",
            actions: assign(({ event }) => {
              const loaded = event.output;
              return {
                config: loaded.config.ok ? loaded.config.config : undefined,
                records: loaded.records,
                iteration: nextIterationNumber(loaded.records),
                previousTree: loaded.lastValidTree,
                treeProblems: loaded.tree.ok ? [] : loaded.tree.problems,
                requiredNodeId: lastLeafNode(loaded.records),
                stepKind: "repair" as const,
              };
            }),
          },
        ],
        onError: { target: "failed", actions: assign({ message: ({ event }) => errorMessage(event) }) },
      },
    },
    // 3. Select the leftmost open leaf.
    selectLeaf: {
      entry: [
        { type: "record", params: { state: "selectLeaf" } },
        assign(({ context }) => {
          const selection = selectLeftmostOpenLeaf(context.previousTree!);
          if (selection.kind === "complete") return {};
          return {
            selection: { leafId: selection.leaf.id, pathIds: selection.path.map((node) => node.id), stuck: selection.stuck },
            requiredNodeId: selection.leaf.id,
          };
        }),
      ],
      always: [
        { guard: "rootPasses", target: "nothingToDo", actions: assign({ message: ({ context }) => `Nothing to do: the root passes (run ${context.runId}).` }) },
        { target: "buildPrompt" },
      ],
    },
    // 4. Build the prompt pack and the context folder.
    buildPrompt: {
      entry: { type: "record", params: { state: "buildPrompt" } },
      invoke: {
        id: "preparePrompt",
        src: "preparePrompt",
        input: ({ context }) => ({ context }),
        onDone: [
          { guard: "policyInvalid", target: "refused", actions: assign({ message: ({ event }) => event.output.policyProblem }) },
          { target: "execute", actions: assign({ allowedWritePaths: ({ event }) => event.output.allowedWritePaths }) },
        ],
        onError: { target: "recover", actions: assign({ runnerError: ({ event }) => ({ kind: "other" as const, message: errorMessage(event) }) }) },
      },
    },
    // 5.1 REPAIR TREE: a repair prompt instead of a leaf (no leaf is selected).
    repairTree: {
      entry: { type: "record", params: { state: "repairTree" } },
      invoke: {
        id: "prepareRepairPrompt",
        src: "preparePrompt",
        input: ({ context }) => ({ context }),
        onDone: { target: "execute" },
        onError: { target: "recover", actions: assign({ runnerError: ({ event }) => ({ kind: "other" as const, message: errorMessage(event) }) }) },
      },
    },
    // 5. A fresh agent session, within the iteration's time budget.
    execute: {
      entry: { type: "record", params: { state: "execute" } },
      invoke: {
        id: "runAgent",
        src: "runAgent",
        input: ({ context }) => ({ context }),
        onDone: [
          {
            guard: "agentTimedOut",
            target: "recover",
            actions: assign({
              agent: ({ event }) => event.output,
              runnerError: ({ context, event }) => stoppedError("agent", event.output, context),
            }),
          },
          {
            guard: "agentNotStarted",
            target: "recover",
            actions: assign({
              agent: ({ event }) => event.output,
              runnerError: ({ event }) => ({ kind: "other" as const, message: event.output.spawnError! }),
            }),
          },
          { target: "reloadTree", actions: assign({ agent: ({ event }) => event.output }) },
        ],
        onError: { target: "recover", actions: assign({ runnerError: ({ event }) => ({ kind: "other" as const, message: errorMessage(event) }) }) },
      },
    },
    // 6. Re-load and validate: the output file, the tree (immutability included), the changed paths.
    reloadTree: {
      entry: { type: "record", params: { state: "reloadTree" } },
      invoke: {
        id: "collectResult",
        src: "collectResult",
        input: ({ context }) => ({ context }),
        onDone: [
          {
            guard: "outputInvalid",
            target: "recover",
            actions: assign({
              collected: ({ event }) => event.output,
              runnerError: ({ context, event }) => {
                const parsed = parseOutput(event.output.outputText, `${iterationDir(context.runId!, context.iteration!)}/output.json`);
                return { kind: "output_parse_error" as const, message: parsed.ok ? "" : parsed.reason };
              },
            }),
          },
          {
            // The tree is left as the agent wrote it and committed; the next step repairs it.
            guard: "agentTreeInvalid",
            target: "persist",
            actions: assign(({ context, event }) => {
              const parsed = parseOutput(event.output.outputText);
              const problems = agentTreeCheck(context, event.output).problems;
              return {
                collected: event.output,
                output: parsed.ok ? parsed.output : undefined,
                treeProblems: problems,
                failure: `The task tree was left invalid: ${problems.map(formatProblem).join("; ")}`,
              };
            }),
          },
          { guard: "isRepair", target: "updateState", actions: "acceptAgentResult" },
          { target: "classify", actions: "acceptAgentResult" },
        ],
        onError: { target: "recover", actions: assign({ runnerError: ({ event }) => ({ kind: "other" as const, message: errorMessage(event) }) }) },
      },
    },
    // 7. Classify (DECOMPOSE / EXECUTE) and judge the agent's status (contract and path policies).
    classify: {
      entry: [
        { type: "record", params: { state: "classify" } },
        assign(({ context }) => {
          const judgement = judgeIteration({
            previousLeaf: selectedLeaf(context)!,
            agentTree: context.agentTree!,
            status: context.output!.status,
            changedPaths: context.collected!.changedPaths,
            protectedPaths: context.config!.guard.protectedPaths,
            allowedWritePaths: context.allowedWritePaths,
          });
          return { judgement, outcome: judgement.outcome, failure: failureFeedback({ judgement }) };
        }),
      ],
      always: [{ guard: "guardRequired", target: "guard" }, { target: "updateState" }],
    },
    // 8. EXECUTE + done: run the guard (`just ci`) within what is left of the budget.
    guard: {
      entry: { type: "record", params: { state: "guard" } },
      invoke: {
        id: "runGuard",
        src: "runGuard",
        input: ({ context }) => ({ context }),
        onDone: [
          {
            guard: "guardTimedOut",
            target: "recover",
            actions: assign({
              guardRun: ({ event }) => event.output,
              runnerError: ({ context, event }) => stoppedError("guard", event.output, context),
            }),
          },
          {
            guard: "guardNotStarted",
            target: "recover",
            actions: assign({
              guardRun: ({ event }) => event.output,
              runnerError: ({ event }) => ({ kind: "guard_error" as const, message: event.output.spawnError! }),
            }),
          },
          {
            target: "updateState",
            actions: assign(({ context, event }) => {
              const guard = event.output.exitCode === 0 ? ("pass" as const) : ("fail" as const);
              return {
                guardRun: event.output,
                outcome: { status: context.outcome!.status, guard },
                failure: failureFeedback({
                  judgement: context.judgement!,
                  guard: { outcome: guard, command: context.config!.guard.command, exitCode: event.output.exitCode, output: event.output.output },
                }),
              };
            }),
          },
        ],
        onError: { target: "recover", actions: assign({ runnerError: ({ event }) => ({ kind: "guard_error" as const, message: errorMessage(event) }) }) },
      },
    },
    // 9. Runner-owned state updates (seed 002): reset, transition, saturation, derived passes, sorting.
    updateState: {
      entry: [
        { type: "record", params: { state: "updateState" } },
        assign({
          updated: ({ context }) =>
            updateAgentTree(
              context,
              context.collected!,
              context.agentTree!,
              context.stepKind === "repair" ? undefined : context.selection!.leafId,
              context.stepKind === "repair" ? undefined : context.outcome,
            ),
        }),
      ],
      always: { target: "persist" },
    },
    // Seed 002 "Runner Error Recovery": retry, guard skipped, attempts unchanged; persist and commit,
    // then report the error. The agent's tree is kept when valid (runner-owned fields reset), else
    // left for the next repair step.
    recover: {
      entry: { type: "record", params: { state: "recover" } },
      invoke: {
        id: "collectAfterError",
        src: "collectResult",
        input: ({ context }) => ({ context }),
        onDone: {
          target: "persist",
          actions: assign(({ context, event }) => {
            const recovery = recoveryFor(context.runnerError!.kind);
            const check = agentTreeCheck(context, event.output);
            const parsed = parseOutput(event.output.outputText);
            return {
              collected: event.output,
              output: parsed.ok ? parsed.output : undefined,
              outcome: { status: recovery.status, guard: recovery.guard },
              treeProblems: check.problems,
              failure: undefined,
              updated: check.tree
                ? updateAgentTree(context, event.output, check.tree, context.stepKind === "repair" ? undefined : context.selection?.leafId, undefined)
                : undefined,
            };
          }),
        },
        onError: {
          target: "persist",
          actions: assign(({ context }) => {
            const recovery = recoveryFor(context.runnerError!.kind);
            return { outcome: { status: recovery.status, guard: recovery.guard }, failure: undefined, updated: undefined };
          }),
        },
      },
    },
    // 10. Persist: the tree atomically in canonical form, and the iteration's logs.
    persist: {
      entry: { type: "record", params: { state: "persist" } },
      invoke: {
        id: "persistIteration",
        src: "persistIteration",
        input: ({ context }) => ({ record: iterationRecord(context) }),
        onDone: { target: "commit" },
        onError: {
          target: "failed",
          actions: assign({ message: ({ event }) => `Could not persist the iteration: ${errorMessage(event)}; the working tree holds the agent's changes uncommitted.` }),
        },
      },
    },
    // 10. Commit the iteration (failures included) with the deterministic subject.
    commit: {
      entry: { type: "record", params: { state: "commit" } },
      invoke: {
        id: "commitIteration",
        src: "commitIteration",
        input: ({ context }) => ({ record: iterationRecord(context) }),
        onDone: [
          {
            guard: "hadRunnerError",
            target: "failed",
            actions: assign(({ context, event }) => ({
              commit: event.output.sha,
              message: `Iteration ${context.iteration} ended in a runner error: ${context.runnerError!.message}. It was recorded and committed as a retry without using an attempt; fix the cause and run \`runner step\` again.`,
            })),
          },
          { target: "committed", actions: assign({ commit: ({ event }) => event.output.sha }) },
        ],
        onError: {
          target: "failed",
          actions: assign({ message: ({ event }) => `Could not commit the iteration: ${errorMessage(event)}; the working tree holds the iteration uncommitted.` }),
        },
      },
    },
    committed: { type: "final", entry: { type: "record", params: { state: "committed" } } },
    nothingToDo: { type: "final", entry: { type: "record", params: { state: "nothingToDo" } } },
    refused: { type: "final", entry: { type: "record", params: { state: "refused" } } },
    failed: { type: "final", entry: { type: "record", params: { state: "failed" } } },
  },
});
