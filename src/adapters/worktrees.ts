// The repository's worktrees and run branches, as `runner start --worktree`, `runner runs` and
// `runner remove` need them: git's own listing (`git worktree list --porcelain`), the runner/*
// branches with their tips, and whether a branch's commits are on some other branch.
import path from "node:path";
import { BRANCH_PREFIX } from "../core/run-id.js";
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

/** The default folder of a run's worktree: beside the main working tree, named after it and the run. */
export function defaultWorktreePath(mainWorktree: string, runId: string): string {
  return path.join(path.dirname(mainWorktree), `${path.basename(mainWorktree)}-${runId}`);
}
