// Replays a run's history for the audit: every commit after the run's base (the parent of its first
// loop commit) with the tree at each, handed to the pure auditRun. Shared by `runner audit` and
// `runner report`. Streamed: the commits come from one `git log` process as git prints them, and each
// tree from one `git cat-file --batch` process as the audit reaches its commit, read only where the
// commit changed the tree file; no more than the tree before and the tree after are held at once.
import { auditRun, type AuditReport } from "../core/audit.js";
import { parseConfig } from "../core/config.js";
import { LAYOUT } from "../core/layout.js";
import type { TaskTree } from "../core/tree.js";
import type { GitRepo, ObjectReader } from "./git.js";
import { checkTreeText } from "./tree-store.js";

/** The commit a run began from: the parent of its first loop commit; undefined when it has none. */
export async function runBase(git: GitRepo, firstLoopCommit: string): Promise<string | undefined> {
  const base = (await git.raw(["rev-parse", "--verify", "-q", `${firstLoopCommit}^`]).catch(() => "")).trim();
  return base === "" ? undefined : base;
}

/** The tree file at `revision`, checked; undefined when it is missing or does not validate. */
async function treeAt(reader: ObjectReader, revision: string): Promise<TaskTree | undefined> {
  const bytes = await reader.read(`${revision}:${LAYOUT.tree}`);
  if (bytes === undefined) return undefined;
  const load = checkTreeText(bytes.toString("utf8"));
  return load.ok ? load.tree : undefined;
}

/** Whether config.toml at `revision` is a valid config (missing: not valid). */
async function configValidAt(reader: ObjectReader, revision: string): Promise<boolean> {
  const bytes = await reader.read(`${revision}:${LAYOUT.config}`);
  return bytes !== undefined && parseConfig(bytes.toString("utf8")).ok;
}

/** The audit of run `runId` from `base` to `tip` (first-parent history). */
export async function auditHistory(git: GitRepo, runId: string, base: string, tip = "HEAD"): Promise<AuditReport> {
  const reader = git.objectReader();
  try {
    const baseTree = await treeAt(reader, base);
    async function* withTrees() {
      let tree = baseTree;
      for await (const commit of git.streamCommitsSince(base, tip)) {
        // A commit that did not touch the tree file has its parent's tree: the same one, not read again.
        if (commit.changedPaths.includes(LAYOUT.tree)) tree = await treeAt(reader, commit.sha);
        // config.toml at a commit that changed it (a person's fix of the guard is judged valid or not).
        const configValid = commit.changedPaths.includes(LAYOUT.config) ? await configValidAt(reader, commit.sha) : undefined;
        yield { ...commit, tree, ...(configValid !== undefined ? { configValid } : {}) };
      }
    }
    return await auditRun(runId, baseTree, withTrees());
  } finally {
    reader.close();
  }
}
