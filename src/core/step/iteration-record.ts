// What an iteration hands to persist and commit (and meta.json): one record built from the
// machine's hand-off records, whatever path the iteration took.
import { classifyChangedPaths, type Judgement } from "../guard/classify.js";
import type { IterationKind } from "../commit/commit-message.js";
import type { IterationFacts } from "../commit/iteration-outcome.js";
import type { ResolvedConfig } from "../config/config.js";
import { pathsInside } from "../guard/path-rules.js";
import { testFilesIn } from "../guard/test-files.js";
import type { Problem } from "../base/problems.js";
import type { AgentStatus, GuardOutcome, StateUpdateResult } from "../tree/state-update.js";
import type { AgentGitFacts, CollectedFacts, RunnerErrorFact, StepKind } from "./step-facts.js";
import type { CommitSubject } from "../commit/commit-message.js";
import type { LeafSelection } from "../tree/select.js";
import type { ResultVerdict } from "./step-verdicts.js";
import type { TaskTree } from "../tree/tree.js";

export interface IterationRecord {
  runId: string;
  iteration: number;
  stepKind: StepKind;
  nodeId: string | undefined;
  /** How the iteration is named in its commit: repair, a person's re-check, interrupted, or the agent's iteration classified. */
  kind: IterationKind | "repair" | "recheck" | "interrupted";
  status: AgentStatus | undefined;
  guard: GuardOutcome;
  attemptsBefore: number | undefined;
  attemptsAfter: number | undefined;
  maxAttempts: number | undefined;
  passesAfter: boolean | undefined;
  summary: string;
  failure: string | undefined;
  runnerError: RunnerErrorFact | undefined;
  /** The tree to write; undefined leaves the agent's (invalid) file for the next repair step. */
  treeToWrite: TaskTree | undefined;
  treeProblems: Problem[];
  changedPaths: string[];
  derivedPasses: string[];
  /** Changed paths the agent may not touch: restored before the commit. */
  protectedChanged: string[];
  /** Test files the commit changes (by `[guard] test_patterns`): Runner-Tests. */
  testFilesChanged: string[];
  /** What the agent did to git itself (undone), when its result was collected. */
  agentGit: AgentGitFacts | undefined;
  /** The iteration changed the task tree (a runner-owned field or an open node): what `run` counts as progress. */
  progressed: boolean;
  /** A re-check of plan-finished leaves with a green guard: the other leaves it passed (Runner-Rechecked). */
  rechecked: string[];
}

/** The parts of the machine's hand-off records a record is made from (machines/iteration-types.ts). */
export interface RecordSource {
  start?: {
    runId: string;
    iteration: number;
    stepKind: StepKind;
    /** Absent only for an interrupted iteration whose state could not be loaded (recorded from its journal alone). */
    config?: ResolvedConfig;
    repair?: { treeProblems: Problem[] };
  };
  leaf?: LeafSelection;
  /** The selection: a re-check of plan-finished leaves carries the batch its guard judges. */
  selected?: { kind: string; batch?: readonly string[] };
  /** The node as the journal names it, when no leaf of the tree is at hand (an interrupted iteration). */
  journalNodeId?: string;
  answer?: { collected: CollectedFacts; verdict: ResultVerdict };
  judgement?: Judgement;
  update?: {
    outcome: { status: AgentStatus; guard: GuardOutcome };
    failure: string | undefined;
    updated: StateUpdateResult | undefined;
    progressed: boolean;
  };
  runnerError?: RunnerErrorFact;
}

