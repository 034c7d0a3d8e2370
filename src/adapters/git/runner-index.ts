// The runner's own index (GIT_INDEX_FILE of a step's git calls), kept in its state folder so that
// nothing the agent does to .git/index — staged files, skip-worktree or assume-unchanged flags,
// forged stat data — changes what the runner sees or commits. It mirrors the commit it was last
// written for; when HEAD is elsewhere (a first step, or commits by other hands) it is rebuilt
// from HEAD, and the next `git status` hashes the files once. After each commit it is copied to
// .git/index, so that the user's own git agrees with the branch.
import { copyFile, readFile, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import type { GitRepo } from "./git.js";
import type { RepositoryStatePaths } from "../state/runner-state.js";

/**
 * Makes the runner's index hold `head`'s tree (unless it already mirrors that commit and `rebuild`
 * is not asked). An index it had is moved on with `read-tree --reset`, which keeps what git
 * knows of every file whose content did not change (after a user's commit between runs, only the
 * files that commit changed are read again); else it is built anew.
 */
export async function ensureRunnerIndex(git: GitRepo, state: RepositoryStatePaths, head: string | undefined, rebuild = false): Promise<void> {
  if (head === undefined) return;
  const mirrored = (await mirroredCommit(state)) ?? "";
  if (mirrored === head && !rebuild) return;
  const moved =
    !rebuild &&
    mirrored !== "" &&
    (await git.raw(["read-tree", "--reset", head]).then(
      () => true,
      () => false,
    ));
  if (!moved) {
    await rm(state.index, { force: true });
    await git.readTree(head);
  }
  await writeFile(state.indexCommit, `${head}\n`);
}

/** The commit the runner's index was last written for, if any. */
export async function mirroredCommit(state: RepositoryStatePaths): Promise<string | undefined> {
  const text = (await readFile(state.indexCommit, "utf8").catch(() => "")).trim();
  return text === "" ? undefined : text;
}

/** After a commit: the index mirrors `commit`, and .git/index is a copy of it (written atomically). */
export async function publishRunnerIndex(state: RepositoryStatePaths, gitDir: string, commit: string): Promise<void> {
  await writeFile(state.indexCommit, `${commit}\n`);
  const temp = path.join(gitDir, `index.runner-${process.pid}.tmp`);
  try {
    await copyFile(state.index, temp);
    await rename(temp, path.join(gitDir, "index"));
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}
