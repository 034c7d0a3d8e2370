// The iteration machine's context, input and output (machines/iteration.ts holds only the machine).
// Facts come from the actors (src/core/step-facts.ts); verdicts from src/core/step-verdicts.ts.
import type { ResolvedConfig } from "../src/core/config.js";
import type { ProtectedScripts } from "../src/core/guard-definition.js";
import type { Judgement } from "../src/core/iteration.js";
import type { IterationRecord } from "../src/core/iteration-record.js";
import type { LoopRecord } from "../src/core/loop-history.js";
import type { Problem } from "../src/core/problems.js";
import type { RepositoryFacts } from "../src/core/safety.js";
import type { AgentStatus, GuardOutcome, StateUpdateResult } from "../src/core/state-update.js";
import type {
  AgentRunFacts,
  AgentStepKind,
  CollectedFacts,
  ControlSnapshot,
  GuardFacts,
  ProgramIdentity,
  RunnerErrorFact,
  StepKind,
} from "../src/core/step-facts.js";
import type { AgentRunVerdict, GuardVerdict, LoadVerdict, ResultVerdict, SafetyVerdict, SelectionVerdict } from "../src/core/step-verdicts.js";
import type { TaskTree } from "../src/core/tree.js";
import type { AgentOutput } from "../src/schemas/types.generated.js";

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
  /** A bug: the unexpected exception an actor threw (outcome "crashed"). */
  error?: unknown;
}

/** The selected leaf, as the prompt and the record need it. */
export interface Selection {
  leafId: string;
  title?: string;
}

/** The whole state of one step: everything the actors report and the verdicts made of it. */
export interface IterationContext {
  runIdOption: string | undefined;
  /** Set for `runner recheck`. */
  recheck?: RecheckRequest;
  /** 1. What the safety check found (branch and HEAD the iteration starts from). */
  repository?: RepositoryFacts;
  safety?: SafetyVerdict;
  /** 2. The loaded state. */
  load?: LoadVerdict;
  runId?: string;
  iteration?: number;
  stepKind?: StepKind;
  config?: ResolvedConfig;
  records: LoopRecord[];
  /** The valid tree the iteration starts from (a repair: the tree it repairs against). */
  previousTree?: TaskTree;
  /** The text a leaf step's valid tree was loaded from (trees up to a few MB), for tree.before.json. */
  previousTreeText?: string;
  /** `previousTree` was loaded from the tree file as it was when the iteration began (not a repair's, from further back). */
  treeFromStart?: boolean;
  /** The guard's program, found before the agent runs. */
  guardProgram?: ProgramIdentity;
  /** Who the loop commit is by: the run's identity. */
  identity?: { name: string; email: string };
  treeProblems: Problem[];
  /** The node that must still exist after the agent (the selected leaf, or for a repair the node that broke the tree). */
  requiredNodeId?: string;
  /** 3. The selection's verdict: the leaf, the root passing, or a re-check refused. */
  selected?: SelectionVerdict;
  /** The selected leaf (none for a repair). */
  selection?: Selection;
  /** 4. The prompt pack. */
  prompt?: string;
  allowedWritePaths?: string[];
  policyProblem?: string;
  /** The iteration's deadline (ms since the epoch), set when the agent (or a re-check's guard) starts; the guard shares it. */
  deadlineMs?: number;
  /** 5. The agent session. */
  agent?: AgentRunFacts;
  agentVerdict?: AgentRunVerdict;
  /** 6. What the agent left, and what the runner makes of it. */
  collected?: CollectedFacts;
  result?: ResultVerdict;
  output?: AgentOutput;
  agentTree?: TaskTree;
  /** 7. Classification and the judgement of the agent's status and changes. */
  judgement?: Judgement;
  /** 8. The guard. */
  guardRun?: GuardFacts;
  guardVerdict?: GuardVerdict;
  /** The status and guard outcome the transition table is applied with. */
  outcome?: { status: AgentStatus; guard: GuardOutcome };
  failure?: string;
  /** 9. The state update, and whether it changed the tree. */
  updated?: StateUpdateResult;
  progressed?: boolean;
  runnerError?: RunnerErrorFact;
  /** 10. The commit. */
  commit?: string;
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
}

export interface PromptRequest extends IterationRef {
  stepKind: AgentStepKind;
  config: ResolvedConfig;
  previousTree: TaskTree;
  /** The text a leaf step's tree was loaded from, when kept (tree.before.json is that file). */
  previousTreeText?: string;
  records: LoopRecord[];
  treeProblems: Problem[];
  selection: Selection | undefined;
  /** Where the iteration starts, and the git control files before the agent (both written to the journal before anything changes). */
  start: StartPoint;
  control: ControlSnapshot;
}

/** What collecting the agent's result needs to undo its changes to git and to check the guard's program. */
export interface CollectRequest extends IterationRef {
  start: StartPoint;
  /** The iteration's valid tree was loaded from the tree file as it was at the start (a leaf step or a re-check; not a repair). */
  treeFromStart: boolean;
  control: ControlSnapshot;
  guardProgram: ProgramIdentity;
  /** The guard's definition's script entries (taken back when the agent changed them). */
  protectedScripts: ProtectedScripts[];
}

export interface AgentRequest extends IterationRef {
  stepKind: AgentStepKind;
  nodeId: string | undefined;
  title: string | undefined;
  config: ResolvedConfig;
  prompt: string;
}

export interface GuardRequest extends IterationRef {
  nodeId: string | undefined;
  title: string | undefined;
  config: ResolvedConfig;
  /** The iteration's deadline, set when the agent started. */
  deadlineMs: number;
  /** The guard's program as found before the agent ran: run by that path. */
  guardProgram: ProgramIdentity;
  /** Where the iteration started (the candidate commit's parent, for a guard in a clean checkout). */
  start: StartPoint;
}

/** What a re-check needs before its guard runs: the iteration journaled and logged like any other. */
export interface RecheckPrepareRequest extends IterationRef {
  nodeId: string;
  config: ResolvedConfig;
  start: StartPoint;
  control: ControlSnapshot;
}

export interface PersistRequest {
  record: IterationRecord;
}

export interface CommitRequest {
  record: IterationRecord;
  /** The run branch and the commit the iteration started from (the loop commit's only parent). */
  start: StartPoint;
  /** The run's identity (its newest loop commit's; for its first, git's as configured before the agent, or the runner's fallback). */
  identity: { name: string; email: string };
}
