// Trees from the run's git history, as the step and `runner validate` both need them: the tree the
// runner last accepted (after an iteration that left the tree invalid), the newest valid tree, and
// the run the checked-out branch belongs to.
import path from "node:path";
import { LAYOUT } from "../../core/base/layout.js";
import { leftTreeInvalid, loopRecords, type LoopRecord } from "../../core/commit/loop-history.js";
import { runIdFromBranch, runIdProblem } from "../../core/commit/run-id.js";
import { loopSubjectPattern } from "../../core/commit/commit-message.js";
import type { TaskTree } from "../../core/tree/tree.js";
import { gitDir, type GitRepo } from "../git/git.js";
import { readOptional } from "../files/project-files.js";
import { checkTreeText } from "../files/tree-store.js";

/** The branch HEAD names (`ref: refs/heads/<branch>` in the git folder's HEAD), or undefined. */
export async function checkedOutBranch(root: string): Promise<string | undefined> {
  const head = await readOptional(path.join(await gitDir(root), "HEAD"));
  const match = head === undefined ? null : /^ref: refs\/heads\/(.+)\n?$/.exec(head);
  return match?.[1];
}

/** The newest valid tree among the last commits that touched the tree file. */
export async function lastValidTree(git: GitRepo) {
  const shas = (await git.raw(["log", "--format=%H", "-n", "50", "HEAD", "--", LAYOUT.tree])).split("\n").filter(Boolean);
  for (const sha of shas) {
    const text = await git.showFile(sha, LAYOUT.tree);
    if (text === undefined) continue;
    const load = checkTreeText(text);
    if (load.ok) return load.tree;
  }
  return undefined;
}

/**
 * The tree the runner last accepted in this run (records newest first, the newest one left the tree
 * invalid): at the newest loop commit that did not leave it invalid, else where the run began.
 */
export async function acceptedTree(git: GitRepo, records: readonly LoopRecord[]): Promise<TaskTree | undefined> {
  const newestAccepted = records.find((record) => !leftTreeInvalid(record));
  const revision = newestAccepted ? newestAccepted.sha : `${records[records.length - 1]!.sha}^`;
  const text = await git.showFile(revision, LAYOUT.tree);
  if (text === undefined) return undefined;
  const load = checkTreeText(text);
  return load.ok ? load.tree : undefined;
}

/**
 * The tree a passed-node check compares the working tree with: when the newest loop commit of the
 * checked-out run left the tree invalid (committed as the agent wrote it), the tree the runner last
 * accepted, as `runner step` does; otherwise the tree committed at HEAD. Undefined when there is none.
 */
export async function immutabilityBase(root: string, git: GitRepo): Promise<{ tree: TaskTree; from: "accepted" | "HEAD" } | undefined> {
  const runId = runIdFromBranch(await checkedOutBranch(root).catch(() => undefined));
  if (runId !== undefined && runIdProblem(runId) === undefined) {
    const records = loopRecords(await git.loopCommits(loopSubjectPattern(runId)).catch(() => []), runId);
    if (records[0] && leftTreeInvalid(records[0])) {
      const accepted = await acceptedTree(git, records);
      if (accepted) return { tree: accepted, from: "accepted" };
    }
  }
  const committed = await git.showFile("HEAD", LAYOUT.tree);
  if (committed === undefined) return undefined;
  const load = checkTreeText(committed);
  return load.ok ? { tree: load.tree, from: "HEAD" } : undefined;
}
