// What an agent did to git itself, found and undone right after it ran, before the runner's own git
// calls read anything: the control files put back, operations it left in progress removed, HEAD and
// the run branch put back on the commit the iteration started from. Commits the agent made are
// named (their content is in the work tree, which the iteration commits like any other change).
import { existsSync, rmSync } from "node:fs";
import path from "node:path";
import type { AgentGitFacts, ControlSnapshot } from "../core/step-facts.js";
import type { GitRepo } from "./git.js";
import { restoreControlFiles } from "./git-control.js";

/** Files and folders of an operation in progress (a merge, a rebase, a cherry-pick, …). */
export const OPERATION_MARKERS: readonly [string, string][] = [
  ["MERGE_HEAD", "merge"],
  ["rebase-merge", "rebase"],
  ["rebase-apply", "rebase"],
  ["CHERRY_PICK_HEAD", "cherry-pick"],
  ["REVERT_HEAD", "revert"],
  ["BISECT_LOG", "bisect"],
  ["sequencer", "sequence"],
];
const LEFTOVERS = ["MERGE_MSG", "MERGE_MODE", "MERGE_RR", "AUTO_MERGE", "SQUASH_MSG", "BISECT_START", "BISECT_TERMS", "BISECT_NAMES", "BISECT_EXPECTED_REV"];

export interface Start {
  branch: string;
  head: string;
}

/** Undoes the agent's changes to git (see above) and says what they were. */
export async function undoAgentGit(git: GitRepo, gitDir: string, start: Start, control: ControlSnapshot): Promise<Omit<AgentGitFacts, "hiddenByIgnoreRules" | "nestedRepositories" | "guardProgramChanged">> {
  const controlChanged = restoreControlFiles(gitDir, control);
  const operations = OPERATION_MARKERS.filter(([marker]) => existsSync(path.join(gitDir, marker))).map(([, name]) => name);
  for (const name of [...OPERATION_MARKERS.map(([marker]) => marker), ...LEFTOVERS]) rmSync(path.join(gitDir, name), { recursive: true, force: true });

  const ref = `refs/heads/${start.branch}`;
  const [head, branchTip] = await Promise.all([git.head(), git.resolve(ref)]);
  const headMoved = head.branch !== start.branch || head.sha !== start.head ? head : undefined;
  // The agent's own commits: anything new on the run branch or where it left HEAD.
  const tips = [...new Set([branchTip, head.sha].filter((sha): sha is string => sha !== undefined && sha !== start.head))];
  const seen = new Set<string>();
  const agentCommits: { sha: string; subject: string }[] = [];
  for (const tip of tips) {
    for (const commit of await git.commitsBetween(start.head, tip).catch(() => [])) {
      if (!seen.has(commit.sha)) agentCommits.push(commit);
      seen.add(commit.sha);
    }
  }
  if (branchTip !== start.head) await git.updateRef(ref, start.head);
  if (headMoved) await git.pointHeadAt(ref);
  return { controlChanged, operations, ...(headMoved ? { headMoved } : {}), agentCommits };
}
