// The iteration machine's context, input and output (machines/iteration.ts holds only the machine).
// Facts come from the actors (src/core/step-facts.ts); verdicts from src/core/step-verdicts.ts.
import type { AgentOutputCheck } from "../src/core/agent-output.js";
import type { NodePolicyVerdict } from "../src/core/change-policy.js";
import type { Judgement } from "../src/core/classify.js";
import type { ResolvedConfig } from "../src/core/config.js";
import type { IterationRecord } from "../src/core/iteration-record.js";
import type { LoopRecord } from "../src/core/loop-history.js";
import type { Problem } from "../src/core/problems.js";
import type { RepositoryFacts } from "../src/core/safety.js";
import type { AgentStatus, GuardOutcome, StateUpdateResult } from "../src/core/state-update.js";
import type { LeafSelection } from "../src/core/select.js";
import type {
  AgentRunFacts,
  CollectedFacts,
  ControlSnapshot,
  GuardFacts,
  ProgramIdentity,
  RunnerErrorFact,
  StepKind,
} from "../src/core/step-facts.js";
import type { AgentRunVerdict, GuardVerdict, LoadVerdict, ResultVerdict, SafetyVerdict, SelectionVerdict } from "../src/core/step-verdicts.js";
import type { TaskTree } from "../src/core/tree.js";

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

/** Step 4: the prompt pack, and the selected node's policy verdict (an invalid sidecar refuses the iteration). */
export interface PromptPhase {
  text: string;
  policy: NodePolicyVerdict;
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

/** Step 8: how the guard ran, and its verdict. */
export interface GuardPhase {
  facts: GuardFacts;
  verdict: GuardVerdict;
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

/**
 * The state of one step, in hand-off records: what the step was asked, the safety and load verdicts,
 * the start record (set once), then one field per later phase, each set by the state of its phase.
 */
export interface IterationContext {
  request: StepInput;
  /** 1. What the safety check found (branch and HEAD the iteration starts from), and its verdict. */
  repository?: RepositoryFacts;
  safety?: SafetyVerdict;
  /** 2. The loaded state's verdict. */
  load?: LoadVerdict;
  start?: IterationStart;
  /** 3. The selection's verdict, and the selected leaf (none for a repair). */
  selected?: SelectionVerdict;
  leaf?: LeafSelection;
  /** 4. The prompt pack. */
  prompt?: PromptPhase;
  /** The iteration's deadline (ms since the epoch), set when the agent (or a re-check's guard) starts; the guard shares it. */
  deadlineMs?: number;
  /** 5. The agent session. */
  agent?: AgentPhase;
  /** 6. What the agent left. */
  answer?: AnswerPhase;
  /** 7. Classification and the judgement of the agent's status and changes. */
  judgement?: Judgement;
  /** 8. The guard. */
  guard?: GuardPhase;
  /** 9. The state update. */
  update?: UpdatePhase;
  /** A runner error (seed 002): recorded as a retry, no attempt counted. */
  runnerError?: RunnerErrorFact;
  /** 10. The commit, and a local log it could not write. */
  commit?: string;
  logError?: string;
  message?: string;
  /** A bug: the unexpected exception an actor threw. */
  bug?: unknown;
  /** Set by the final state. */
  ending?: StepOutcome;
}

// What each actor is given (its `input`): everything it needs, nothing it must remember.

/** Names the iteration (its log folder is .runner/iterations/<runId>/<NNNN>/). */
export interface IterationRef {
  runId: string;
  iteration: number;
}

/** What loading the run's state needs: the run, and the commit the step starts from (its history is read at it). */
export interface LoadRequest {
  runId: string;
  head: string | undefined;
}

/** Where an iteration starts: the run branch and its commit (the loop commit's parent). */
export interface StartPoint {
  branch: string;
  head: string;
  /** Where the run began, as `runner start` recorded it (named by the run's first loop commit, Runner-Start). */
  runStart: string | undefined;
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
  leaf: LeafSelection | undefined;
  /** The iteration's deadline, set when the agent started. */
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
