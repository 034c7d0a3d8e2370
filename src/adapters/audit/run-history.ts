// This run's loop commits, as the next iteration needs them (its number, its node's history, the
// failure it must hear, the run's identity). Read from the branch with one `git log`, and kept in
// the runner's state folder (outside the repository, where the agent cannot write) together with
// the commit they were read at: after its own commit the runner adds that commit, so the next step
// of a run reads the file instead of the log. Anything else at HEAD (a commit by other hands,
// another run, a reset) and the log is read again.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { FALLBACK_IDENTITY, parseIdent, type CommitIdentity, type GitRepo, type LoopCommit } from "../git/git.js";
import type { RepositoryStatePaths } from "../state/runner-state.js";
import { writeFileAtomic } from "../files/tree-store.js";
import { loopSubjectPattern } from "../../core/commit/commit-message.js";

interface HistoryFile {
  runId: string;
  /** The commit the history was read at (the branch's tip then). */
  head: string;
  /** The run's loop commits, newest first. */
  commits: LoopCommit[];
  /** `head` is the runner's own commit, and the tree file it holds is one the runner wrote from a valid tree. */
  treeWritten?: boolean;
}

export interface RunHistory {
  /** The run's loop commits at HEAD, newest first. */
  commits: LoopCommit[];
  /** HEAD's tree file is one the runner wrote from a tree it had checked (its own last commit). */
  treeWritten: boolean;
}

function historyFile(state: RepositoryStatePaths): string {
  return path.join(state.dir, "history.json");
}

async function readHistory(state: RepositoryStatePaths): Promise<HistoryFile | undefined> {
  try {
    const value = JSON.parse(await readFile(historyFile(state), "utf8")) as HistoryFile;
    return typeof value.runId === "string" && typeof value.head === "string" && Array.isArray(value.commits) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** The run's history at `head` as the state folder keeps it, if it does. */
export async function keptHistory(state: RepositoryStatePaths, runId: string, head: string | undefined): Promise<RunHistory | undefined> {
  const kept = head === undefined ? undefined : await readHistory(state);
  return kept && kept.runId === runId && kept.head === head ? { commits: kept.commits, treeWritten: kept.treeWritten === true } : undefined;
}

/** The run's history at `head`: `kept` (what the state folder holds for it) when given, else read from the branch. */
export async function runHistory(
  git: GitRepo,
  state: RepositoryStatePaths,
  runId: string,
  head: string | undefined,
  kept?: RunHistory,
): Promise<RunHistory> {
  if (kept) return kept;
  const commits = await git.loopCommits(loopSubjectPattern(runId));
  if (head !== undefined) await writeHistory(state, { runId, head, commits }).catch(() => undefined);
  return { commits, treeWritten: false };
}

/**
 * After the runner's own commit `commit` on top of `parent`: the history it kept for `parent` gains
 * it (`treeWritten`: the commit holds the tree file the runner wrote from a valid tree).
 */
export async function addToHistory(
  state: RepositoryStatePaths,
  runId: string,
  parent: string,
  commit: LoopCommit,
  treeWritten: boolean,
): Promise<void> {
  const kept = await readHistory(state);
  if (!kept || kept.runId !== runId || kept.head !== parent) return;
  await writeHistory(state, { runId, head: commit.sha, commits: [commit, ...kept.commits], treeWritten });
}

async function writeHistory(state: RepositoryStatePaths, history: HistoryFile): Promise<void> {
  // Rewritten every iteration, read only to save a `git log`: atomic, not fsync'd.
  await writeFileAtomic(historyFile(state), `${JSON.stringify(history)}\n`, { durable: false });
}

/**
 * The run's identity, which every loop commit is by (author and committer): its newest loop
 * commit's; for a run's first commit, what git would use — the environment's GIT_AUTHOR_NAME and
 * GIT_AUTHOR_EMAIL, else the configured user.name and user.email (read now, before the agent) —
 * else the runner's fallback.
 */
export async function runIdentity(
  git: GitRepo,
  commits: readonly LoopCommit[],
  env: Readonly<Record<string, string | undefined>>,
): Promise<CommitIdentity> {
  const pinned = parseIdent(commits[0]?.author);
  if (pinned) return pinned;
  if (env.GIT_AUTHOR_NAME && env.GIT_AUTHOR_EMAIL) return { name: env.GIT_AUTHOR_NAME, email: env.GIT_AUTHOR_EMAIL };
  const configured = await git.identity();
  return configured.name && configured.email ? { name: configured.name, email: configured.email } : { ...FALLBACK_IDENTITY };
}
