// `runner cleanup <run-id> [--force]`: cleaning up after a run. Its linked worktree goes (refused
// while a runner works there, or with uncommitted changes unless --force); its branch goes only when
// another branch (local or remote-tracking) holds its tip, so that no commit is lost: else it is
// kept and the sentence says how to keep or drop it (--force deletes it). The run's local logs
// (.runner/iterations/ in that worktree) go with the worktree; `runner report` rebuilds the page
// from the branch's commits.
import { refuseInsideAgentContainment } from "../../adapters/process/agent-containment.js";
import { GitRepo } from "../../adapters/git/git.js";
import { branchesHolding, forgetMissingWorktrees, listWorktrees, removeWorktree, samePath } from "../../adapters/git/worktrees.js";
import { BRANCH_PREFIX } from "../../core/commit/run-id.js";
import { RefusalError } from "../../errors.js";
import type { GlobalArgs } from "../command-table.js";
import { printLine } from "../output.js";
import { findProjectRoot } from "../repo.js";
import { runInProgress } from "../run-in-progress.js";

export async function run(argv: GlobalArgs & { runId: string; force: boolean }): Promise<number> {
  refuseInsideAgentContainment("runner cleanup");
  const root = findProjectRoot(argv.C);
  const git = new GitRepo(root);
  const branch = `${BRANCH_PREFIX}${argv.runId}`;
  const tip = await git.resolve(`refs/heads/${branch}`);
  if (tip === undefined) throw new RefusalError(`There is no run ${argv.runId} (no branch ${branch}); \`runner runs\` lists the runs.`);
  const worktrees = await listWorktrees(git);
  const checkout = worktrees.find((w) => w.branch === branch && !w.prunable);
  if (checkout?.main) {
    throw new RefusalError(
      `Run ${argv.runId} is checked out in the main working tree (${checkout.path}), not in a worktree of its own; check out another branch there first (e.g. \`git checkout main\`), then \`runner cleanup ${argv.runId}\`.`,
    );
  }
  if (checkout && samePath(checkout.path, root)) {
    const main = worktrees[0]?.path ?? "the main working tree";
    throw new RefusalError(
      `You are in run ${argv.runId}'s worktree, which this would remove; run it from another checkout: \`cd ${main} && runner cleanup ${argv.runId}\`.`,
    );
  }
  if (checkout) {
    const working = await runInProgress(checkout.path);
    if (working) {
      throw new RefusalError(
        `A runner (\`${working.command}\`, pid ${working.pid}) is working on run ${argv.runId} in ${checkout.path}; stop it (Ctrl-C there) or wait for it, then try again.`,
      );
    }
    const { changes } = await new GitRepo(checkout.path).status();
    if (changes.length > 0 && !argv.force) {
      throw new RefusalError(
        `${checkout.path} has ${changes.length} uncommitted change${changes.length === 1 ? "" : "s"} (${changes[0]!.path}${changes.length > 1 ? ", …" : ""}) that removing it would lose; commit them there, or pass --force to drop them.`,
      );
    }
    await removeWorktree(git, checkout.path);
    printLine(`removed the worktree ${checkout.path}`);
  }
  // A worktree whose folder was deleted by hand still holds the branch for git: it is forgotten.
  const gone = worktrees.find((w) => w.branch === branch && w.prunable);
  if (!checkout && gone) {
    await forgetMissingWorktrees(git);
    printLine(`forgot the worktree ${gone.path}, whose folder was deleted`);
  }
  const holders = await branchesHolding(git, branch);
  if (holders.length === 0 && !argv.force) {
    const own = String((await git.commitsOnlyOn(branch, tip)) ?? "?");
    printLine(
      `kept the branch ${branch}: its ${own === "1" ? "last commit is" : `last ${own} commits are`} on no other branch; push or merge it (e.g. \`git push origin ${branch}\`), or \`runner cleanup ${argv.runId} --force\` deletes it.`,
    );
    return 0;
  }
  await git.deleteBranch(branch);
  printLine(
    `deleted the branch ${branch} (was ${tip.slice(0, 12)}${holders.length > 0 ? `; its commits are on ${holders.slice(0, 3).join(", ")}` : "; --force: its commits are on no other branch"})`,
  );
  return 0;
}
