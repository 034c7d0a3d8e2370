// Replays a run's history for the audit: every commit after the run's base (the parent of its first
// loop commit) with the tree at each, handed to the pure auditRun. Shared by `runner audit` and
// `runner report`. Streamed: the commits come from one `git log` process as git prints them, and each
// tree from one `git cat-file --batch` process as the audit reaches its commit, read only where the
// commit changed the tree file; no more than the tree before and the tree after are held at once.
import { auditRun, type AuditReport } from "../core/audit.js";
import { DEFAULT_GUARD_COMMAND, parseConfig } from "../core/config.js";
import { definitionDifferences } from "../core/guard-definition.js";
import { LAYOUT } from "../core/layout.js";
import { parseFinished } from "../core/plan-finished.js";
import type { TaskTree } from "../core/tree.js";
import type { GitRepo, ObjectReader } from "./git.js";
import { guardDefinitionAt } from "./guard-definition.js";
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

/** config.toml at `revision`: whether it is a valid config (missing: not valid) and the guard command whose definition is protected (the default when it names none or is invalid). */
async function configAt(reader: ObjectReader, revision: string): Promise<{ valid: boolean; guard: readonly string[] }> {
  const bytes = await reader.read(`${revision}:${LAYOUT.config}`);
  const config = parseConfig(bytes?.toString("utf8") ?? "");
  return { valid: bytes !== undefined && config.ok, guard: config.ok ? config.config.guard.command : DEFAULT_GUARD_COMMAND };
}

/** The leaves finished.json lists at `revision` (none when it is missing or unreadable). */
async function finishedAt(reader: ObjectReader, revision: string): Promise<string[]> {
  const bytes = await reader.read(`${revision}:${LAYOUT.finished}`);
  const parsed = bytes === undefined ? undefined : parseFinished(bytes.toString("utf8"));
  return parsed?.ok ? parsed.ids : [];
}

/** The audit of run `runId` from `base` to `tip` (first-parent history). */
export async function auditHistory(git: GitRepo, runId: string, base: string, tip = "HEAD"): Promise<AuditReport> {
  const reader = git.objectReader();
  try {
    const baseTree = await treeAt(reader, base);
    let definition = await guardDefinitionAt(git, base, (await configAt(reader, base)).guard);
    async function* withTrees() {
      let tree = baseTree;
      for await (const commit of git.streamCommitsSince(base, tip)) {
        // The guard's definition, derived again only where the commit touched the config or a file or manifest of it.
        const relevant = new Set([LAYOUT.config, ...definition.definition.files, ...definition.definition.scripts.map((s) => s.manifest)]);
        let definitionChanged: string[] = [];
        // config.toml at a commit that changed it (a person's fix of the guard is judged valid or not), read once for both.
        const config = commit.changedPaths.some((changed) => relevant.has(changed)) ? await configAt(reader, commit.sha) : undefined;
        if (config) {
          const after = await guardDefinitionAt(git, commit.sha, config.guard);
          definitionChanged = definitionDifferences(definition, after);
          definition = after;
        }
        // A commit that did not touch the tree file has its parent's tree: the same one, not read again.
        if (commit.changedPaths.includes(LAYOUT.tree)) tree = await treeAt(reader, commit.sha);
        const configValid = commit.changedPaths.includes(LAYOUT.config) ? config!.valid : undefined;
        const finished = commit.changedPaths.includes(LAYOUT.finished) ? await finishedAt(reader, commit.sha) : undefined;
        yield {
          ...commit,
          tree,
          ...(finished !== undefined ? { finished } : {}),
          ...(configValid !== undefined ? { configValid } : {}),
          ...(definitionChanged.length > 0 ? { definitionChanged } : {}),
        };
      }
    }
    return await auditRun(runId, baseTree, withTrees(), await finishedAt(reader, base));
  } finally {
    reader.close();
  }
}
