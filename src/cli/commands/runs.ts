// `runner runs [--json]`: the runs of the repository, one per runner/* branch, wherever they are
// checked out (this checkout, a linked worktree, nowhere): its state (working: a live runner holds
// that worktree's lock; complete: the root passes at the branch's tip; stopped: neither), leaves
// passed (the tree at the tip), the last iteration (the tip's loop commit) and what its agents used
// (the local meta.json of the worktree it runs in). Worktrees on no run branch are listed after.
// listRuns is also `runner mcp`'s runs tool.
import { LAYOUT } from "../../core/base/layout.js";
import path from "node:path";
import { sumIterationUsage } from "../../adapters/records/iteration-usage.js";
import { GitRepo } from "../../adapters/git/git.js";
import { checkTreeText } from "../../adapters/files/tree-store.js";
import { listRunBranches, listWorktrees, type RunBranch, type Worktree } from "../../adapters/git/worktrees.js";
import { describeUsage, type UsageTotals } from "../../core/agent/agent-usage.js";
import { runIdFromBranch } from "../../core/commit/run-id.js";
import { loopSubjectPattern, parseCommitSubject } from "../../core/commit/commit-message.js";
import type { GlobalArgs } from "../command-table.js";
import { printJson, printLine } from "../output.js";
import { leafCount, type LeafCount } from "../progress-facts.js";
import { findProjectRoot } from "../repo.js";
import { runInProgress } from "../run-in-progress.js";

export type RunState = "working" | "stopped" | "complete";

export interface RunRow {
  run_id: string;
  branch: string;
  state: RunState;
  /** Where the branch is checked out, or null. */
  worktree: string | null;
  /** A worktree git still has registered for the branch whose folder was deleted by hand (`runner cleanup` forgets it), or null. */
  worktree_missing: string | null;
  leaves: LeafCount | null;
  last_iteration: { number: number; node_id: string | null; kind: string; at: string } | null;
  usage: UsageTotals | null;
  /** The runner working there (pid, command), when state is working. */
  runner: { pid: number; command: string } | null;
}

/** `runner runs --json` (and `runner mcp`'s runs tool). */
export interface RunList {
  runs: RunRow[];
  other_worktrees: { path: string; branch: string | null; main: boolean }[];
}

/** The runs of the repository at `folder`, and the worktrees on no run branch; `root` is its top folder. */
export async function listRuns(folder: string): Promise<RunList & { root: string }> {
  const root = findProjectRoot(folder);
  const git = new GitRepo(root);
  const [branches, worktrees] = await Promise.all([listRunBranches(git), listWorktrees(git)]);
  // A few runs at a time: each costs two git processes and its meta.json files.
  const rows: RunRow[] = [];
  for (let i = 0; i < branches.length; i += 8)
    rows.push(...(await Promise.all(branches.slice(i, i + 8).map((branch) => runRow(git, root, branch, worktrees)))));
  const others = worktrees.filter((w) => !w.prunable && runIdFromBranch(w.branch) === undefined);
  return { root, runs: rows, other_worktrees: others.map((w) => ({ path: w.path, branch: w.branch ?? null, main: w.main })) };
}

export async function run(argv: GlobalArgs & { json: boolean }): Promise<number> {
  const { root, runs, other_worktrees: others } = await listRuns(argv.C);
  if (argv.json) {
    printJson({ runs, other_worktrees: others });
    return 0;
  }
  if (runs.length === 0) printLine("no runs: no runner/* branch (`runner start` or `runner start --worktree` begins one)");
  for (const row of runs) printLine(rowLine(row, root));
  for (const w of others) printLine(`  (worktree ${w.path}${w.branch ? ` on ${w.branch}` : ", detached"}${w.main ? ", the main one" : ""})`);
  return 0;
}

function rowLine(row: RunRow, root: string): string {
  const where =
    row.worktree_missing !== null
      ? `its worktree ${row.worktree_missing} was deleted by hand (\`runner cleanup ${row.run_id}\` forgets it)`
      : row.worktree === null
        ? "not checked out"
        : row.worktree === root
          ? "here"
          : row.worktree;
  const leaves = row.leaves ? `${row.leaves.passed}/${row.leaves.total} leaves` : "tree unreadable";
  const last = row.last_iteration
    ? `iteration ${row.last_iteration.number} (${row.last_iteration.kind}${row.last_iteration.node_id ? ` ${row.last_iteration.node_id}` : ""})`
    : "no iteration yet";
  const usage = row.usage ? `; ${describeUsage(row.usage)}` : "";
  const runner = row.runner ? ` by pid ${row.runner.pid}` : "";
  return `${row.run_id.padEnd(18)} ${`${row.state}${runner}`.padEnd(10)} ${leaves}, ${last}${usage} — ${where}`;
}

async function runRow(git: GitRepo, root: string, { branch, tip }: RunBranch, worktrees: readonly Worktree[]): Promise<RunRow> {
  const runId = runIdFromBranch(branch) ?? branch.slice("runner/".length);
  const checkout = worktrees.find((w) => w.branch === branch && !w.prunable);
  const [treeText, heads, working] = await Promise.all([
    git.showFile(tip, LAYOUT.tree),
    git.loopCommitHeads(loopSubjectPattern(runId), tip).catch(() => []),
    checkout ? runInProgress(checkout.path) : Promise.resolve(undefined),
  ]);
  const tree = treeOf(treeText);
  // The run's loop commits at the tip, newest first.
  const commits = heads
    .map(({ sha: commit, subject: subjectLine, committedAt: at }) => {
      const subject = parseCommitSubject(subjectLine);
      return subject?.runId === runId ? { commit, at, subject } : undefined;
    })
    .filter((c) => c !== undefined);
  const newest = commits[0];
  const last = newest
    ? {
        number: newest.subject.iteration,
        node_id: newest.subject.kind === "repair" ? null : newest.subject.nodeId,
        kind: newest.subject.kind,
        at: newest.at,
      }
    : null;
  // The agents' usage is in each iteration's local meta.json (checked against its commit): in the worktree the run is checked out in, else in this one.
  const logs = checkout?.path ?? root;
  const usage = await sumIterationUsage(
    logs,
    runId,
    commits.map((c) => ({ iteration: c.subject.iteration, commit: c.commit })),
  );
  const complete = tree?.complete === true;
  return {
    run_id: runId,
    branch,
    state: working ? "working" : complete ? "complete" : "stopped",
    worktree: checkout ? path.resolve(checkout.path) : null,
    worktree_missing: checkout ? null : (worktrees.find((w) => w.branch === branch && w.prunable)?.path ?? null),
    leaves: tree ? tree.leaves : null,
    last_iteration: last,
    usage: usage ?? null,
    runner: working ? { pid: working.pid, command: working.command } : null,
  };
}

/** Leaves passed and whether the root passes, from a tree file's text (undefined when it is not a valid tree). */
function treeOf(text: string | undefined): { leaves: LeafCount; complete: boolean } | undefined {
  const load = text === undefined ? undefined : checkTreeText(text);
  return load?.ok ? { leaves: leafCount(load.tree), complete: load.tree.root.passes } : undefined;
}
