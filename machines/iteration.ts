// The iteration machine: one `runner step` is one run of this machine (seed 001 §5, seed 002).
// Each state is one step of the seed. I/O is done by the invoked actors, declared here as typed
// placeholders and supplied with `machine.provide()` (the CLI gives real adapters, tests give
// scripted ones). What an actor reports is turned into one verdict by src/core (step-verdicts.ts),
// assigned once; the `always` branches only read the verdict's kind. Final states set the outcome.
import { assign, fromPromise, setup } from "xstate";
import { isBug, errorMessage } from "../src/errors.js";
import { judgeNodePolicy } from "../src/core/change-policy.js";
import { judgeIteration } from "../src/core/classify.js";
import { failureFeedback } from "../src/core/iteration.js";
import { iterationRecord } from "../src/core/iteration-record.js";
import { runnerErrorSentence } from "../src/core/run-policy.js";
import type { RunnerErrorKind } from "../src/core/runner-errors.js";
import type { RepositoryFacts } from "../src/core/safety.js";
import { selectionOf } from "../src/core/select.js";
import { applyStateUpdates, madeProgress } from "../src/core/state-update.js";
import type { AgentRunFacts, CollectedFacts, GuardFacts, InterruptedState, LoadedState, PromptFacts } from "../src/core/step-facts.js";
import {
  judgeAgentResult,
  judgeAgentRun,
  judgeGuardRun,
  judgeLoadedState,
  judgeRepository,
  judgeSelection,
  recoverIteration,
} from "../src/core/step-verdicts.js";
import type {
  AgentRequest,
  CollectRequest,
  CommitFacts,
  CommitRequest,
  GuardRequest,
  IterationContext,
  IterationRef,
  IterationStart,
  LoadRequest,
  PersistRequest,
  PromptRequest,
  RecheckPrepareRequest,
  StepInput,
  StepOutcome,
  StepOutput,
  UpdatePhase,
} from "./iteration-types.js";

/** An actor the driver must provide (`machine.provide({ actors })`). */
function placeholder<Output, Input>(name: string) {
  return fromPromise<Output, Input>(async () => {
    throw new Error(`actor ${name} was not provided`);
  });
}

