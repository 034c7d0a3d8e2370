// The records the machines of one iteration hand to each other (machines/iteration.ts composes them).
// Each child machine is invoked with its input, every field of which its states rely on, and hands
// back a Route as its output: the child the step goes on with (and that child's input), or how the
// step ends. Facts come from the actors (src/core/step/step-facts.ts); verdicts from src/core/step/step-verdicts.ts.
import type { AgentOutputCheck } from "../src/core/agent/agent-output.js";
import type { Judgement } from "../src/core/guard/classify.js";
import type { ResolvedConfig } from "../src/core/config/config.js";
import type { IterationRecord } from "../src/core/step/iteration-record.js";
import type { LoopRecord } from "../src/core/commit/loop-history.js";
import type { Problem } from "../src/core/base/problems.js";
import type { InterruptedIteration } from "../src/core/step/safety.js";
import type { LeafSelection } from "../src/core/tree/select.js";
import type { AgentStatus, GuardOutcome, StateUpdateResult } from "../src/core/tree/state-update.js";
import type {
  AgentRunFacts,
  CollectedFacts,
  ControlSnapshot,
  GuardFacts,
  ProgramIdentity,
  RunnerErrorFact,
  StepKind,
} from "../src/core/step/step-facts.js";
import type { AgentRunVerdict, GuardVerdict, ResultVerdict } from "../src/core/step/step-verdicts.js";
import type { TaskTree } from "../src/core/tree/tree.js";

export interface StepInput {
  runIdOption?: string;
  /** `runner recheck [node-id]`: the guard alone judges an open leaf (default: the leftmost). */
  recheck?: RecheckRequest;
}

export interface RecheckRequest {
  nodeId?: string;
}

/** How a step ended, as its final state says. */
export type StepOutcome = "committed" | "nothing-to-do" | "refused" | "failed" | "crashed";

export interface StepOutput {
  outcome: StepOutcome;
  /** The sentence the CLI prints. */
  message: string;
  record?: IterationRecord;
  commit?: string;
  /** The commit was made, but its local log (diff.patch) could not be written: why (e.g. ENOSPC). */
  logError?: string;
  /** A bug: the unexpected exception an actor threw (outcome "crashed"). */
  error?: unknown;
}

/** What the step learns on its way, for the CLI and meta.json: gathered by the parent from the routes. */
export interface StepTrace {
  /** The run the step works on, once the safety check named it. */
  runId?: string;
  /** The iteration, once it is numbered (an interrupted one: as its journal names it). */
  iteration?: IterationRef;
  /** The guard's command, once the configuration is loaded. */
  guardCommand?: readonly string[];
  /** How the agent ran, when it did. */
  agent?: AgentRunFacts;
  /** How the guard ran, when it did. */
  guard?: GuardFacts;
}

/**
 * Set once, when the iteration starts (loading the state, or recording an interrupted iteration):
 * everything every later state reads about where the iteration begins.
 */
export interface IterationStart extends IterationRef {
  stepKind: StepKind;
  config: ResolvedConfig;
  /** This run's loop commits, newest first. */
  records: LoopRecord[];
  /** The valid tree the iteration starts from (a repair: the tree it repairs against). */
  previousTree: TaskTree;
  /** The text a leaf step's valid tree was loaded from (trees up to a few MB), for tree.before.json. */
  previousTreeText?: string;
  /** `previousTree` was loaded from the tree file as it was when the iteration began (not a repair's, from further back). */
  treeFromStart: boolean;
  /** The guard's program, found before the agent runs. */
  guardProgram: ProgramIdentity;
  /** The leaves an imported plan marks finished (.runner/state/finished.json at the starting commit). */
  finished?: readonly string[];
  /** Who the loop commit is by: the run's identity. */
  identity: Identity;
  /** The run branch and the commit the iteration starts from (the loop commit's only parent). */
  from: StartPoint;
  /** The git control files before the agent (put back after it). */
  control: ControlSnapshot;
  /** A repair: the problems of the tree it repairs, and the node that broke it (it must survive the repair). */
  repair?: { treeProblems: Problem[]; requiredNodeId: string | undefined };
}

export interface Identity {
  name: string;
  email: string;
}

