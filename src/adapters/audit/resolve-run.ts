// Which run a reading command (log, status, show, audit, report) reads, worked out once: the run
// id (--run-id, else the checked-out runner/<id> branch), where its history is (its branch, local
// or fetched, else HEAD), and its loop commits there, newest first.
import { GitRepo, type LoopCommit } from "../git/git.js";
import { checkedOutBranch } from "./run-trees.js";
import { runIdFromBranch } from "../../core/commit/run-id.js";
import { loopSubjectPattern, parseCommitSubject } from "../../core/commit/commit-message.js";
import { RefusalError } from "../../errors.js";

export interface ResolvedRun {
  git: GitRepo;
  runId: string;
  /** The checked-out branch (undefined on a detached HEAD). */
  branch: string | undefined;
  /** Where the run's history is read: runner/<id> (local, else a remote's), else HEAD. */
  ref: string;
  /** The commit `ref` names; undefined in a repository without one. */
  tip: string | undefined;
  /** The run's loop commits in the history of `tip`, newest first. */
  loopCommits: LoopCommit[];
}

/** The run, or undefined when none is named and the checked-out branch is no run branch. */
export async function findRun(root: string, runIdOption: string | undefined): Promise<ResolvedRun | undefined> {
  return (await locateRun(root, runIdOption)).run;
}

/** The run, or one sentence saying how to name one (with `times`, each loop commit's committer date). */
export async function resolveRun(root: string, runIdOption: string | undefined, options: { times?: boolean } = {}): Promise<ResolvedRun> {
  const { run, branch } = await locateRun(root, runIdOption, options);
  if (run !== undefined) return run;
  throw new RefusalError(`Branch ${branch ?? "(detached)"} is not a runner/<run-id> branch; check out a run branch or pass --run-id.`);
}

/** The run (undefined when none is named and the checked-out branch is no run branch), and that branch. */
export async function locateRun(
  root: string,
  runIdOption: string | undefined,
  { times = false }: { times?: boolean } = {},
): Promise<{ run?: ResolvedRun; branch: string | undefined }> {
  const git = new GitRepo(root);
  const branch = await checkedOutBranch(root).catch(() => undefined);
  const runId = runIdOption ?? runIdFromBranch(branch);
  if (runId === undefined) return { branch };
  const ref = await runRef(git, runId, branch);
  const tip = await git.resolve(ref);
  const loopCommits =
    tip === undefined
      ? []
      : (await git.loopCommits(loopSubjectPattern(runId), tip, { times })).filter((c) => parseCommitSubject(c.subject)?.runId === runId);
  // A run named that has neither a branch nor a loop commit here is a typo, not an empty run: said, never taken as clean.
  if (runIdOption !== undefined && ref === "HEAD" && loopCommits.length === 0 && runIdFromBranch(branch) !== runId)
    throw new RefusalError(
      `There is no run ${runId} here: no runner/${runId} branch (local or fetched), and HEAD's history has none of its loop commits; \`runner runs\` lists the runs.`,
    );
  return { run: { git, runId, branch, ref, tip, loopCommits }, branch };
}

/** Where run `runId`'s history is: the checked-out run branch, else runner/<id> locally, else a remote's, else HEAD. */
async function runRef(git: GitRepo, runId: string, branch: string | undefined): Promise<string> {
  const local = `runner/${runId}`;
  if (branch === local) return local;
  if ((await git.resolve(`refs/heads/${local}`)) !== undefined) return local;
  const remote = (await git.raw(["for-each-ref", "--format=%(refname:short)", `refs/remotes/*/${local}`]).catch(() => "")).split("\n").find(Boolean);
  return remote ?? "HEAD";
}