export const iterationMachine = setup({
  types: {
    context: {} as IterationContext,
    input: {} as StepInput,
    output: {} as StepOutput,
  },
  actors: {
    inspectRepository: placeholder<RepositoryFacts, { runIdOption: string | undefined }>("inspectRepository"),
    loadInterrupted: placeholder<InterruptedState, LoadRequest>("loadInterrupted"),
    loadState: placeholder<LoadedState, LoadRequest>("loadState"),
    preparePrompt: placeholder<PromptFacts, PromptRequest>("preparePrompt"),
    prepareRecheck: placeholder<{ deadlineMs: number }, RecheckPrepareRequest>("prepareRecheck"),
    runAgent: placeholder<AgentRunFacts, AgentRequest>("runAgent"),
    collectResult: placeholder<CollectedFacts, CollectRequest>("collectResult"),
    runGuard: placeholder<GuardFacts, GuardRequest>("runGuard"),
    persistIteration: placeholder<void, PersistRequest>("persistIteration"),
    commitIteration: placeholder<CommitFacts, CommitRequest>("commitIteration"),
  },
  actions: {
    /** An unexpected exception in an actor: a bug, not a runner error. Nothing more is written; the journal lets the next step record the iteration. */
    recordBug: assign(({ event }) => ({ bug: (event as { error?: unknown }).error })),
    /** An actor failed for a reason outside the runner (git, the file system): a runner error (seed 002). */
    recordRunnerError: assign((_, params: { kind: RunnerErrorKind; error: unknown }) => ({
      runnerError: { kind: params.kind, message: errorMessage(params.error) },
    })),
    /** A final state says how the step ended. */
    end: assign((_, params: { outcome: StepOutcome }) => ({ ending: params.outcome })),
    /** A refusal or failure sentence for the user. */
    say: assign((_, params: { message: string }) => ({ message: params.message })),
  },
  guards: {
    isBug: ({ event }) => isBug((event as { error?: unknown }).error),
    repositoryUnsafe: ({ context }) => context.safety?.kind === "unsafe",
    wasInterrupted: ({ context }) => context.safety?.kind === "interrupted",
    repositorySafe: ({ context }) => context.safety?.kind === "safe",
    configInvalid: ({ context }) => context.load?.kind === "configInvalid",
    preflightFailed: ({ context }) => context.load?.kind === "preflightFailed",
    treeMissing: ({ context }) => context.load?.kind === "treeMissing",
    passesDisagree: ({ context }) => context.load?.kind === "passesDisagree",
    repairsExhausted: ({ context }) => context.load?.kind === "repairsExhausted",
    noValidTreeInHistory: ({ context }) => context.load?.kind === "noValidTreeInHistory",
    recheckOnInvalidTree: ({ context }) => context.load?.kind === "recheckOnInvalidTree",
    treeValid: ({ context }) => context.load?.kind === "treeValid",
    treeInvalid: ({ context }) => context.load?.kind === "treeInvalid",
    rootPasses: ({ context }) => context.selected?.kind === "complete",
    recheckRefused: ({ context }) => context.selected?.kind === "recheckRefused",
    leafSelected: ({ context }) =>
      context.selected?.kind === "selected" && context.selected.batch === undefined && context.start?.stepKind === "leaf",
    finishedSelected: ({ context }) =>
      context.selected?.kind === "selected" && context.selected.batch !== undefined && context.start?.stepKind === "leaf",
    recheckSelected: ({ context }) => context.selected?.kind === "selected" && context.start?.stepKind === "recheck",
    policyInvalid: ({ context }) => context.prompt?.policy.kind === "policyInvalid",
    promptReady: ({ context }) => context.prompt?.policy.kind === "policyValid",
    agentStopped: ({ context }) => context.agent?.verdict.kind === "agentStopped",
    agentNotStarted: ({ context }) => context.agent?.verdict.kind === "agentNotStarted",
    agentFailed: ({ context }) => context.agent?.verdict.kind === "agentFailed",
    agentFinished: ({ context }) => context.agent?.verdict.kind === "agentFinished",
    outputInvalid: ({ context }) => context.answer?.verdict.kind === "outputInvalid",
    agentTreeInvalid: ({ context }) => context.answer?.verdict.kind === "agentTreeInvalid",
    repairAccepted: ({ context }) => context.answer?.verdict.kind === "resultAccepted" && context.start?.stepKind === "repair",
    leafAccepted: ({ context }) => context.answer?.verdict.kind === "resultAccepted" && context.start?.stepKind === "leaf",
    guardRequired: ({ context }) => context.judgement?.runGuard === true,
    guardStopped: ({ context }) => context.guard?.verdict.kind === "guardStopped",
    guardNotStarted: ({ context }) => context.guard?.verdict.kind === "guardNotStarted",
    guardFinished: ({ context }) => context.guard?.verdict.kind === "guardFinished",
    hadRunnerError: ({ context }) => context.runnerError !== undefined,
  },
}).createMachine({
  id: "iteration",
  initial: "safetyCheck",
  context: ({ input }) => ({ request: input }),
  output: ({ context }) => ({
    outcome: context.ending ?? "failed",
    message: context.message ?? "",
    // An iteration that was (or may have been) written has a record; a refusal, nothing to do or a bug has none.
    record: context.ending === "committed" || context.ending === "failed" ? recordOf(context) : undefined,
    commit: context.commit,
    ...(context.logError !== undefined ? { logError: context.logError } : {}),
    error: context.bug,
  }),
  states: {
    // 1. Repository safety: not main/master, a run branch, clean working tree, logs ignored; or an
    //    interrupted iteration (the journal says one began here and was never committed).
    safetyCheck: {
      invoke: {
        id: "inspectRepository",
        src: "inspectRepository",
        input: ({ context }) => ({ runIdOption: context.request.runIdOption }),
        onDone: {
          actions: assign(({ context, event }) => ({ repository: event.output, safety: judgeRepository(event.output, context.request.runIdOption) })),
        },
        onError: [
          { guard: "isBug", target: "crashed", actions: "recordBug" },
          { target: "refused", actions: { type: "say", params: ({ event }) => ({ message: errorMessage(event.error) }) } },
        ],
      },
      always: [
        {
          guard: "repositoryUnsafe",
          target: "refused",
          actions: { type: "say", params: ({ context }) => ({ message: context.safety?.kind === "unsafe" ? context.safety.message : "" }) },
        },
        {
          guard: "wasInterrupted",
          target: "resumeInterrupted",
          actions: assign(({ context }) => (context.safety?.kind === "interrupted" ? { runnerError: context.safety.runnerError } : {})),
        },
        { guard: "repositorySafe", target: "loadTree" },
      ],
    },
    // An interrupted iteration is recorded as a runner error (seed 002: retry, guard skipped,
    // attempts unchanged) and committed, from the tree it began from.
    resumeInterrupted: {
      tags: ["recorded"],
      invoke: {
        id: "loadInterrupted",
        src: "loadInterrupted",
        input: ({ context }) => loadRequest(context),
        onDone: {
          target: "recover",
          actions: assign(({ context, event }) => {
            const { interrupted } = interruption(context);
            const loaded = event.output;
            const start: IterationStart = {
              runId: interrupted.runId,
              iteration: interrupted.iteration,
              stepKind: interrupted.stepKind,
              config: loaded.config,
              records: loaded.records,
              previousTree: loaded.previousTree,
              treeFromStart: loaded.treeFromStart,
              guardProgram: loaded.guardProgram,
              identity: loaded.identity,
              ...startPointOf(context),
              ...(interrupted.stepKind === "repair" ? { repair: { treeProblems: [], requiredNodeId: interrupted.nodeId ?? undefined } } : {}),
            };
            const leaf =
              interrupted.nodeId === null || interrupted.stepKind === "repair" ? undefined : selectionOf(loaded.previousTree, interrupted.nodeId);
            return { start, leaf };
          }),
        },
        onError: [
          { guard: "isBug", target: "crashed", actions: "recordBug" },
          {
            target: "failed",
            actions: {
              type: "say",
              params: ({ event }) => ({ message: `Could not record the interrupted iteration: ${errorMessage(event.error)}.` }),
            },
          },
        ],
      },
    },
    // 2. Load and validate config and tree; number the iteration from the branch's loop commits.
    loadTree: {
      invoke: {
        id: "loadState",
        src: "loadState",
        input: ({ context }) => loadRequest(context),
        onDone: {
          actions: assign(({ context, event }) => {
            const load = judgeLoadedState(event.output, { recheck: context.request.recheck !== undefined });
            if (load.kind !== "treeValid" && load.kind !== "treeInvalid") return { load, message: load.message };
            const loaded = event.output;
            const start: IterationStart = {
              runId: runIdOf(context),
              iteration: load.iteration,
              stepKind: load.kind === "treeInvalid" ? "repair" : context.request.recheck ? "recheck" : "leaf",
              config: load.config,
              records: load.records,
              previousTree: load.previousTree,
              // A leaf step's (or a re-check's) tree is the tree file at the start; a repair's is from further back.
              treeFromStart: load.kind === "treeValid",
              ...(load.kind === "treeValid" && loaded.tree.ok && loaded.tree.text !== undefined ? { previousTreeText: loaded.tree.text } : {}),
              guardProgram: loaded.guardProgram,
              ...(loaded.finished !== undefined && loaded.finished.length > 0 ? { finished: loaded.finished } : {}),
              identity: loaded.identity,
              ...startPointOf(context),
              ...(load.kind === "treeInvalid" ? { repair: { treeProblems: load.treeProblems, requiredNodeId: load.requiredNodeId } } : {}),
            };
            return { load, start };
          }),
        },
        onError: [
          { guard: "isBug", target: "crashed", actions: "recordBug" },
          { target: "failed", actions: { type: "say", params: ({ event }) => ({ message: errorMessage(event.error) }) } },
        ],
      },
      always: [
        { guard: "configInvalid", target: "refused" },
        { guard: "preflightFailed", target: "refused" },
        { guard: "treeMissing", target: "refused" },
        { guard: "passesDisagree", target: "refused" },
        { guard: "noValidTreeInHistory", target: "refused" },
        { guard: "repairsExhausted", target: "failed" },
        { guard: "recheckOnInvalidTree", target: "refused" },
        { guard: "treeValid", target: "selectLeaf" },
        // 5.1 REPAIR TREE: the tree is invalid after an agent session.
        { guard: "treeInvalid", target: "repairTree" },
      ],
    },
    // 3. Select the leftmost open leaf (a re-check: the open leaf a person named).
    selectLeaf: {
      entry: assign(({ context }) => {
        const start = started(context);
        const plan = start.finished ? { finished: start.finished, records: start.records } : undefined;
        const selected = judgeSelection(start.previousTree, start.runId, context.request.recheck, plan);
        if (selected.kind !== "selected") return { selected, message: selected.message };
        return { selected, leaf: selected.leaf };
      }),
      always: [
        { guard: "rootPasses", target: "nothingToDo" },
        { guard: "recheckRefused", target: "refused" },
        { guard: "leafSelected", target: "buildPrompt" },
        // A leaf an imported plan marks finished: the guard alone judges it first (with the others still pending), no agent.
        {
          guard: "finishedSelected",
          target: "prepareRecheck",
          actions: assign(({ context }) => ({ start: { ...started(context), stepKind: "recheck" as const } })),
        },
        { guard: "recheckSelected", target: "prepareRecheck" },
      ],
    },
    // A re-check (`runner recheck`, or a plan-finished leaf): no agent; the iteration is journaled and logged, then the guard alone judges the leaf.
    prepareRecheck: {
      tags: ["recorded"],
      invoke: {
        id: "prepareRecheck",
        src: "prepareRecheck",
        input: ({ context }) => ({ start: started(context), leaf: selectedLeaf(context) }),
        onDone: { target: "guard", actions: assign({ deadlineMs: ({ event }) => event.output.deadlineMs }) },
        onError: [
          { guard: "isBug", target: "crashed", actions: "recordBug" },
          { target: "recover", actions: { type: "recordRunnerError", params: ({ event }) => ({ kind: "other", error: event.error }) } },
        ],
      },
    },
    // 4. Build the prompt pack and the context folder; the selected node's policy sidecar is judged first.
    buildPrompt: {
      invoke: {
        id: "preparePrompt",
        src: "preparePrompt",
        input: ({ context }) => ({ start: started(context), leaf: context.leaf }),
        onDone: { actions: assign({ prompt: ({ event }) => ({ text: event.output.prompt, policy: judgeNodePolicy(event.output.policy) }) }) },
        onError: [
          { guard: "isBug", target: "crashed", actions: "recordBug" },
          { target: "recover", actions: { type: "recordRunnerError", params: ({ event }) => ({ kind: "other", error: event.error }) } },
        ],
      },
      always: [
        {
          guard: "policyInvalid",
          target: "refused",
          actions: {
            type: "say",
            params: ({ context }) => ({ message: context.prompt?.policy.kind === "policyInvalid" ? context.prompt.policy.message : "" }),
          },
        },
        { guard: "promptReady", target: "execute" },
      ],
    },
    // 5.1 REPAIR TREE: a repair prompt instead of a leaf (no leaf is selected).
    repairTree: {
      invoke: {
        id: "prepareRepairPrompt",
        src: "preparePrompt",
        input: ({ context }) => ({ start: started(context), leaf: undefined }),
        onDone: {
          target: "execute",
          actions: assign({ prompt: ({ event }) => ({ text: event.output.prompt, policy: { kind: "policyValid", allowedWritePaths: undefined } }) }),
        },
        onError: [
          { guard: "isBug", target: "crashed", actions: "recordBug" },
          { target: "recover", actions: { type: "recordRunnerError", params: ({ event }) => ({ kind: "other", error: event.error }) } },
        ],
      },
    },
    // 5. A fresh agent session, within the iteration's time budget.
    execute: {
      tags: ["recorded"],
      invoke: {
        id: "runAgent",
        src: "runAgent",
        input: ({ context }) => ({ start: started(context), leaf: context.leaf, prompt: context.prompt?.text ?? "" }),
        onDone: {
          actions: assign(({ context, event }) => {
            const verdict = judgeAgentRun(event.output, started(context).config.limits.iterationTimeoutSeconds);
            return {
              agent: { facts: event.output, verdict },
              deadlineMs: event.output.deadlineMs,
              ...(verdict.kind === "agentFinished" ? {} : { runnerError: verdict.runnerError }),
            };
          }),
        },
        onError: [
          { guard: "isBug", target: "crashed", actions: "recordBug" },
          { target: "recover", actions: { type: "recordRunnerError", params: ({ event }) => ({ kind: "other", error: event.error }) } },
        ],
      },
      always: [
        { guard: "agentStopped", target: "recover" },
        { guard: "agentNotStarted", target: "recover" },
        { guard: "agentFailed", target: "recover" },
        { guard: "agentFinished", target: "reloadTree" },
      ],
    },
    // 6. Re-load and validate: the answer, the tree (immutability included), the changed paths.
    reloadTree: {
      invoke: {
        id: "collectResult",
        src: "collectResult",
        input: ({ context }) => collectRequest(context),
        onDone: {
          actions: assign(({ context, event }) => {
            const start = started(context);
            const verdict = judgeAgentResult({
              previousTree: start.previousTree,
              previousTreeText: start.previousTreeText,
              collected: event.output,
              requiredNodeId: requiredNodeId(context),
            });
            return {
              answer: { collected: event.output, verdict },
              ...(verdict.kind === "outputInvalid" ? { runnerError: verdict.runnerError } : {}),
            };
          }),
        },
        onError: [
          { guard: "isBug", target: "crashed", actions: "recordBug" },
          { target: "recover", actions: { type: "recordRunnerError", params: ({ event }) => ({ kind: "other", error: event.error }) } },
        ],
      },
      always: [
        { guard: "outputInvalid", target: "recover" },
        // The tree is left as the agent wrote it and committed; the next step repairs it.
        { guard: "agentTreeInvalid", target: "persist" },
        { guard: "repairAccepted", target: "updateState" },
        { guard: "leafAccepted", target: "classify" },
      ],
    },
    // 7. Classify (DECOMPOSE / EXECUTE) and judge the agent's status (contract and path policies).
    classify: {
      entry: assign(({ context }) => {
        const { collected, verdict } = answered(context);
        return {
          judgement: judgeIteration({
            previousLeaf: selectedLeaf(context).leaf,
            agentTree: verdict.agentTree,
            status: verdict.output.status,
            changedPaths: collected.changedPaths,
            protectedPaths: started(context).config.guard.protectedPaths,
            allowedWritePaths: context.prompt?.policy.kind === "policyValid" ? context.prompt.policy.allowedWritePaths : undefined,
            git: collected.git,
          }),
        };
      }),
      always: [{ guard: "guardRequired", target: "guard" }, { target: "updateState" }],
    },
    // 8. EXECUTE + done: run the guard (`just ci`) within what is left of the budget.
    guard: {
      invoke: {
        id: "runGuard",
        src: "runGuard",
        input: ({ context }) => ({ start: started(context), leaf: context.leaf, deadlineMs: deadlineOf(context), ...batchOf(context) }),
        onDone: {
          actions: assign(({ context, event }) => {
            const config = started(context).config;
            const verdict = judgeGuardRun(event.output, {
              judgement: context.judgement,
              command: config.guard.command,
              timeoutSeconds: config.limits.iterationTimeoutSeconds,
            });
            return { guard: { facts: event.output, verdict }, ...(verdict.kind === "guardFinished" ? {} : { runnerError: verdict.runnerError }) };
          }),
        },
        onError: [
          { guard: "isBug", target: "crashed", actions: "recordBug" },
          { target: "recover", actions: { type: "recordRunnerError", params: ({ event }) => ({ kind: "guard_error", error: event.error }) } },
        ],
      },
      always: [
        { guard: "guardStopped", target: "recover" },
        { guard: "guardNotStarted", target: "recover" },
        { guard: "guardFinished", target: "updateState" },
      ],
    },
    // 9. Runner-owned state updates (seed 002): reset, transition, saturation, derived passes, sorting.
    //    A re-check changes the tree only on a green guard (no agent tried, so no attempt is counted).
    updateState: {
      entry: assign(({ context }) => ({ update: stateUpdate(context) })),
      always: { target: "persist" },
    },
    // Seed 002 "Runner Error Recovery": retry, guard skipped, attempts unchanged; persist and commit,
    // then report the error. The agent's tree is kept when valid, else left for the next repair step.
    recover: {
      tags: ["recorded"],
      invoke: {
        id: "collectAfterError",
        src: "collectResult",
        input: ({ context }) => collectRequest(context),
        onDone: { target: "persist", actions: assign(({ context, event }) => recovery(context, event.output)) },
        onError: [
          { guard: "isBug", target: "crashed", actions: "recordBug" },
          { target: "persist", actions: assign(({ context }) => recovery(context, undefined)) },
        ],
      },
    },
    // 10. Persist: the tree atomically in canonical form, and the iteration's logs.
    persist: {
      invoke: {
        id: "persistIteration",
        src: "persistIteration",
        input: ({ context }) => ({ record: recorded(context) }),
        onDone: { target: "commit" },
        onError: [
          { guard: "isBug", target: "crashed", actions: "recordBug" },
          {
            target: "failed",
            actions: {
              type: "say",
              params: ({ event }) => ({
                message: `Could not persist the iteration: ${errorMessage(event.error)}; the working tree holds the agent's changes uncommitted.`,
              }),
            },
          },
        ],
      },
    },
    // 10. Commit the iteration (failures included) with the deterministic subject.
    commit: {
      invoke: {
        id: "commitIteration",
        src: "commitIteration",
        input: ({ context }) => ({ record: recorded(context), start: started(context) }),
        onDone: [
          {
            guard: "hadRunnerError",
            target: "failed",
            actions: assign(({ context, event }) => {
              const start = started(context);
              return {
                commit: event.output.sha,
                logError: event.output.logError,
                message: context.runnerError ? runnerErrorSentence(start.runId, start.iteration, context.runnerError) : "",
              };
            }),
          },
          { target: "committed", actions: assign(({ event }) => ({ commit: event.output.sha, logError: event.output.logError })) },
        ],
        onError: [
          { guard: "isBug", target: "crashed", actions: "recordBug" },
          {
            target: "failed",
            actions: {
              type: "say",
              params: ({ event }) => ({
                message: `Could not commit the iteration: ${errorMessage(event.error)}; the working tree holds the iteration uncommitted.`,
              }),
            },
          },
        ],
      },
    },
    committed: { type: "final", entry: { type: "end", params: { outcome: "committed" } } },
    nothingToDo: { type: "final", entry: { type: "end", params: { outcome: "nothing-to-do" } } },
    refused: { type: "final", entry: { type: "end", params: { outcome: "refused" } } },
    failed: { type: "final", entry: { type: "end", params: { outcome: "failed" } } },
    crashed: { type: "final", entry: { type: "end", params: { outcome: "crashed" } } },
  },
});

