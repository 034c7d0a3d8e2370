// Replays a run's history for the audit: every commit after the run's base (the parent of its first
// loop commit) with the tree at each, handed to the pure auditRun. Shared by `runner audit` and
// `runner report`.
import { auditRun, type AuditReport } from "../core/audit.js";
import { parseConfig } from "../core/config.js";
import { LAYOUT } from "../core/layout.js";
import type { GitRepo } from "./git.js";
import { checkTreeText } from "./tree-store.js";

/** The commit a run began from: the parent of its first loop commit; undefined when it has none. */
export async function runBase(git: GitRepo, firstLoopCommit: string): Promise<string | undefined> {
  const base = (await git.raw(["rev-parse", "--verify", "-q", `${firstLoopCommit}^`]).catch(() => "")).trim();
  return base === "" ? undefined : base;
}

/** The audit of run `runId` from `base` to `tip` (first-parent history). */
export async function auditHistory(git: GitRepo, runId: string, base: string, tip = "HEAD"): Promise<AuditReport> {
  const commits = await git.commitsSince(base, tip);
  const texts = await git.fileAtRevisions([base, ...commits.map((c) => c.sha)], LAYOUT.tree);
  const treeOf = (text: string | undefined) => {
    if (text === undefined) return undefined;
    const load = checkTreeText(text);
    return load.ok ? load.tree : undefined;
  };
  // config.toml at each commit that changed it (a person's fix of the guard is judged valid or not).
  const configChanges = commits.filter((commit) => commit.changedPaths.includes(LAYOUT.config));
  const configTexts =
    configChanges.length === 0
      ? []
      : await git.fileAtRevisions(
          configChanges.map((c) => c.sha),
          LAYOUT.config,
        );
  const configValid = new Map(configChanges.map((commit, i) => [commit.sha, configTexts[i] !== undefined && parseConfig(configTexts[i]!).ok]));
  return auditRun(
    runId,
    treeOf(texts[0]),
    commits.map((commit, i) => ({
      ...commit,
      tree: treeOf(texts[i + 1]),
      ...(configValid.has(commit.sha) ? { configValid: configValid.get(commit.sha)! } : {}),
    })),
  );
}
