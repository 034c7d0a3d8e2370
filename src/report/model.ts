// The data of `runner report`: everything the HTML page shows, gathered from a run's commits (always)
// and the local iteration logs (when present). Fields that only the local logs know are optional, so
// a report of a fresh clone is the same model with those left out.

/** Token counts and cost of the agent; every field optional (executors record what they know). */
export interface Usage {
  input_tokens?: number;
  cached_input_tokens?: number;
  output_tokens?: number;
  reasoning_tokens?: number;
  cost_usd?: number;
}

export const USAGE_FIELDS = ["input_tokens", "cached_input_tokens", "output_tokens", "reasoning_tokens", "cost_usd"] as const;

export type IterationKindName = "decompose" | "execute" | "repair" | "recheck" | "interrupted";

/** What an iteration came to, in one word: the chart's colour and the list's badge. */
export type IterationOutcome = "pass" | "fail" | "error" | "invalid-tree" | "retry" | "decompose" | "repair" | "other";

export interface DiffFile {
  path: string;
  /** Lines added and removed; undefined for a binary file. */
  added?: number;
  removed?: number;
}

export interface IterationDiff {
  /** Files the commit changed, the tree file left out (the tree is shown on its own). */
  files: DiffFile[];
  /** The patch, cut at a bound; `truncated` says so and `patchLines` gives the whole size. */
  patch: string;
  patchLines: number;
  truncated: boolean;
}

/** One state of the iteration machine the iteration went through, with the time it spent there. */
export interface StateVisit {
  state: string;
  ms?: number;
}

/** What `.runner/iterations/<run>/<NNNN>/` adds to the commit: only on the machine that ran it. */
export interface LocalLog {
  startedAt?: string;
  finishedAt?: string;
  agentMs?: number;
  guardMs?: number;
  totalMs?: number;
  path?: StateVisit[];
  guardCommand?: string[];
  guardExitCode?: number;
  /** The end of the guard's output. */
  guardTail?: string;
  agentExitCode?: number;
  agentTimedOut?: boolean;
  /** The agent's own error message, when its executor recorded one. */
  agentError?: string;
  /** The end of the agent's output, kept for iterations that ended in a runner error. */
  agentTail?: string;
  usage?: Usage;
}

export interface ReportIteration {
  iteration: number;
  commit: string;
  committedAt?: string;
  /** Undefined for a repair step (it has no node). */
  nodeId?: string;
  nodeTitle?: string;
  kind: IterationKindName;
  agentStatus?: string;
  guard: "pass" | "fail" | "skipped";
  attempts?: { after: number; max: number };
  outcome: IterationOutcome;
  summary: string;
  failure?: string;
  runnerError?: string;
  /** Test files the iteration changed (its commit's Runner-Tests). */
  testsChanged?: string[];
  treeLeftInvalid: boolean;
  /** Read as the page is written (iterationDiffs), one iteration at a time; absent in the gathered model. */
  diff?: IterationDiff;
  local?: LocalLog;
}

export type NodeState = "passed" | "open" | "stuck";

export interface ReportNode {
  id: string;
  title: string;
  state: NodeState;
  attempts: number;
  maxAttempts: number;
  /** The leaf the next `runner step` selects. */
  next: boolean;
  /** Iterations of this run that worked on the node. */
  iterations: number[];
  children: ReportNode[];
}

/** Lines an iteration (or another commit of the run) added to questions.md or assumptions.md. */
export interface NoteAddition {
  file: "questions" | "assumptions";
  commit: string;
  /** Undefined for a commit that is not one of the run's loop commits (a person's edit). */
  iteration?: number;
  lines: string[];
}

export interface Totals {
  iterations: number;
  decompose: number;
  execute: number;
  repair: number;
  /** Iterations whose guard passed. */
  passes: number;
  /** Iterations that failed, as every view counts them (src/core/commit/iteration-outcome.ts): the sum of the kinds below. */
  failures: number;
  guardFailures: number;
  /** The agent said retry (or broke the contract, counted as a retry): an attempt spent. */
  retries: number;
  runnerErrors: number;
  invalidTrees: number;
  otherFailures: number;
  nodes?: { total: number; passed: number; stuck: number };
  /** Summed over the iterations with a local log (`timed` of them). */
  time?: { agentMs: number; guardMs: number; runnerMs: number; totalMs: number; timed: number };
  /** First and last loop commit times. */
  span?: { from: string; to: string };
  /** Summed over the iterations that recorded usage (`recorded` of them). */
  usage?: Usage & { recorded: number };
}

export type RunOutcomeKind = "complete" | "stuck" | "runner-error" | "tree-invalid" | "in-progress" | "empty";

export interface RunOutcome {
  kind: RunOutcomeKind;
  headline: string;
  detail: string;
  /** Complete, and the audit found the history clean. */
  mergeable: boolean;
}

export interface AuditResult {
  clean: boolean;
  violations: { commit: string; iteration?: number; message: string }[];
  /** A person's edits between the run's commits (by a runner command or by hand), each judged by the rules. */
  personEdits?: PersonEditEntry[];
}

export interface PersonEditEntry {
  commit: string;
  subject: string;
  made: "runner" | "hand";
  author?: string;
  valid: boolean;
}

export interface MergeAdvice {
  /** The ref the run was read from (`runner/<id>`, or a remote-tracking one on a fresh clone). */
  ref: string;
  /** The branch to merge into, as guessed from the branches holding the run's base; or the base commit. */
  target: string;
  commands: { label: string; command: string }[];
}

export interface Report {
  runId: string;
  /** The commit the run was read at. */
  tip: string;
  /** The commit the run began from (parent of its first loop commit). */
  base?: string;
  generatedAt: string;
  /** How many iterations had a local log (the rest come from commits alone). */
  localLogs: number;
  outcome: RunOutcome;
  totals: Totals;
  /** The tree at the run's newest commit (or the last one the runner accepted), and a note when it is not that commit's. */
  tree?: { root?: ReportNode; note?: string };
  audit?: AuditResult;
  iterations: ReportIteration[];
  notes: NoteAddition[];
  merge: MergeAdvice;
}