// Reading the hand-off records. Each is set by the state of its phase, before any state that reads
// it; reading one that is not set is a bug in the machine (the step ends "crashed").

/** A hand-off record that the states before this one have set. */
function present<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new TypeError(`the iteration machine read ${what} before it was set`);
  return value;
}

function started(context: IterationContext): IterationStart {
  return present(context.start, "the start record");
}

function selectedLeaf(context: IterationContext) {
  return present(context.leaf, "the selected leaf");
}

function deadlineOf(context: IterationContext): number {
  return present(context.deadlineMs, "the iteration's deadline");
}

/** The answer of an accepted result (classify runs only after one). */
function answered(context: IterationContext) {
  const answer = present(context.answer, "the agent's answer");
  if (answer.verdict.kind !== "resultAccepted") throw new TypeError(`classify after a ${answer.verdict.kind} result`);
  return { collected: answer.collected, verdict: answer.verdict };
}

function interruption(context: IterationContext) {
  if (context.safety?.kind !== "interrupted") throw new TypeError("resumeInterrupted without an interrupted iteration");
  return context.safety;
}

/** The iteration the step records, once it is numbered (an interrupted one: as its journal names it). */
export function iterationNamed(context: IterationContext): IterationRef | undefined {
  if (context.start) return { runId: context.start.runId, iteration: context.start.iteration };
  if (context.safety?.kind === "interrupted") return { runId: context.safety.interrupted.runId, iteration: context.safety.interrupted.iteration };
  return undefined;
}

