// Repository safety before an iteration (seed 000 "Workspace + git policy", seed 001 §5 step 1):
// never on main/master, a branch with commits, a run id, a clean working tree (untracked included),
// and the local-only folders ignored by git.
import { runIdFromBranch, runIdProblem } from "../commit/run-id.js";
import { parseCommitSubject } from "../commit/commit-message.js";
import type { ControlSnapshot, StepKind } from "./step-facts.js";

/** An iteration the journal says was begun and not committed (the runner was killed). */
export interface InterruptedIteration {
  runId: string;
  iteration: number;
  branch: string;
  head: string;
  stepKind: StepKind;
  nodeId: string | null;
}

export type JournalStatus = "resume" | "committed" | "abandoned" | "other-branch";

/**
 * What a journal left behind means: `resume` — HEAD is where the iteration began, so the working
 * tree holds the interrupted iteration; `committed` — HEAD is that iteration's loop commit (killed
 * after committing); `other-branch` — it belongs to another branch; `abandoned` — HEAD moved on by
 * other hands.
 */
export function journalStatus(
  journal: InterruptedIteration,
  branch: string | undefined,
  head: string | undefined,
  headSubject: string | undefined,
): JournalStatus {
  if (journal.branch !== branch) return "other-branch";
  if (journal.head === head) return "resume";
  const subject = headSubject === undefined ? undefined : parseCommitSubject(headSubject);
  if (subject && subject.runId === journal.runId && subject.iteration === journal.iteration) return "committed";
  return "abandoned";
}

export interface RepositoryFacts {
  /** undefined when HEAD is detached. */
  branch: string | undefined;
  /** undefined when the branch has no commits yet. */
  head: string | undefined;
  /** Changed paths (tracked and untracked, not ignored). */
  dirtyPaths: readonly string[];
  /** Whether git ignores `.runner/iterations/` and `.runner/context/`. */
  logsIgnored: boolean;
  /** A merge, rebase, cherry-pick or revert in progress, by name. */
  operationInProgress: string | undefined;
  /** An interrupted iteration to record (journal status `resume`) or one of another branch. */
  interrupted?: InterruptedIteration & { status: "resume" | "other-branch" };
  /** The git control files before this iteration's agent runs (put back after it). */
  control: ControlSnapshot;
  /** Control files an interrupted iteration's agent had changed, put back from its journal. */
  controlRestored: string[];
  /** Where runs began, as `runner start` recorded them (run id → commit), read before any agent runs. */
  runStarts: Readonly<Record<string, string>>;
}

export const PROTECTED_BRANCHES = ["main", "master"];

/** The refusal sentence, or undefined when the iteration may start. */
export function safetyRefusal(facts: RepositoryFacts, runIdOption: string | undefined): string | undefined {
  if (facts.interrupted?.status === "other-branch") {
    return `Iteration ${facts.interrupted.iteration} of run ${facts.interrupted.runId} was interrupted on branch ${facts.interrupted.branch}; check out ${facts.interrupted.branch} and run \`runner step\` to record it.`;
  }
  if (facts.operationInProgress) {
    return `A ${facts.operationInProgress} is in progress; finish or abort it before \`runner step\`.`;
  }
  if (facts.branch === undefined) {
    return "HEAD is detached; check out the run's branch (`git checkout runner/<run-id>`) or start one with `runner start`.";
  }
  if (PROTECTED_BRANCHES.includes(facts.branch)) {
    return `Refusing to run on ${facts.branch}; start a run branch with \`runner start\` (it creates runner/<run-id>).`;
  }
  if (facts.head === undefined) {
    return `Branch ${facts.branch} has no commits yet; commit your project (with .runner/) first, then \`runner start\`.`;
  }
  if (runIdOption !== undefined) {
    const problem = runIdProblem(runIdOption);
    if (problem) return `${problem[0]!.toUpperCase()}${problem.slice(1)}.`;
  } else if (runIdFromBranch(facts.branch) === undefined) {
    return `Branch ${facts.branch} is not a runner/<run-id> branch; pass --run-id or start a run with \`runner start\`.`;
  }
  if (!facts.logsIgnored) {
    return "Git does not ignore .runner/iterations/ and .runner/context/; add them to .runner/.gitignore (`runner init` writes it) and commit.";
  }
  // The working tree of an interrupted iteration holds that iteration's changes: recorded next.
  if (facts.interrupted?.status === "resume") return undefined;
  if (facts.dirtyPaths.length > 0) {
    const shown = facts.dirtyPaths.slice(0, 3).join(", ");
    const more = facts.dirtyPaths.length > 3 ? ` and ${facts.dirtyPaths.length - 3} more` : "";
    return `The working tree is not clean (${shown}${more}); commit or stash your changes before \`runner step\`.`;
  }
  return undefined;
}

/** The run id of an iteration: an interrupted iteration's, else the option when given, else the branch's. */
export function effectiveRunId(facts: RepositoryFacts, runIdOption: string | undefined): string {
  const runId = facts.interrupted?.runId ?? runIdOption ?? runIdFromBranch(facts.branch);
  if (runId === undefined) throw new Error("effectiveRunId called before safetyRefusal");
  return runId;
}
