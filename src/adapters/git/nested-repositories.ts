// Git repositories the agent created inside the work tree without a commit: git cannot add them
// (a repository is committed as a link to its checked-out commit, and there is none), so they
// would block every later commit. They are moved into the iteration's log folder (local, ignored),
// where nothing is lost.
import { existsSync } from "node:fs";
import { mkdir, rename, rm } from "node:fs/promises";
import path from "node:path";
import { GitRepo } from "./git.js";

/** The untracked folders among the changed paths that hold a git repository without a commit. */
export async function uncommittableRepositories(root: string, changedPaths: readonly string[]): Promise<string[]> {
  const candidates = changedPaths.filter((relative) => relative.endsWith("/") && existsSync(path.join(root, relative, ".git")));
  const found: string[] = [];
  for (const relative of candidates) {
    const head = await new GitRepo(path.join(root, relative)).resolve("HEAD");
    if (head === undefined) found.push(relative);
  }
  return found;
}

/** Moves each repository into `logDir`/nested/ (replacing an earlier copy). */
export async function moveAside(root: string, repositories: readonly string[], logDir: string): Promise<void> {
  for (const relative of repositories) {
    const target = path.join(logDir, "nested", relative);
    await rm(target, { recursive: true, force: true });
    await mkdir(path.dirname(target), { recursive: true });
    await rename(path.join(root, relative), target);
  }
}