/**
 * The iteration's record, once it is numbered: from the hand-off records; for an interrupted
 * iteration, with the node its journal names (also when its state could not be loaded).
 */
function recordOf(context: IterationContext) {
  const named = iterationNamed(context);
  if (!named) return undefined;
  if (context.safety?.kind !== "interrupted") return iterationRecord(context);
  const { interrupted } = context.safety;
  return iterationRecord({
    ...context,
    start: context.start ?? { ...named, stepKind: interrupted.stepKind },
    journalNodeId: interrupted.nodeId ?? undefined,
  });
}

function recorded(context: IterationContext) {
  return present(recordOf(context), "the iteration's number");
}

/** The run the step works on, as the safety check found it. */
export function runIdOf(context: IterationContext): string {
  const safety = present(context.safety, "the safety verdict");
  if (safety.kind === "safe") return safety.runId;
  if (safety.kind === "interrupted") return safety.interrupted.runId;
  throw new TypeError("the run id of an unsafe repository");
}

function startPointOf(context: IterationContext): Pick<IterationStart, "from" | "control"> {
  const repository = present(context.repository, "the repository's facts");
  return {
    from: {
      branch: present(repository.branch, "the run branch"),
      head: present(repository.head, "the starting commit"),
      runStart: repository.runStarts[runIdOf(context)],
    },
    control: repository.control,
  };
}

