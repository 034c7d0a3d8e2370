// `runner start [--run-id ID] [--from REF]`: a clean working tree required; create and check out
// runner/<ID> (from REF, or from HEAD — which may not be another run's branch unless --from says so).
// The id defaults to the UTC time as YYYYMMDD-HHMMSS, made once here and an input from then on.
// With --worktree [PATH] the branch is checked out in a new linked worktree instead (default beside
// the main working tree, named after it and the run): this checkout is left as it is, and the run
// there has its own lock, journal, index and logs (all in that worktree's own git folder and state).
import { refuseInsideAgentContainment } from "../../adapters/process/agent-containment.js";
import { existsSync } from "node:fs";
import path from "node:path";
import { preflight } from "../../adapters/guard/preflight.js";
import { loadConfig } from "../../adapters/files/project-files.js";
import { changedPathList, gitDir, GitRepo } from "../../adapters/git/git.js";
import { checkedOutTarget, commitFiles } from "../../adapters/git/runner-commit.js";
import { recordRunStart } from "../../adapters/state/run-starts.js";
import { repositoryState } from "../../adapters/state/runner-state.js";
import { checkedOutBranch } from "../../adapters/audit/run-trees.js";
import { addRunWorktree, defaultWorktreePath, listWorktrees } from "../../adapters/git/worktrees.js";
import { runIdentity } from "../../adapters/audit/run-history.js";
import { serializeTree } from "../../core/tree/canonical.js";
import { goalCommitMessage } from "../../core/commit/commit-message.js";
import { LAYOUT } from "../../core/base/layout.js";
import { formatProblem } from "../../core/base/problems.js";
import { goalMarkdown, goalTree } from "../../core/tree/tree.js";
import { BRANCH_PREFIX, runIdFromBranch } from "../../core/commit/run-id.js";
import { RefusalError, UsageError } from "../../errors.js";
import type { GlobalArgs } from "../command-table.js";
import { processEnv } from "../environment.js";
import { printLine } from "../output.js";
import { findProjectRoot } from "../repo.js";
import { loadValidTree } from "../valid-tree.js";

export function utcRunId(epochMs: number): string {
  const iso = new Date(epochMs).toISOString();
  return `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}-${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}`;
}

type StartArgs = GlobalArgs & { runId?: string; from?: string; worktree: boolean; path?: string; goal?: string };

export async function run(argv: StartArgs): Promise<number> {
  refuseInsideAgentContainment("runner start");
  if (argv.path !== undefined && !argv.worktree)
    throw new UsageError(
      `A folder ("${argv.path}") is only taken with --worktree (\`runner start --worktree [PATH]\`). See \`runner start --help\`.`,
    );
  if (argv.goal !== undefined && argv.goal.trim() === "")
    throw new UsageError('--goal is empty; give the run\'s goal in words (--goal "Add a --verbose flag").');
  const root = findProjectRoot(argv.C);
  // (an id given is checked by the parser, with every --run-id; the default is always valid)
  const runId = argv.runId ?? utcRunId(Date.now());
  if (!existsSync(path.join(root, ".git"))) {
    throw new RefusalError(`${root} is not the top folder of a git repository; run \`git init\` there and commit your project first.`);
  }
  const git = new GitRepo(root);
  const noCommits = () => new RefusalError("The repository has no commits yet; commit your project (with .runner/) first, then `runner start`.");
  if (argv.worktree) {
    // This checkout is not touched, so its changes do not matter: its branch and HEAD's commit, without `git status`.
    const [current, head] = await Promise.all([checkedOutBranch(root), git.resolve("HEAD")]);
    if (head === undefined) throw noCommits();
    return startInWorktree(argv, git, runId, current, head);
  }
  const status = await git.status();
  if (status.head === undefined) throw noCommits();
  const dirty = changedPathList(status.changes);
  if (dirty.length > 0) {
    throw new RefusalError(
      `The working tree is not clean (${dirty.slice(0, 3).join(", ")}${dirty.length > 3 ? ` and ${dirty.length - 3} more` : ""}); commit or stash your changes before \`runner start\`.`,
    );
  }
  // A new run from another run's branch would carry that run's work and tree: only on purpose.
  const currentRun = runIdFromBranch(status.branch);
  if (currentRun !== undefined && argv.from === undefined) {
    throw new RefusalError(
      `You are on ${status.branch}, the branch of run ${currentRun}; a new run would start from its work: pass --from ${status.branch} to mean it, or check out the branch to start from (e.g. \`git checkout main\`).`,
    );
  }
  const branch = await newRunBranch(git, runId, "check it out to continue that run");
  if (argv.from === undefined) {
    await checkProject(root, argv.goal !== undefined);
    await git.createBranch(branch);
    if (argv.goal !== undefined) await commitGoal(root, argv.goal);
    await recordStart(root, runId);
    printLine(`started run ${runId} on branch ${branch}; next: \`runner step\` (one iteration) or \`runner run\` (until done).`);
    return 0;
  }
  const from = await fromCommit(git, argv.from);
  // Nothing is left behind when the project there is not ready: back where the user was, the new branch gone.
  await git.checkoutNewBranch(branch, from, status.branch ?? status.head, () => checkProject(root, argv.goal !== undefined));
  if (argv.goal !== undefined) await commitGoal(root, argv.goal);
  await recordStart(root, runId);
  printLine(`started run ${runId} on branch ${branch} from ${argv.from}; next: \`runner step\` (one iteration) or \`runner run\` (until done).`);
  return 0;
}