/** Names the iteration (its log folder is .runner/iterations/<runId>/<NNNN>/). */
export interface IterationRef {
  runId: string;
  iteration: number;
}

/** Where an iteration starts: the run branch and its commit (the loop commit's parent). */
export interface StartPoint {
  branch: string;
  head: string;
  /** Where the run began, as `runner start` recorded it (named by the run's first loop commit, Runner-Start). */
  runStart: string | undefined;
}

/** Step 5: how the agent ran, and what the runner makes of it. */
export interface AgentPhase {
  facts: AgentRunFacts;
  verdict: AgentRunVerdict;
}

/** Step 6: what the agent left (its answer included), and the verdict on it; or, after a runner error, what was recovered. */
export interface AnswerPhase {
  collected: CollectedFacts;
  verdict: ResultVerdict;
}

/** A result the runner accepted: the agent's answer and a valid tree. */
export interface AcceptedAnswer {
  collected: CollectedFacts;
  verdict: Extract<ResultVerdict, { kind: "resultAccepted" }>;
}

/** Step 8: how the guard ran, and its verdict. */
export interface GuardPhase {
  facts: GuardFacts;
  verdict: GuardVerdict;
}

/** A guard that ran to its end (it passed or failed). */
export interface FinishedGuard {
  facts: GuardFacts;
  verdict: Extract<GuardVerdict, { kind: "guardFinished" }>;
}

/** Step 9 (or a runner error's recovery): the outcome the transition table was applied with, and the tree it gave. */
export interface UpdatePhase {
  outcome: { status: AgentStatus; guard: GuardOutcome };
  /** What the next iteration on the node hears (context/failure.md). */
  failure: string | undefined;
  /** Undefined when the tree is left for a repair step (or, recovering, when collecting the facts failed too). */
  updated: StateUpdateResult | undefined;
  /** The update changed the tree (state-update.ts `madeProgress`). */
  progressed: boolean;
}

// The input of each child machine (machines/<name>.ts): what every one of its states relies on.

/** resumption: an interrupted iteration to record, as its journal names it. */
export interface ResumptionInput {
  interrupted: InterruptedIteration;
  runnerError: RunnerErrorFact;
  from: StartPoint;
  control: ControlSnapshot;
}

/** loading: the run, and where its next iteration starts. */
export interface LoadingInput {
  recheck: RecheckRequest | undefined;
  runId: string;
  from: StartPoint;
  control: ControlSnapshot;
}

/** leafPrompt: a leaf step on the selected leaf. */
export interface LeafPromptInput {
  start: IterationStart;
  leaf: LeafSelection;
}

/** repairPrompt: a repair of the tree (no leaf is selected). */
export interface RepairPromptInput {
  start: IterationStart;
}

/** recheckPrep: the guard alone judges a leaf; a plan-finished one with the others still pending (`batch`, it first). */
export interface RecheckPrepInput {
  start: IterationStart;
  leaf: LeafSelection;
  batch: readonly string[] | undefined;
}

/** The prompt the agent runs on, and what the selected node's policy lets it change. */
export interface ReadyPrompt {
  text: string;
  allowedWritePaths: string[] | undefined;
}

/** agentSession: a fresh agent on the prompt (a repair: no leaf). */
export interface AgentSessionInput {
  start: IterationStart;
  leaf: LeafSelection | undefined;
  prompt: ReadyPrompt;
}

/** guarding: the guard after an agent's EXECUTE iteration, or for a re-check (no agent). */
export type GuardingInput =
  | {
      kind: "leaf";
      start: IterationStart;
      leaf: LeafSelection;
      deadlineMs: number;
      answer: AcceptedAnswer;
      judgement: Judgement;
      /** The answer as the agent's session read it (a runner error's recovery collects with it). */
      agentAnswer: AgentOutputCheck | undefined;
    }
  | { kind: "recheck"; start: IterationStart; leaf: LeafSelection; deadlineMs: number; batch: readonly string[] | undefined };

/** stateUpdate: the outcome to apply to the tree, by step kind. */
export type StateUpdateInput =
  | { kind: "repair"; start: IterationStart; answer: AcceptedAnswer }
  | { kind: "leaf"; start: IterationStart; leaf: LeafSelection; answer: AcceptedAnswer; judgement: Judgement; guard: FinishedGuard | undefined }
  | { kind: "recheck"; start: IterationStart; leaf: LeafSelection; batch: readonly string[] | undefined; guard: FinishedGuard };

