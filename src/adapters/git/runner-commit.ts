// The one way the runner commits — an iteration (src/step/actors/commit-iteration.ts), a person's
// edit (person-edit.ts) and a run's goal (`runner start --goal`): what is staged in the runner's own
// index becomes a commit through git's plumbing (no hook, no editor, no signing), whose only parent
// is the commit the work started from; the branch moves to it by compare-and-swap, only while this
// runner still holds the repository's lock; the user's index then mirrors it.
import { readFile } from "node:fs/promises";
import { runIdFromBranch } from "../../core/commit/run-id.js";
import { RefusalError } from "../../errors.js";
import { commitTimeNow, moveBranch, writeCommitObject, writesCommitsItself } from "./commit-writer.js";
import { gitDir, GitRepo, type CommitIdentity } from "./git.js";
import { projectPath } from "../files/project-files.js";
import { ensureRunnerIndex, publishRunnerIndex } from "./runner-index.js";
import { repositoryState, type RepositoryStatePaths } from "../state/runner-state.js";
import { writeFileAtomic } from "../files/tree-store.js";

/** Where a commit goes: the branch, the commit it must still point at, and how the runner works there. */
export interface CommitTarget {
  git: GitRepo;
  gitDir: string;
  state: RepositoryStatePaths;
  branch: string;
  parent: string;
}

/**
 * Commits what the runner's index holds on `target.branch`, whose tip must still be `target.parent`
 * (else git refuses the update and nothing moves). `lockLost` is asked right before the branch
 * moves; a reason makes `lost(reason)` the error and nothing is committed.
 */
export async function commitStaged(
  target: CommitTarget,
  message: string,
  identity: CommitIdentity,
  lock: { lockLost?: () => string | undefined; lost: (reason: string) => Error },
): Promise<string> {
  const { git, gitDir: dir, state, branch, parent } = target;
  const tree = await git.writeTree();
  // The object and the move written as git writes them, where the runner can (commit-writer.ts);
  // `when` is then the commit's time. Where it cannot (or either answers undefined), git does.
  const when = writesCommitsItself(dir, identity) ? commitTimeNow() : undefined;
  const sha = (when && writeCommitObject(dir, tree, parent, message, identity, when)) ?? (await git.commitTree(tree, parent, message, identity));
  const reason = lock.lockLost?.();
  if (reason !== undefined) throw lock.lost(reason);
  if ((when && moveBranch(dir, branch, sha, parent, identity, when)) === undefined) await git.updateRef(`refs/heads/${branch}`, sha, parent);
  await publishRunnerIndex(state, dir, sha);
  return sha;
}

/** The checked-out branch and its tip; refuses where nothing can be committed (no commit, detached HEAD). */
export async function checkedOutTarget(
  root: string,
  env: Readonly<Record<string, string | undefined>>,
): Promise<CommitTarget & { runId: string | undefined }> {
  const { branch, sha } = await new GitRepo(root).head();
  if (sha === undefined) throw new RefusalError("The repository has no commits yet; commit your project (with .runner/) first, then try again.");
  if (branch === undefined)
    throw new RefusalError("HEAD is detached; check out the branch the change belongs on (the run's runner/<id>, or main), then try again.");
  const dir = await gitDir(root);
  const state = repositoryState(env, dir);
  return { git: GitRepo.forStep(root, dir, state.index), gitDir: dir, state, branch, parent: sha, runId: runIdFromBranch(branch) };
}

/**
 * Writes `files` (repository-relative path → new text, each atomically) and commits exactly them on
 * the checked-out branch. Each must be as the branch's tip holds it: an uncommitted change of a
 * person would otherwise be swept into the commit.
 */
export async function commitFiles(
  target: CommitTarget,
  root: string,
  files: Readonly<Record<string, string>>,
  message: string,
  identity: CommitIdentity,
  lock: { lockLost?: () => string | undefined; lost: (reason: string) => Error },
): Promise<string> {
  const { git, state, parent } = target;
  const paths = Object.keys(files);
  for (const relative of paths) {
    const atTip = await git.showFile(parent, relative);
    const onDisk = await readFile(projectPath(root, relative), "utf8").catch(() => undefined);
    if (atTip !== onDisk)
      throw new RefusalError(
        `${relative} has changes that are not committed; commit them (\`git commit\`) or undo them (\`git checkout -- ${relative}\`), then try again — nothing was written.`,
      );
  }
  await ensureRunnerIndex(git, state, parent);
  for (const [relative, text] of Object.entries(files)) await writeFileAtomic(projectPath(root, relative), text);
  await git.stagePaths(paths);
  return commitStaged(target, message, identity, lock);
}