export function iterationRecord(source: RecordSource): IterationRecord {
  const { start, update, runnerError } = source;
  if (start === undefined) throw new Error("iterationRecord before the iteration started");
  const isRepair = start.stepKind === "repair";
  const leaf = isRepair ? undefined : source.leaf?.leaf;
  const after = update?.updated?.selected;
  const verdict = source.answer?.verdict;
  const output = verdict && "output" in verdict ? verdict.output : undefined;
  const changedPaths = source.answer?.collected.changedPaths ?? [];
  const protectedChanged = start.config ? pathsInside(changedPaths, start.config.guard.protectedPaths) : [];
  // What the commit holds: protected paths are taken back before it.
  const committedPaths = changedPaths.filter((file) => !protectedChanged.includes(file));
  return {
    runId: start.runId,
    iteration: start.iteration,
    stepKind: start.stepKind,
    nodeId: leaf?.id ?? (isRepair ? undefined : source.journalNodeId),
    kind: recordKind(source, committedPaths),
    // A re-check has no agent, so no status.
    status: start.stepKind === "recheck" ? undefined : runnerError ? "retry" : (update?.outcome.status ?? output?.status),
    guard: update?.outcome.guard ?? "skipped",
    attemptsBefore: leaf?.attempts,
    attemptsAfter: after ? after.attempts : leaf?.attempts,
    maxAttempts: after ? after.max_attempts : leaf?.max_attempts,
    passesAfter: after ? after.passes : leaf?.passes,
    summary: output?.summary ?? "",
    failure: update ? update.failure : verdict?.kind === "agentTreeInvalid" ? verdict.failure : undefined,
    runnerError,
    treeToWrite: update?.updated?.tree,
    // The problems the agent left (or a runner error's recovery found), else those a repair started from.
    treeProblems: verdict?.kind === "agentTreeInvalid" || verdict?.kind === "recovered" ? verdict.treeProblems : (start.repair?.treeProblems ?? []),
    changedPaths,
    derivedPasses: update?.updated?.derivedPasses ?? [],
    protectedChanged,
    testFilesChanged: start.config ? testFilesIn(committedPaths, start.config.guard.testPatterns) : [],
    agentGit: source.answer?.collected.git,
    // (a tree left invalid is no progress; a repair is progress only if the tree differs from the last valid one)
    progressed: update?.progressed ?? false,
    rechecked:
      start.stepKind === "recheck" && update?.outcome.guard === "pass" && leaf ? (source.selected?.batch ?? []).filter((id) => id !== leaf.id) : [],
  };
}

function recordKind(source: RecordSource, changedPaths: readonly string[]): IterationRecord["kind"] {
  const stepKind = source.start?.stepKind;
  if (stepKind === "repair") return "repair";
  if (stepKind === "recheck") return "recheck";
  const error = source.runnerError?.kind;
  if (error === "interrupted" || error === "runner_stopped") return "interrupted";
  return source.judgement?.kind ?? classifyChangedPaths(changedPaths);
}

/** What the agent did to git itself, in one line for the commit (Runner-Git), or undefined when nothing. */
export function describeAgentGit(git: AgentGitFacts | undefined): string | undefined {
  if (!git) return undefined;
  const parts: string[] = [];
  if (git.agentCommits.length > 0)
    parts.push(
      `committed ${git.agentCommits.length} commit(s) itself (${git.agentCommits.map((c) => JSON.stringify(c.subject)).join(", ")}), folded into this iteration`,
    );
  if (git.headMoved) parts.push(`left HEAD ${git.headMoved.branch ? `on ${git.headMoved.branch}` : "detached"}, put back on the run branch`);
  if (git.operations.length > 0) parts.push(`left a ${git.operations.join(" and a ")} in progress, removed`);
  if (git.controlChanged.length > 0) parts.push(`changed ${git.controlChanged.map((name) => `.git/${name}`).join(", ")}, put back`);
  if (git.nestedRepositories.length > 0)
    parts.push(`created repositories without a commit (${git.nestedRepositories.join(", ")}), moved to the iteration's log`);
  if (git.hiddenByIgnoreRules.length > 0) parts.push(`hid ${git.hiddenByIgnoreRules.join(", ")} with an ignore rule it changed`);
  if (git.guardProgramChanged) parts.push(`changed the guard's program ${git.guardProgramChanged}`);
  if (git.runnerFilesRestored && git.runnerFilesRestored.length > 0)
    parts.push(`changed the runner's own ${git.runnerFilesRestored.join(", ")}, put back`);
  if (git.indexLockRemoved) parts.push("left .git/index.lock, removed");
  return parts.length > 0 ? `The agent ${parts.join("; ")}.` : undefined;
}

/** The commit subject of a record (CONTRACT §7). */
export function commitSubjectOf(record: IterationRecord): CommitSubject {
  if (record.stepKind === "repair" || record.kind === "repair") return { kind: "repair", runId: record.runId, iteration: record.iteration };
  return { kind: record.kind, runId: record.runId, iteration: record.iteration, nodeId: record.nodeId!, guard: record.guard };
}

/** The facts of a record as its commit will tell them (src/core/commit/iteration-outcome.ts names and counts them). */
export function recordFacts(record: IterationRecord): IterationFacts {
  return {
    kind: record.kind,
    guard: record.guard,
    status: record.stepKind === "repair" ? undefined : record.status,
    runnerError: record.runnerError ? `${record.runnerError.kind}: ${record.runnerError.message}` : undefined,
    failure: record.failure,
    treeLeftInvalid: record.treeToWrite === undefined,
  };
}
