// `runner start [--run-id ID]`: a clean working tree required; create and check out runner/<ID>.
// The id defaults to the UTC time as YYYYMMDD-HHMMSS, made once here and an input from then on.
import { existsSync } from "node:fs";
import path from "node:path";
import { loadConfig } from "../../adapters/project-files.js";
import { changedPathList, GitRepo } from "../../adapters/git.js";
import { formatProblem } from "../../core/problems.js";
import { BRANCH_PREFIX, runIdProblem } from "../../core/run-id.js";
import { RefusalError, UsageError } from "../../errors.js";
import type { GlobalArgs } from "../command-table.js";
import { printLine } from "../output.js";
import { findProjectRoot } from "../repo.js";
import { loadValidTree } from "../valid-tree.js";

export function utcRunId(epochMs: number): string {
  const iso = new Date(epochMs).toISOString();
  return `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}-${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}`;
}

export async function run(argv: GlobalArgs & { runId?: string }): Promise<number> {
  const root = findProjectRoot(argv.C);
  const runId = argv.runId ?? utcRunId(Date.now());
  const problem = runIdProblem(runId);
  if (problem) throw new UsageError(`${problem[0]!.toUpperCase()}${problem.slice(1)}.`);
  if (!existsSync(path.join(root, ".git"))) {
    throw new RefusalError(`${root} is not the top folder of a git repository; run \`git init\` there and commit your project first.`);
  }
  const git = new GitRepo(root);
  const status = await git.status();
  if (status.head === undefined) throw new RefusalError("The repository has no commits yet; commit your project (with .runner/) first, then `runner start`.");
  const dirty = changedPathList(status.changes);
  if (dirty.length > 0) {
    throw new RefusalError(`The working tree is not clean (${dirty.slice(0, 3).join(", ")}${dirty.length > 3 ? ` and ${dirty.length - 3} more` : ""}); commit or stash your changes before \`runner start\`.`);
  }
  await loadValidTree(root);
  const config = await loadConfig(root);
  if (!config.ok) {
    throw new RefusalError(`.runner/state/config.toml is invalid: ${formatProblem(config.problems[0]!)}; fix it (\`runner validate\` lists every problem) before \`runner start\`.`);
  }
  const branch = `${BRANCH_PREFIX}${runId}`;
  const exists = await git.raw(["branch", "--list", branch]);
  if (exists.trim() !== "") throw new RefusalError(`Branch ${branch} already exists; check it out to continue that run, or pick another --run-id.`);
  await git.createBranch(branch);
  printLine(`started run ${runId} on branch ${branch}; next: \`runner step\` (one iteration) or \`runner run\` (until done).`);
  return 0;
}