/** `runner start --worktree [PATH]`: the run branch in a new linked worktree; this checkout is not touched (it may have changes). */
async function startInWorktree(argv: StartArgs, git: GitRepo, runId: string, current: string | undefined, head: string): Promise<number> {
  const currentRun = runIdFromBranch(current);
  if (currentRun !== undefined && argv.from === undefined) {
    throw new RefusalError(
      `You are on ${current}, the branch of run ${currentRun}; a new run would start from its work: pass --from ${current} to mean it, or --from main (or another branch) to start from there.`,
    );
  }
  const branch = await newRunBranch(git, runId, "`runner runs` shows where it is checked out");
  const from = argv.from === undefined ? head : await fromCommit(git, argv.from);
  if (!(await git.hasFile(from, LAYOUT.tree))) {
    throw new RefusalError(
      `.runner/ is not committed at ${argv.from ?? "HEAD"}, and a worktree holds only committed files; commit it (\`git add .runner && git commit -m "runner goal"\`) first.`,
    );
  }
  const main = (await listWorktrees(git))[0]?.path ?? git.root;
  const target = argv.path !== undefined ? path.resolve(argv.C, argv.path) : defaultWorktreePath(main, runId);
  if (existsSync(target)) throw new RefusalError(`${target} already exists; give another folder (\`runner start --worktree PATH\`) or remove it.`);
  // Nothing is left behind when the project there is not ready: the new worktree and its branch gone.
  await addRunWorktree(git, target, branch, from, () => checkProject(target, argv.goal !== undefined));
  if (argv.goal !== undefined) await commitGoal(target, argv.goal);
  await recordStart(target, runId);
  printLine(
    `started run ${runId} on branch ${branch} in the worktree ${target}${argv.from === undefined ? "" : ` from ${argv.from}`}; continue there:`,
  );
  printLine(`  cd ${shellWord(target)} && runner run`);
  return 0;
}

/** Records where the run begins (its branch's tip now), for its first loop commit's Runner-Start (src/adapters/state/run-starts.ts). */
async function recordStart(dir: string, runId: string): Promise<void> {
  const head = await new GitRepo(dir).resolve("HEAD");
  if (head !== undefined) await recordRunStart(repositoryState(processEnv(), await gitDir(dir)), runId, head);
}

/** The new run's branch, `runner/<id>`, refused when it exists already (`taken` says what to do then). */
async function newRunBranch(git: GitRepo, runId: string, taken: string): Promise<string> {
  const branch = `${BRANCH_PREFIX}${runId}`;
  if (await git.branchExists(branch)) throw new RefusalError(`Branch ${branch} already exists; ${taken}, or pick another --run-id.`);
  return branch;
}

/** The commit `--from` names, or one sentence saying it names none. */
async function fromCommit(git: GitRepo, from: string): Promise<string> {
  const sha = await git.resolve(from);
  if (sha === undefined)
    throw new RefusalError(`--from ${from} names no commit of this repository; give a branch, tag or commit (\`git branch -a\` lists the branches).`);
  return sha;
}

/** A path as one shell word. */
function shellWord(text: string): string {
  return /^[A-Za-z0-9_./:@%+=,-]+$/.test(text) ? text : `'${text.replace(/'/g, "'\\''")}'`;
}

/**
 * `--goal`: the run's own goal, on its branch: .runner/GOAL.md and a tree of one open root leaf for
 * it (max_attempts as the tree had it; the config and everything else kept), committed by the
 * person who started the run as `runner goal: <title>` before the run's first iteration.
 */
async function commitGoal(dir: string, goal: string): Promise<void> {
  const before = await loadValidTree(dir);
  const tree = goalTree(goal, before.root.max_attempts);
  const target = await checkedOutTarget(dir, processEnv());
  const who = await runIdentity(target.git, [], processEnv());
  const files = { [LAYOUT.goal]: goalMarkdown(goal), [LAYOUT.tree]: serializeTree(tree) };
  await commitFiles(target, dir, files, goalCommitMessage(tree.root.title, goal), who, { lost: (reason) => new RefusalError(reason) });
}

/** The tree and the config a run starts from must be valid, and the preflight find nothing wrong. */
async function checkProject(root: string, newGoal: boolean): Promise<void> {
  const tree = await loadValidTree(root);
  // (a new goal replaces the tree: a passed one is no obstacle)
  if (tree.root.passes && !newGoal)
    throw new RefusalError(
      `Every node of the plan has passed (the root ${JSON.stringify(tree.root.id)} too), so a run would have nothing to do; add follow-up work with \`runner extend --title … --goal …\` (a new root over the passed tree), then \`runner start\` again, or start one on a new goal (\`runner start --goal …\`).`,
    );
  const config = await loadConfig(root);
  if (!config.ok) {
    throw new RefusalError(
      `.runner/state/config.toml is invalid: ${formatProblem(config.problems[0]!)}; fix it (\`runner validate\` lists every problem) before \`runner start\`.`,
    );
  }
  const problem = preflight(root, config.config, processEnv()).find((check) => check.problem !== undefined)?.problem;
  if (problem) throw new RefusalError(`${problem.replace(/\.$/, "")} (\`runner doctor\` checks the whole setup).`);
}
