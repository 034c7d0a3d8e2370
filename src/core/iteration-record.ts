// What an iteration hands to persist and commit (and meta.json): one record built from the
// machine's context, whatever path the iteration took.
import { classifyChangedPaths, type IterationKind } from "./classify.js";
import type { ResolvedConfig } from "./config.js";
import type { Judgement } from "./iteration.js";
import { pathsInside } from "./path-rules.js";
import { testFilesIn } from "./test-files.js";
import type { Problem } from "./problems.js";
import type { AgentStatus, GuardOutcome, StateUpdateResult } from "./state-update.js";
import type { AgentGitFacts, CollectedFacts, RunnerErrorFact, StepKind } from "./step-facts.js";
import type { CommitSubject } from "./run-id.js";
import { findNode, type TaskTree } from "./tree.js";
import type { AgentOutput } from "../schemas/types.generated.js";

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
}

/** The parts of the machine's context a record is made from. */
export interface RecordSource {
  runId?: string;
  iteration?: number;
  stepKind?: StepKind;
  config?: ResolvedConfig;
  previousTree?: TaskTree;
  selection?: { leafId: string };
  collected?: CollectedFacts;
  output?: AgentOutput;
  judgement?: Judgement;
  outcome?: { status: AgentStatus; guard: GuardOutcome };
  failure?: string;
  updated?: StateUpdateResult;
  /** Whether the update changed the tree (state-update.ts `madeProgress`), computed once with it. */
  progressed?: boolean;
  runnerError?: RunnerErrorFact;
  treeProblems: Problem[];
}

export function iterationRecord(source: RecordSource): IterationRecord {
  if (source.runId === undefined || source.iteration === undefined) throw new Error("iterationRecord before the iteration is numbered");
  const isRepair = source.stepKind === "repair";
  const leafId = source.selection?.leafId;
  const leaf = !isRepair && leafId !== undefined && source.previousTree ? findNode(source.previousTree, leafId) : undefined;
  const after = source.updated?.selected;
  const changedPaths = source.collected?.changedPaths ?? [];
  const protectedChanged = source.config ? pathsInside(changedPaths, source.config.guard.protectedPaths) : [];
  return {
    runId: source.runId,
    iteration: source.iteration,
    stepKind: source.stepKind ?? "leaf",
    nodeId: isRepair ? undefined : leafId,
    kind: recordKind(
      source,
      changedPaths.filter((file) => !protectedChanged.includes(file)),
    ),
    // A re-check has no agent, so no status.
    status: source.stepKind === "recheck" ? undefined : source.runnerError ? "retry" : (source.outcome?.status ?? source.output?.status),
    guard: source.outcome?.guard ?? "skipped",
    attemptsBefore: leaf?.attempts,
    attemptsAfter: after ? after.attempts : leaf?.attempts,
    maxAttempts: after ? after.max_attempts : leaf?.max_attempts,
    passesAfter: after ? after.passes : leaf?.passes,
    summary: source.output?.summary ?? "",
    failure: source.failure,
    runnerError: source.runnerError,
    treeToWrite: source.updated?.tree,
    treeProblems: source.treeProblems,
    changedPaths,
    derivedPasses: source.updated?.derivedPasses ?? [],
    protectedChanged,
    testFilesChanged: source.config
      ? testFilesIn(
          changedPaths.filter((file) => !protectedChanged.includes(file)),
          source.config.guard.testPatterns,
        )
      : [],
    agentGit: source.collected?.git,
    // (a tree left invalid is no progress; a repair is progress only if the tree differs from the last valid one)
    progressed: source.progressed ?? false,
  };
}

function recordKind(source: RecordSource, changedPaths: readonly string[]): IterationRecord["kind"] {
  if (source.stepKind === "repair") return "repair";
  if (source.stepKind === "recheck") return "recheck";
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
  return parts.length > 0 ? `The agent ${parts.join("; ")}.` : undefined;
}

/** The commit subject of a record (CONTRACT §7). */
export function commitSubjectOf(record: IterationRecord): CommitSubject {
  if (record.stepKind === "repair" || record.kind === "repair") return { kind: "repair", runId: record.runId, iteration: record.iteration };
  return { kind: record.kind, runId: record.runId, iteration: record.iteration, nodeId: record.nodeId!, guard: record.guard };
}
