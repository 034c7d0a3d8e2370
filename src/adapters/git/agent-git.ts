// What an agent did to git itself, found and undone right after it ran, before the runner's own git
// calls read anything: the control files put back, operations it left in progress removed, HEAD and
// the run branch put back on the commit the iteration started from. Commits the agent made are
// named (their content is in the work tree, which the iteration commits like any other change).
import { existsSync, lstatSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { LAYOUT } from "../../core/base/layout.js";
import type { AgentGitFacts, ControlSnapshot } from "../../core/step/step-facts.js";
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
const LEFTOVERS = [
  "MERGE_MSG",
  "MERGE_MODE",
  "MERGE_RR",
  "AUTO_MERGE",
  "SQUASH_MSG",
  "BISECT_START",
  "BISECT_TERMS",
  "BISECT_NAMES",
  "BISECT_EXPECTED_REV",
];

export interface Start {
  branch: string;
  head: string;
}

/**
 * Puts the control files back and removes operations left in progress and the index lock the agent
 * left (after containment: no process of the agent holds it); says what they were. Before any git call.
 */
export function undoAgentControl(
  gitDir: string,
  control: ControlSnapshot,
): Pick<AgentGitFacts, "controlChanged" | "operations" | "indexLockRemoved"> {
  const controlChanged = restoreControlFiles(gitDir, control);
  const operations = OPERATION_MARKERS.filter(([marker]) => existsSync(path.join(gitDir, marker))).map(([, name]) => name);
  for (const name of [...OPERATION_MARKERS.map(([marker]) => marker), ...LEFTOVERS])
    rmSync(path.join(gitDir, name), { recursive: true, force: true });
  const lock = path.join(gitDir, "index.lock");
  const indexLockRemoved = exists(lock);
  if (indexLockRemoved) rmSync(lock, { recursive: true, force: true });
  return { controlChanged, operations, ...(indexLockRemoved ? { indexLockRemoved } : {}) };
}

/** The runner's local-only folders: real folders, never committed (`.runner/.gitignore` ignores them). */
const LOCAL_FOLDERS = [LAYOUT.context, LAYOUT.iterations];

/**
 * Puts the runner's own files back: `.runner/.gitignore` as the starting commit has it, and the
 * local-only folders as real folders where the agent left something else (a symbolic link, a file;
 * never followed). Returns what was put back, sorted. Before the status of the iteration is taken.
 */
export async function restoreRunnerFiles(root: string, git: GitRepo, start: Start): Promise<string[]> {
  const restored: string[] = [];
  const gitignore = path.join(root, ...LAYOUT.gitignore.split("/"));
  const committed = await git.showFile(start.head, LAYOUT.gitignore);
  if (plainText(gitignore) !== committed) {
    // Written directly (not through git's index, which the status taken beside this one reads).
    rmSync(gitignore, { recursive: true, force: true });
    if (committed !== undefined) writeFileSync(gitignore, committed);
    restored.push(LAYOUT.gitignore);
  }
  for (const folder of LOCAL_FOLDERS) {
    const dir = path.join(root, ...folder.split("/"));
    let info;
    try {
      info = lstatSync(dir);
    } catch {
      continue;
    }
    if (info.isDirectory()) continue;
    rmSync(dir, { force: true });
    mkdirSync(dir);
    restored.push(`${folder} (${info.isSymbolicLink() ? "a symbolic link" : "a file"} in place of the folder)`);
  }
  return restored.sort();
}

/** A plain file's text; undefined when nothing is there, and a marker that matches no text for anything else (a link). */
function plainText(file: string): string | undefined {
  try {
    return lstatSync(file).isFile() ? readFileSync(file, "utf8") : "\0(not a plain file)";
  } catch {
    return undefined;
  }
}

function exists(file: string): boolean {
  try {
    lstatSync(file);
    return true;
  } catch {
    return false;
  }
}

/** Puts HEAD and the run branch back on the starting commit; names the agent's own commits. `moved`: anything was put back. */
export async function undoAgentRefs(git: GitRepo, start: Start): Promise<Pick<AgentGitFacts, "headMoved" | "agentCommits"> & { moved: boolean }> {
  const ref = `refs/heads/${start.branch}`;
  const { head, branchSha: branchTip } = await git.headAndBranch(start.branch);
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
  return { ...(headMoved ? { headMoved } : {}), agentCommits, moved: headMoved !== undefined || branchTip !== start.head };
}