function loadRequest(context: IterationContext): LoadRequest {
  return { runId: runIdOf(context), head: present(context.repository, "the repository's facts").head };
}

/** The node that must still exist after the agent: the selected leaf, or for a repair the node that broke the tree. */
function requiredNodeId(context: IterationContext): string | undefined {
  const start = started(context);
  return start.repair ? start.repair.requiredNodeId : context.leaf?.leaf.id;
}

/** The leaves a re-check of plan-finished leaves judges (none for any other step). */
function batchOf(context: IterationContext): { batch?: readonly string[] } {
  return context.selected?.kind === "selected" && context.selected.batch !== undefined ? { batch: context.selected.batch } : {};
}

function collectRequest(context: IterationContext): CollectRequest {
  return { start: started(context), answer: context.agent?.facts.answer };
}

/** Step 9: the outcome (the guard's verdict, else the judgement's; a repair has none) applied to the agent's tree. */
function stateUpdate(context: IterationContext): UpdatePhase {
  const start = started(context);
  const previous = start.previousTree;
  if (start.stepKind === "recheck") {
    const guard = present(context.guard, "the guard's verdict").verdict;
    if (guard.kind !== "guardFinished") throw new TypeError(`updateState after ${guard.kind}`);
    const pass = guard.outcome.guard === "pass" ? guard.outcome : undefined;
    // The plan-finished leaves judged with it pass on the same green guard.
    const also = pass ? (batchOf(context).batch ?? []) : [];
    const updated = applyStateUpdates(previous, structuredClone(previous), selectedLeaf(context).leaf.id, pass, also);
    return { outcome: guard.outcome, failure: guard.failure, updated, progressed: madeProgress(previous, updated, selectedLeaf(context).leaf.id) };
  }
  const { verdict } = present(context.answer, "the agent's answer");
  if (verdict.kind !== "resultAccepted") throw new TypeError(`updateState after a ${verdict.kind} result`);
  if (start.stepKind === "repair") {
    const updated = applyStateUpdates(previous, verdict.agentTree, undefined, undefined);
    return {
      outcome: { status: verdict.output.status, guard: "skipped" },
      failure: undefined,
      updated,
      progressed: madeProgress(previous, updated, undefined),
    };
  }
  const judgement = present(context.judgement, "the judgement");
  const guard = context.guard?.verdict;
  // The guard's verdict carries the failure the next iteration hears; without a guard, the judgement's.
  const judged =
    guard?.kind === "guardFinished"
      ? { outcome: guard.outcome, failure: guard.failure }
      : { outcome: judgement.outcome, failure: failureFeedback({ judgement }) };
  const leafId = selectedLeaf(context).leaf.id;
  const updated = applyStateUpdates(previous, verdict.agentTree, leafId, judged.outcome);
  return { ...judged, updated, progressed: madeProgress(previous, updated, leafId) };
}

/** A runner error's recovery: what could be kept of what the agent left (without facts, what the records hold stays). */
function recovery(context: IterationContext, collected: CollectedFacts | undefined): Partial<IterationContext> {
  const start = started(context);
  const selectedId = start.stepKind === "repair" ? undefined : context.leaf?.leaf.id;
  const recovered = recoverIteration({
    previousTree: start.previousTree,
    previousTreeText: start.previousTreeText,
    collected,
    requiredNodeId: requiredNodeId(context),
    selectedId,
  });
  const progressed = recovered.updated !== undefined && madeProgress(start.previousTree, recovered.updated, selectedId);
  const update: UpdatePhase = { outcome: recovered.outcome, failure: undefined, updated: recovered.updated, progressed };
  if (!collected || !recovered.verdict) return { update };
  return { answer: { collected, verdict: recovered.verdict }, update };
}
