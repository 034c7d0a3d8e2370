// The repository's worktrees and run branches, as `runner start --worktree`, `runner runs` and
// `runner remove` need them: git's own listing (`git worktree list --porcelain`), the runner/*
// branches with their tips, and whether a branch's commits are on some other branch.
import { realpathSync } from "node:fs";
import path from "node:path";
import { RefusalError } from "../../errors.js";
import { BRANCH_PREFIX } from "../../core/commit/run-id.js";
import type { GitRepo } from "./git.js";

export interface Worktree {
  /** The worktree's top folder (absolute). */
  path: string;
  /** The branch checked out there (without refs/heads/), or undefined (detached, bare). */
  branch: string | undefined;
  head: string | undefined;
  /** The first one git lists: the main working tree. */
  main: boolean;
  /** Its folder is gone (`git worktree prune` would forget it). */
  prunable: boolean;
}

/** Every worktree of the repository, the main one first. */
export async function listWorktrees(git: GitRepo): Promise<Worktree[]> {
  const out = await git.raw(["worktree", "list", "--porcelain", "-z"]);
  const worktrees: Worktree[] = [];
  let current: Worktree | undefined;
  for (const field of out.split("\0")) {
    if (field === "") {
      current = undefined;
      continue;
    }
    const space = field.indexOf(" ");
    const [key, value] = space < 0 ? [field, ""] : [field.slice(0, space), field.slice(space + 1)];
    if (key === "worktree") {
      current = { path: value, branch: undefined, head: undefined, main: worktrees.length === 0, prunable: false };
      worktrees.push(current);
    } else if (current && key === "HEAD") current.head = value;
    else if (current && key === "branch") current.branch = value.replace(/^refs\/heads\//, "");
    else if (current && key === "prunable") current.prunable = true;
  }
  return worktrees;
}

export interface RunBranch {
  branch: string;
  tip: string;
}

/** Every runner/* branch, by name. */
export async function listRunBranches(git: GitRepo): Promise<RunBranch[]> {
  const out = await git.raw(["for-each-ref", "--sort=refname", "--format=%(refname:short)%00%(objectname)", `refs/heads/${BRANCH_PREFIX}`]);
  return out
    .split("\n")
    .filter((line) => line.length > 0)
    .map((line) => {
      const [branch = "", tip = ""] = line.split("\0");
      return { branch, tip };
    });
}

/** The other branches (local and remote-tracking) that hold `branch`'s tip: where its commits are merged. */
export async function branchesHolding(git: GitRepo, branch: string): Promise<string[]> {
  const out = await git.raw(["for-each-ref", "--format=%(refname)", "--contains", `refs/heads/${branch}`, "refs/heads/", "refs/remotes/"]);
  return out
    .split("\n")
    .filter((ref) => ref.length > 0 && ref !== `refs/heads/${branch}` && !ref.endsWith("/HEAD"))
    .map((ref) => ref.replace(/^refs\/(heads|remotes)\//, ""));
}

/** Removes a linked worktree, changes and all (the caller asked whether they may go). */
export async function removeWorktree(git: GitRepo, folder: string): Promise<void> {
  await git.raw(["worktree", "remove", "--force", folder]);
}

/** Forgets the worktrees whose folders are gone (deleted by hand): `git worktree prune`. */
export async function forgetMissingWorktrees(git: GitRepo): Promise<void> {
  await git.raw(["worktree", "prune"]);
}

/**
 * A new linked worktree at `target` with a new branch at `from`, then `check` of what it holds; a
 * worktree git still has registered there whose folder was deleted by hand is forgotten first. On
 * failure nothing is left behind (the worktree and the branch go) and git's refusal is one sentence.
 */
export async function addRunWorktree(git: GitRepo, target: string, branch: string, from: string, check: () => Promise<void>): Promise<void> {
  if ((await listWorktrees(git)).some((w) => w.prunable && samePath(w.path, target))) await forgetMissingWorktrees(git);
  try {
    await git.raw(["worktree", "add", "-q", "-b", branch, target, from]);
  } catch (error) {
    if (await git.branchExists(branch)) await git.deleteBranch(branch).catch(() => undefined);
    const said = (error as Error).message.replace(/^git \S+ failed: /, "").replace(/^fatal: /, "");
    throw new RefusalError(
      `Could not make the worktree ${target} (git says: ${said}); pick another folder (\`runner start --worktree PATH\`) — nothing was created.`,
    );
  }
  try {
    await check();
  } catch (error) {
    await removeWorktree(git, target);
    await git.deleteBranch(branch);
    throw error;
  }
}

/** Whether two paths name the same folder (resolved through links where they exist). */
export function samePath(a: string, b: string): boolean {
  const real = (p: string) => {
    try {
      return realpathSync(p);
    } catch {
      return path.resolve(p);
    }
  };
  return real(a) === real(b);
}

/** The default folder of a run's worktree: beside the main working tree, named after it and the run. */
export function defaultWorktreePath(mainWorktree: string, runId: string): string {
  return path.join(path.dirname(mainWorktree), `${path.basename(mainWorktree)}-${runId}`);
}