/** recovery: a runner error (seed 002): what the iteration knew when it happened. */
export interface RecoveryInput {
  start: IterationStart;
  /** The selected leaf (none for a repair, or an interrupted iteration whose node the tree no longer holds). */
  leaf: LeafSelection | undefined;
  runnerError: RunnerErrorFact;
  /** The answer as the agent's session read it, if it ended (else the recovery reads it). */
  agentAnswer: AgentOutputCheck | undefined;
  /** What the iteration had collected of the agent's result before the error (kept when collecting fails again). */
  answer: AnswerPhase | undefined;
  /** The judgement of an agent's iteration whose guard failed to run. */
  judgement: Judgement | undefined;
  /** The node as an interrupted iteration's journal names it, when the tree does not hold it. */
  journalNodeId: string | undefined;
}

/** recording: the iteration's record, persisted and committed. */
export interface RecordingInput {
  start: IterationStart;
  record: IterationRecord;
}

// Routes: what a child machine hands back (its output), each to the parent's state of that name.

/** How the step ends, by the parent's final state. */
export type Ending =
  | { to: "committed"; record: IterationRecord; commit: CommitFacts }
  | { to: "failed"; message: string; record: IterationRecord | undefined; commit: CommitFacts | undefined }
  | { to: "refused"; message: string }
  | { to: "nothingToDo"; message: string }
  | { to: "crashed"; error: unknown };

/** Where the step goes on: the next child and its input, or how it ends; and what the step learnt. */
export type Route = (
  | Ending
  | { to: "inspection"; input: StepInput }
  | { to: "resumption"; input: ResumptionInput }
  | { to: "loading"; input: LoadingInput }
  | { to: "leafPrompt"; input: LeafPromptInput }
  | { to: "repairPrompt"; input: RepairPromptInput }
  | { to: "recheckPrep"; input: RecheckPrepInput }
  | { to: "agentSession"; input: AgentSessionInput }
  | { to: "guarding"; input: GuardingInput }
  | { to: "stateUpdate"; input: StateUpdateInput }
  | { to: "recovery"; input: RecoveryInput }
  | { to: "recording"; input: RecordingInput }
) & { learnt?: StepTrace };

/** The input of each child machine, by the name of the parent's state that invokes it. */
export type ChildInputs = { [R in Route as R extends { input: unknown } ? R["to"] : never]: R extends { input: infer Input } ? Input : never };

export type ChildName = keyof ChildInputs;

// What each actor is given (its `input`): everything it needs, nothing it must remember.

/** What loading the run's state needs: the run, and the commit the step starts from (its history is read at it). */
export interface LoadRequest {
  runId: string;
  head: string;
}

/** Step 4: the start record and the selected leaf (none for a repair). */
export interface PromptRequest {
  start: IterationStart;
  leaf: LeafSelection | undefined;
}

/** Step 6: the start record, and the agent's answer when its session already read it (else it is read here). */
export interface CollectRequest {
  start: IterationStart;
  answer: AgentOutputCheck | undefined;
}

export interface AgentRequest {
  start: IterationStart;
  leaf: LeafSelection | undefined;
  prompt: string;
}

export interface GuardRequest {
  start: IterationStart;
  leaf: LeafSelection;
  /** The iteration's deadline, set when the agent (or the re-check) started. */
  deadlineMs: number;
  /** A re-check of plan-finished leaves: every leaf this one guard run judges (RUNNER_NODE_IDS), the selected one first. */
  batch?: readonly string[];
}

/** What a re-check needs before its guard runs: the iteration journaled and logged like any other. */
export interface RecheckPrepareRequest {
  start: IterationStart;
  leaf: LeafSelection;
}

export interface PersistRequest {
  record: IterationRecord;
}

/** commitIteration: the commit, and why its local log (diff.patch) could not be written, if it could not. */
export interface CommitFacts {
  sha: string;
  logError?: string;
}

export interface CommitRequest {
  record: IterationRecord;
  start: IterationStart;
}
