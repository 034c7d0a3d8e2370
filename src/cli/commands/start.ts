// `runner start [--run-id ID] [--from REF]`: a clean working tree required; create and check out
// runner/<ID> (from REF, or from HEAD — which may not be another run's branch unless --from says so).
// The id defaults to the UTC time as YYYYMMDD-HHMMSS, made once here and an input from then on.
import { existsSync } from "node:fs";
import path from "node:path";
import { preflight } from "../../adapters/preflight.js";
import { loadConfig } from "../../adapters/project-files.js";
import { changedPathList, GitRepo } from "../../adapters/git.js";
import { formatProblem } from "../../core/problems.js";
import { BRANCH_PREFIX, runIdFromBranch, runIdProblem } from "../../core/run-id.js";
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

export async function run(argv: GlobalArgs & { runId?: string; from?: string }): Promise<number> {
  const root = findProjectRoot(argv.C);
  const runId = argv.runId ?? utcRunId(Date.now());
  const problem = runIdProblem(runId);
  if (problem) throw new UsageError(`${problem[0]!.toUpperCase()}${problem.slice(1)}.`);
  if (!existsSync(path.join(root, ".git"))) {
    throw new RefusalError(`${root} is not the top folder of a git repository; run \`git init\` there and commit your project first.`);
  }
  const git = new GitRepo(root);
  const status = await git.status();
  if (status.head === undefined)
    throw new RefusalError("The repository has no commits yet; commit your project (with .runner/) first, then `runner start`.");
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
  const branch = `${BRANCH_PREFIX}${runId}`;
  const exists = await git.raw(["branch", "--list", branch]);
  if (exists.trim() !== "") throw new RefusalError(`Branch ${branch} already exists; check it out to continue that run, or pick another --run-id.`);
  if (argv.from === undefined) {
    await checkProject(root);
    await git.createBranch(branch);
    printLine(`started run ${runId} on branch ${branch}; next: \`runner step\` (one iteration) or \`runner run\` (until done).`);
    return 0;
  }
  const from = (await git.raw(["rev-parse", "--verify", "-q", "--end-of-options", `${argv.from}^{commit}`]).catch(() => "")).trim();
  if (from === "")
    throw new RefusalError(
      `--from ${argv.from} names no commit of this repository; give a branch, tag or commit (\`git branch -a\` lists the branches).`,
    );
  const back = status.branch ?? status.head;
  await git.raw(["checkout", "-q", "-b", branch, from]);
  try {
    await checkProject(root);
  } catch (error) {
    // Nothing is left behind: back where the user was, the new branch gone.
    await git.raw(["checkout", "-q", back]);
    await git.raw(["branch", "-q", "-D", branch]);
    throw error;
  }
  printLine(`started run ${runId} on branch ${branch} from ${argv.from}; next: \`runner step\` (one iteration) or \`runner run\` (until done).`);
  return 0;
}

/** The tree and the config a run starts from must be valid, and the preflight find nothing wrong. */
async function checkProject(root: string): Promise<void> {
  const tree = await loadValidTree(root);
  if (tree.root.passes)
    throw new RefusalError(
      `Every node of the plan has passed (the root ${JSON.stringify(tree.root.id)} too), so a run would have nothing to do; add follow-up work with \`runner extend --title … --goal …\` (a new root over the passed tree), then \`runner start\` again.`,
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
