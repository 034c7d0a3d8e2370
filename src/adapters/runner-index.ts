// The runner's own index (GIT_INDEX_FILE of a step's git calls), kept in its state folder so that
// nothing the agent does to .git/index — staged files, skip-worktree or assume-unchanged flags,
// forged stat data — changes what the runner sees or commits. It mirrors the commit it was last
// written for; when HEAD is elsewhere (a first step, or commits by other hands) it is rebuilt
// from HEAD, and the next `git status` hashes the files once. After each commit it is copied to
// .git/index, so that the user's own git agrees with the branch.
import { copyFile, readFile, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import type { GitRepo } from "./git.js";
import type { RepositoryStatePaths } from "./runner-state.js";

/** Makes the runner's index hold `head`'s tree (unless it already mirrors that commit and `rebuild` is not asked). */
export async function ensureRunnerIndex(git: GitRepo, state: RepositoryStatePaths, head: string | undefined, rebuild = false): Promise<void> {
  if (head === undefined) return;
  const mirrored = (await readFile(state.indexCommit, "utf8").catch(() => "")).trim();
  if (mirrored === head && !rebuild) return;
  await rm(state.index, { force: true });
  await git.readTree(head);
  await writeFile(state.indexCommit, `${head}\n`);
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
