// Replays a run's history for the audit: every commit after the run's base (the parent of its first
// loop commit) with the tree at each, handed to the pure auditRun. Shared by `runner audit` and
// `runner report`.
import { auditRun, type AuditReport } from "../core/audit.js";
import { DEFAULT_GUARD_COMMAND, parseConfig } from "../core/config.js";
import { definitionDifferences } from "../core/guard-definition.js";
import { LAYOUT } from "../core/layout.js";
import type { GitRepo } from "./git.js";
import { guardDefinitionAt } from "./guard-definition.js";
import { checkTreeText } from "./tree-store.js";

/** The commit a run began from: the parent of its first loop commit; undefined when it has none. */
export async function runBase(git: GitRepo, firstLoopCommit: string): Promise<string | undefined> {
  const base = (await git.raw(["rev-parse", "--verify", "-q", `${firstLoopCommit}^`]).catch(() => "")).trim();
  return base === "" ? undefined : base;
}

/** The audit of run `runId` from `base` to `tip` (first-parent history). */
export async function auditHistory(git: GitRepo, runId: string, base: string, tip = "HEAD"): Promise<AuditReport> {
  const commits = await git.commitsSince(base, tip);
  const definitionChanges = await guardDefinitionChanges(git, base, commits);
  const texts = await git.fileAtRevisions([base, ...commits.map((c) => c.sha)], LAYOUT.tree);
  const treeOf = (text: string | undefined) => {
    if (text === undefined) return undefined;
    const load = checkTreeText(text);
    return load.ok ? load.tree : undefined;
  };
  return auditRun(
    runId,
    treeOf(texts[0]),
    commits.map((commit, i) => ({ ...commit, tree: treeOf(texts[i + 1]), definitionChanged: definitionChanges.get(commit.sha) })),
  );
}

/**
 * What of the guard's definition each commit changed, from git alone: the definition (the guard
 * command of the commit's config, and what it runs) is derived again only where a commit touched
 * the config or a file or manifest of the definition before it.
 */
async function guardDefinitionChanges(
  git: GitRepo,
  base: string,
  commits: readonly { sha: string; changedPaths: string[] }[],
): Promise<Map<string, string[]>> {
  const changes = new Map<string, string[]>();
  const at = async (revision: string) => {
    const config = parseConfig((await git.showFile(revision, LAYOUT.config)) ?? "");
    return guardDefinitionAt(git, revision, config.ok ? config.config.guard.command : DEFAULT_GUARD_COMMAND);
  };
  let before = await at(base);
  for (const commit of commits) {
    const relevant = new Set([LAYOUT.config, ...before.definition.files, ...before.definition.scripts.map((s) => s.manifest)]);
    if (!commit.changedPaths.some((changed) => relevant.has(changed))) continue;
    const after = await at(commit.sha);
    const differences = definitionDifferences(before, after);
    if (differences.length > 0) changes.set(commit.sha, differences);
    before = after;
  }
  return changes;
}
