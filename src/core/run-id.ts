// Run ids and the loop's branch and commit-message grammar (CONTRACT §4, §7).
import type { GuardOutcome } from "./state-update.js";

/** What an agent's iteration was, by the paths it changed (src/core/classify.ts decides). */
export type IterationKind = "decompose" | "execute";

export const RUN_ID_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;
export const BRANCH_PREFIX = "runner/";

export function runIdProblem(runId: string): string | undefined {
  if (RUN_ID_PATTERN.test(runId)) return undefined;
  return `run id ${JSON.stringify(runId)} is not valid: use 1 to 64 letters, digits, '.', '_' or '-'`;
}

/** The run id a branch name implies (`runner/<id>`), or undefined. */
export function runIdFromBranch(branch: string | undefined): string | undefined {
  if (branch === undefined || !branch.startsWith(BRANCH_PREFIX)) return undefined;
  const id = branch.slice(BRANCH_PREFIX.length);
  return RUN_ID_PATTERN.test(id) ? id : undefined;
}

/**
 * What a loop commit on a node was: the agent's iteration, classified (CONTRACT §7); a person's
 * re-check of the node by the guard alone (`runner recheck`); or an iteration the run's stop (Ctrl-C)
 * or the runner's death interrupted, recorded as a runner error.
 */
export type NodeCommitKind = IterationKind | "recheck" | "interrupted";

export type CommitSubject =
  | { kind: NodeCommitKind; runId: string; iteration: number; nodeId: string; guard: GuardOutcome }
  | { kind: "repair"; runId: string; iteration: number };

export function formatCommitSubject(subject: CommitSubject): string {
  const head = `chore(loop): run ${subject.runId} iter ${subject.iteration}`;
  if (subject.kind === "repair") return `${head} repair guard=skipped`;
  return `${head} node ${subject.nodeId} ${subject.kind} guard=${subject.guard}`;
}

const SUBJECT =
  /^chore\(loop\): run ([A-Za-z0-9._-]{1,64}) iter ([1-9][0-9]*) (?:node ([A-Za-z0-9][A-Za-z0-9._-]{0,127}) (decompose|execute|recheck|interrupted) guard=(pass|fail|skipped)|repair guard=skipped)$/;

export function parseCommitSubject(line: string): CommitSubject | undefined {
  const match = SUBJECT.exec(line);
  if (!match) return undefined;
  const [, runId, iteration, nodeId, kind, guard] = match;
  if (nodeId === undefined) return { kind: "repair", runId: runId!, iteration: Number(iteration) };
  return { kind: kind as NodeCommitKind, runId: runId!, iteration: Number(iteration), nodeId, guard: guard as GuardOutcome };
}

/** An extended regular expression (git log -E --grep) matching this run's loop commit subjects. */
export function loopSubjectPattern(runId: string): string {
  return `^chore\\(loop\\): run ${runId.replace(/[.]/g, "\\.")} iter [0-9]+ `;
}
