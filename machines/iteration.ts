// The iteration machine: one `runner step` is one run of this machine (seed 001 §5, seed 002).
// Each state is one step of the seed. I/O is done by the invoked actors, declared here as typed
// placeholders and supplied with `machine.provide()` (the CLI gives real adapters, tests give
// scripted ones). What an actor reports is turned into one verdict by src/core (step-verdicts.ts),
// assigned once; the `always` branches only read the verdict's kind. Final states set the outcome.
import { assign, fromPromise, setup } from "xstate";
import { isBug, errorMessage } from "../src/errors.js";
import { runnerErrorSentence } from "../src/core/run-policy.js";
import { failureFeedback, judgeIteration } from "../src/core/iteration.js";
import { iterationRecord } from "../src/core/iteration-record.js";
import { iterationDir } from "../src/core/layout.js";
import type { RepositoryFacts } from "../src/core/safety.js";
import { findNode } from "../src/core/tree.js";
import { applyStateUpdates, madeProgress, type RunnerErrorKind } from "../src/core/state-update.js";
import type { AgentRunFacts, AgentStepKind, CollectedFacts, GuardFacts, InterruptedState, LoadedState, PromptFacts } from "../src/core/step-facts.js";
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
  CommitRequest,
  GuardRequest,
  IterationContext,
  IterationRef,
  LoadRequest,
  PersistRequest,
  PromptRequest,
  RecheckPrepareRequest,
  StepInput,
  StepOutcome,
  StepOutput,
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
    commitIteration: placeholder<{ sha: string }, CommitRequest>("commitIteration"),
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
    repairsExhausted: ({ context }) => context.load?.kind === "repairsExhausted",
    noValidTreeInHistory: ({ context }) => context.load?.kind === "noValidTreeInHistory",
    recheckOnInvalidTree: ({ context }) => context.load?.kind === "recheckOnInvalidTree",
    treeValid: ({ context }) => context.load?.kind === "treeValid",
    treeInvalid: ({ context }) => context.load?.kind === "treeInvalid",
    rootPasses: ({ context }) => context.selected?.kind === "complete",
    recheckRefused: ({ context }) => context.selected?.kind === "recheckRefused",
    leafSelected: ({ context }) => context.selected?.kind === "selected" && context.stepKind === "leaf",
    recheckSelected: ({ context }) => context.selected?.kind === "selected" && context.stepKind === "recheck",
    policyInvalid: ({ context }) => context.prompt !== undefined && context.policyProblem !== undefined,
    promptReady: ({ context }) => context.prompt !== undefined && context.policyProblem === undefined,
    agentStopped: ({ context }) => context.agentVerdict?.kind === "agentStopped",
    agentNotStarted: ({ context }) => context.agentVerdict?.kind === "agentNotStarted",
    agentFailed: ({ context }) => context.agentVerdict?.kind === "agentFailed",
    agentFinished: ({ context }) => context.agentVerdict?.kind === "agentFinished",
    outputInvalid: ({ context }) => context.result?.kind === "outputInvalid",
    agentTreeInvalid: ({ context }) => context.result?.kind === "agentTreeInvalid",
    repairAccepted: ({ context }) => context.result?.kind === "resultAccepted" && context.stepKind === "repair",
    leafAccepted: ({ context }) => context.result?.kind === "resultAccepted" && context.stepKind === "leaf",
    guardRequired: ({ context }) => context.judgement?.runGuard === true,
    guardStopped: ({ context }) => context.guardVerdict?.kind === "guardStopped",
    guardNotStarted: ({ context }) => context.guardVerdict?.kind === "guardNotStarted",
    guardFinished: ({ context }) => context.guardVerdict?.kind === "guardFinished",
    hadRunnerError: ({ context }) => context.runnerError !== undefined,
  },
}).createMachine({
  id: "iteration",
  initial: "safetyCheck",
  context: ({ input }) => ({ runIdOption: input.runIdOption, recheck: input.recheck, records: [], treeProblems: [] }),
  output: ({ context }) => ({
    outcome: context.ending ?? "failed",
    message: context.message ?? "",
    // An iteration that was (or may have been) written has a record; a refusal, nothing to do or a bug has none.
    record:
      (context.ending === "committed" || context.ending === "failed") && context.runId !== undefined && context.iteration !== undefined
        ? iterationRecord(context)
        : undefined,
    commit: context.commit,
    error: context.bug,
  }),
  states: {
    // 1. Repository safety: not main/master, a run branch, clean working tree, logs ignored; or an
    //    interrupted iteration (the journal says one began here and was never committed).
    safetyCheck: {
      invoke: {
        id: "inspectRepository",
        src: "inspectRepository",
        input: ({ context }) => ({ runIdOption: context.runIdOption }),
        onDone: {
          actions: assign(({ context, event }) => ({ repository: event.output, safety: judgeRepository(event.output, context.runIdOption) })),
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
          actions: assign(({ context }) => {
            if (context.safety?.kind !== "interrupted") return {};
            const { interrupted, runnerError } = context.safety;
            return {
              runId: interrupted.runId,
              iteration: interrupted.iteration,
              stepKind: interrupted.stepKind,
              selection: interrupted.nodeId === null ? undefined : { leafId: interrupted.nodeId },
              requiredNodeId: interrupted.nodeId ?? undefined,
              runnerError,
            };
          }),
        },
        {
          guard: "repositorySafe",
          target: "loadTree",
          actions: assign(({ context }) => (context.safety?.kind === "safe" ? { runId: context.safety.runId } : {})),
        },
      ],
    },
    // An interrupted iteration is recorded as a runner error (seed 002: retry, guard skipped,
    // attempts unchanged) and committed, from the tree it began from.
    resumeInterrupted: {
      invoke: {
        id: "loadInterrupted",
        src: "loadInterrupted",
        input: ({ context }) => loadRequest(context),
        onDone: {
          target: "recover",
          actions: assign(({ event }) => ({
            config: event.output.config,
            records: event.output.records,
            previousTree: event.output.previousTree,
            treeFromStart: event.output.treeFromStart,
            guardProgram: event.output.guardProgram,
            identity: event.output.identity,
          })),
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
            const load = judgeLoadedState(event.output, { recheck: context.recheck !== undefined });
            if (load.kind !== "treeValid" && load.kind !== "treeInvalid") return { load, message: load.message };
            const { config, records, iteration, previousTree } = load;
            const repair = load.kind === "treeInvalid" ? { treeProblems: load.treeProblems, requiredNodeId: load.requiredNodeId } : {};
            const stepKind = load.kind === "treeInvalid" ? ("repair" as const) : context.recheck ? ("recheck" as const) : ("leaf" as const);
            const tree = event.output.tree;
            const previousTreeText = load.kind === "treeValid" && tree.ok ? tree.text : undefined;
            // A leaf step's (or a re-check's) tree is the tree file at the start; a repair's is from further back.
            const treeFromStart = load.kind === "treeValid";
            return {
              load,
              config,
              records,
              iteration,
              previousTree,
              previousTreeText,
              treeFromStart,
              stepKind,
              guardProgram: event.output.guardProgram,
              identity: event.output.identity,
              ...repair,
            };
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
        const selected = judgeSelection(context.previousTree!, context.runId!, context.recheck);
        if (selected.kind !== "selected") return { selected, message: selected.message };
        return { selected, selection: selected.selection, requiredNodeId: selected.selection.leafId };
      }),
      always: [
        { guard: "rootPasses", target: "nothingToDo" },
        { guard: "recheckRefused", target: "refused" },
        { guard: "leafSelected", target: "buildPrompt" },
        { guard: "recheckSelected", target: "prepareRecheck" },
      ],
    },
    // \`runner recheck\`: no agent; the iteration is journaled and logged, then the guard alone judges the leaf.
    prepareRecheck: {
      invoke: {
        id: "prepareRecheck",
        src: "prepareRecheck",
        input: ({ context }) => ({
          ...iterationRef(context),
          nodeId: context.selection!.leafId,
          config: context.config!,
          start: startPoint(context),
          control: context.repository!.control,
        }),
        onDone: { target: "guard", actions: assign({ deadlineMs: ({ event }) => event.output.deadlineMs }) },
        onError: [
          { guard: "isBug", target: "crashed", actions: "recordBug" },
          { target: "recover", actions: { type: "recordRunnerError", params: ({ event }) => ({ kind: "other", error: event.error }) } },
        ],
      },
    },
    // 4. Build the prompt pack and the context folder.
    buildPrompt: {
      invoke: {
        id: "preparePrompt",
        src: "preparePrompt",
        input: ({ context }) => promptRequest(context),
        onDone: {
          actions: assign(({ event }) => ({
            prompt: event.output.prompt,
            allowedWritePaths: event.output.allowedWritePaths,
            policyProblem: event.output.policyProblem,
          })),
        },
        onError: [
          { guard: "isBug", target: "crashed", actions: "recordBug" },
          { target: "recover", actions: { type: "recordRunnerError", params: ({ event }) => ({ kind: "other", error: event.error }) } },
        ],
      },
      always: [
        { guard: "policyInvalid", target: "refused", actions: { type: "say", params: ({ context }) => ({ message: context.policyProblem ?? "" }) } },
        { guard: "promptReady", target: "execute" },
      ],
    },
    // 5.1 REPAIR TREE: a repair prompt instead of a leaf (no leaf is selected).
    repairTree: {
      invoke: {
        id: "prepareRepairPrompt",
        src: "preparePrompt",
        input: ({ context }) => promptRequest(context),
        onDone: { target: "execute", actions: assign({ prompt: ({ event }) => event.output.prompt }) },
        onError: [
          { guard: "isBug", target: "crashed", actions: "recordBug" },
          { target: "recover", actions: { type: "recordRunnerError", params: ({ event }) => ({ kind: "other", error: event.error }) } },
        ],
      },
    },
    // 5. A fresh agent session, within the iteration's time budget.
    execute: {
      invoke: {
        id: "runAgent",
        src: "runAgent",
        input: ({ context }) => ({
          ...iterationRef(context),
          stepKind: agentStepKind(context),
          nodeId: context.selection?.leafId,
          title: context.selection?.title,
          config: context.config!,
          prompt: context.prompt ?? "",
        }),
        onDone: {
          actions: assign(({ context, event }) => {
            const agentVerdict = judgeAgentRun(event.output, context.config!.limits.iterationTimeoutSeconds);
            return {
              agent: event.output,
              deadlineMs: event.output.deadlineMs,
              agentVerdict,
              ...(agentVerdict.kind === "agentFinished" ? {} : { runnerError: agentVerdict.runnerError }),
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
    // 6. Re-load and validate: the output file, the tree (immutability included), the changed paths.
    reloadTree: {
      invoke: {
        id: "collectResult",
        src: "collectResult",
        input: ({ context }) => collectRequest(context),
        onDone: {
          actions: assign(({ context, event }) => {
            const result = judgeAgentResult({
              previousTree: context.previousTree!,
              previousTreeText: context.previousTreeText,
              collected: event.output,
              requiredNodeId: context.requiredNodeId,
              outputFile: `${iterationDir(context.runId!, context.iteration!)}/output.json`,
            });
            switch (result.kind) {
              case "outputInvalid":
                return { collected: event.output, result, runnerError: result.runnerError };
              case "agentTreeInvalid":
                return { collected: event.output, result, output: result.output, treeProblems: result.treeProblems, failure: result.failure };
              case "resultAccepted":
                return { collected: event.output, result, output: result.output, agentTree: result.agentTree };
            }
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
        const judgement = judgeIteration({
          previousLeaf: selectedLeaf(context),
          agentTree: context.agentTree!,
          status: context.output!.status,
          changedPaths: context.collected!.changedPaths,
          protectedPaths: context.config!.guard.protectedPaths,
          allowedWritePaths: context.allowedWritePaths,
          git: context.collected!.git,
        });
        return { judgement, outcome: judgement.outcome, failure: failureFeedback({ judgement }) };
      }),
      always: [{ guard: "guardRequired", target: "guard" }, { target: "updateState" }],
    },
    // 8. EXECUTE + done: run the guard (`just ci`) within what is left of the budget.
    guard: {
      invoke: {
        id: "runGuard",
        src: "runGuard",
        input: ({ context }) => ({
          ...iterationRef(context),
          nodeId: context.selection?.leafId,
          title: context.selection?.title,
          config: context.config!,
          deadlineMs: context.deadlineMs!,
          guardProgram: context.guardProgram!,
          start: startPoint(context),
        }),
        onDone: {
          actions: assign(({ context, event }) => {
            const guardVerdict = judgeGuardRun(event.output, {
              judgement: context.judgement,
              command: context.config!.guard.command,
              timeoutSeconds: context.config!.limits.iterationTimeoutSeconds,
            });
            if (guardVerdict.kind !== "guardFinished") return { guardRun: event.output, guardVerdict, runnerError: guardVerdict.runnerError };
            return { guardRun: event.output, guardVerdict, outcome: guardVerdict.outcome, failure: guardVerdict.failure };
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
      entry: assign(({ context }) => {
        const selectedId = context.stepKind === "repair" ? undefined : context.selection!.leafId;
        if (context.stepKind === "recheck") {
          const pass = context.outcome?.guard === "pass" ? context.outcome : undefined;
          const updated = applyStateUpdates(context.previousTree!, structuredClone(context.previousTree!), selectedId, pass);
          return { updated, progressed: madeProgress(context.previousTree!, updated, selectedId) };
        }
        const updated = applyStateUpdates(
          context.previousTree!,
          context.agentTree!,
          selectedId,
          selectedId === undefined ? undefined : context.outcome,
        );
        return { updated, progressed: madeProgress(context.previousTree!, updated, selectedId) };
      }),
      always: { target: "persist" },
    },
    // Seed 002 "Runner Error Recovery": retry, guard skipped, attempts unchanged; persist and commit,
    // then report the error. The agent's tree is kept when valid, else left for the next repair step.
    recover: {
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
        input: ({ context }) => ({ record: iterationRecord(context) }),
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
        input: ({ context }) => ({ record: iterationRecord(context), start: startPoint(context), identity: context.identity! }),
        onDone: [
          {
            guard: "hadRunnerError",
            target: "failed",
            actions: assign(({ context, event }) => ({
              commit: event.output.sha,
              message: runnerErrorSentence(context.runId!, context.iteration!, context.runnerError!),
            })),
          },
          { target: "committed", actions: assign({ commit: ({ event }) => event.output.sha }) },
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

// The actors' inputs, made from the context.

function loadRequest(context: IterationContext): LoadRequest {
  return { runId: context.runId!, head: context.repository!.head };
}

function iterationRef(context: IterationContext): IterationRef {
  return { runId: context.runId!, iteration: context.iteration! };
}

function promptRequest(context: IterationContext): PromptRequest {
  return {
    ...iterationRef(context),
    stepKind: agentStepKind(context),
    config: context.config!,
    previousTree: context.previousTree!,
    previousTreeText: context.previousTreeText,
    records: context.records,
    treeProblems: context.treeProblems,
    selection: context.selection,
    start: startPoint(context),
    control: context.repository!.control,
  };
}

/** The kind of a step that runs the agent (a re-check never does). */
function agentStepKind(context: IterationContext): AgentStepKind {
  if (context.stepKind === "recheck" || context.stepKind === undefined) throw new Error(`an agent step with step kind ${context.stepKind}`);
  return context.stepKind;
}

function startPoint(context: IterationContext) {
  return { branch: context.repository!.branch!, head: context.repository!.head! };
}

function collectRequest(context: IterationContext): CollectRequest {
  return {
    ...iterationRef(context),
    start: startPoint(context),
    control: context.repository!.control,
    guardProgram: context.guardProgram!,
    protectedScripts: context.config?.guard.protectedScripts ?? [],
    treeFromStart: context.treeFromStart === true,
  };
}

/** The selected leaf as the iteration began (ids are unique in a valid tree). */
function selectedLeaf(context: IterationContext) {
  return findNode(context.previousTree!, context.selection!.leafId)!;
}

function recovery(context: IterationContext, collected: CollectedFacts | undefined) {
  const recovered = recoverIteration({
    runnerError: context.runnerError!,
    previousTree: context.previousTree!,
    previousTreeText: context.previousTreeText,
    collected,
    requiredNodeId: context.requiredNodeId,
    selectedId: context.stepKind === "repair" ? undefined : context.selection?.leafId,
  });
  // Without the facts (collecting them failed too), what the context holds stays as it was.
  if (!collected) return { outcome: recovered.outcome, failure: undefined, updated: undefined, progressed: false };
  const progressed =
    recovered.updated !== undefined &&
    madeProgress(context.previousTree!, recovered.updated, context.stepKind === "repair" ? undefined : context.selection?.leafId);
  return {
    collected,
    output: recovered.output,
    outcome: recovered.outcome,
    treeProblems: recovered.treeProblems,
    failure: undefined,
    updated: recovered.updated,
    progressed,
  };
}
