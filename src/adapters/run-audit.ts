// Replays a run's history for the audit: every commit after the run's base (the parent of its first
// loop commit) with the tree at each, handed to the pure auditRun. Shared by `runner audit` and
// `runner report`. Streamed: the commits come from one `git log` process as git prints them, and each
// tree from one `git cat-file --batch` process as the audit reaches its commit, read only where the
// commit changed the tree file; no more than the tree before and the tree after are held at once.
import { auditRun, type AuditReport } from "../core/audit.js";
import { DEFAULT_GUARD_COMMAND, parseConfig } from "../core/config.js";
import { configValues } from "../core/edit-changes.js";
import { definitionDifferences } from "../core/guard-definition.js";
import { LAYOUT } from "../core/layout.js";
import { TreeVersions } from "../core/tree-versions.js";
import type { GitRepo, HistoryCommit, ObjectReader } from "./git.js";
import { guardDefinitionAt } from "./guard-definition.js";

/** Where a run began, and what is wrong with its record of it. */
export interface RunBase {
  sha: string;
  /** How it is known: the first loop commit's Runner-Start, the start `runner start` recorded here (no loop commit yet), or the first loop commit's parent (a run older than the record). */
  from: "trailer" | "recorded" | "parent";
  /** The first loop commit's Runner-Start names no commit of its history (a violation). */
  problem?: string;
}

/**
 * Where run began (CONTRACT §7): the commit its first loop commit names in Runner-Start when that
 * is in the commit's history, else that commit's parent; before the first loop commit, the start
 * `runner start` recorded in this checkout. Undefined when none is known.
 */
export async function runBase(
  git: GitRepo,
  first: { sha: string; trailers: Readonly<Record<string, string>> } | undefined,
  recorded?: string,
): Promise<RunBase | undefined> {
  if (first === undefined)
    return recorded !== undefined && (await git.resolve(recorded)) !== undefined ? { sha: recorded, from: "recorded" } : undefined;
  const named = first.trailers.start;
  const plausible = named !== undefined && named !== first.sha && /^[0-9a-f]{40,64}$/.test(named);
  // (both questions at once: two git processes side by side)
  const [parentText, inHistory] = await Promise.all([
    git.raw(["rev-parse", "--verify", "-q", `${first.sha}^`]).catch(() => ""),
    plausible ? git.isAncestor(named, first.sha) : Promise.resolve(false),
  ]);
  const parent = parentText.trim();
  if (named !== undefined) {
    if (plausible && inHistory) return { sha: named, from: "trailer" };
    if (parent === "") return undefined;
    return {
      sha: parent,
      from: "parent",
      problem: `the run's first loop commit says the run began at ${named.slice(0, 12)} (Runner-Start), which is not in its history`,
    };
  }
  return parent === "" ? undefined : { sha: parent, from: "parent" };
}

/**
 * config.toml at `revision`: whether it is a valid config (missing: not valid), the guard command
 * whose definition is protected (the default when it names none or is invalid), and its values by
 * `section.key` (undefined: missing or no TOML).
 */
async function configAt(
  reader: ObjectReader,
  revision: string,
): Promise<{ valid: boolean; guard: readonly string[]; values: Record<string, unknown> | undefined }> {
  const bytes = await reader.read(`${revision}:${LAYOUT.config}`);
  const text = bytes?.toString("utf8") ?? "";
  const config = parseConfig(text);
  return {
    valid: bytes !== undefined && config.ok,
    guard: config.ok ? config.config.guard.command : DEFAULT_GUARD_COMMAND,
    values: bytes === undefined ? undefined : configValues(text),
  };
}

/** How many commits ahead of the audit their tree files are asked of git (each up to a few MB held). */
const READ_AHEAD = 8;

/**
 * The commits with the tree file of each that changed it asked of git ahead of time, `depth`
 * commits ahead, so that git reads the next ones while the audit judges this one.
 */
async function* withTreeBytesAhead<C extends HistoryCommit>(
  commits: AsyncIterable<C>,
  reader: ObjectReader,
  depth: number,
): AsyncGenerator<{ commit: C; treeBytes: Promise<Buffer | undefined> | undefined }> {
  const queue: { commit: C; treeBytes: Promise<Buffer | undefined> | undefined }[] = [];
  for await (const commit of commits) {
    const treeBytes = commit.changedPaths.includes(LAYOUT.tree) ? reader.read(`${commit.sha}:${LAYOUT.tree}`) : undefined;
    // (a failed read surfaces where it is awaited)
    treeBytes?.catch(() => undefined);
    queue.push({ commit, treeBytes });
    if (queue.length > depth) yield queue.shift()!;
  }
  yield* queue;
}

/** The audit of run `runId` from `base` to `tip` (first-parent history). */
export async function auditHistory(git: GitRepo, runId: string, base: string, tip = "HEAD"): Promise<AuditReport> {
  const reader = git.objectReader();
  try {
    // Each version of the tree file is compared with the one before; only what changed is parsed and checked again.
    const versions = new TreeVersions();
    // (the bytes of the version before the newest, no longer needed, are given back to the reader)
    const [baseBytes, baseConfig] = await Promise.all([reader.read(`${base}:${LAYOUT.tree}`), configAt(reader, base)]);
    let held = baseBytes;
    const baseVersion = versions.next(held);
    let definition = await guardDefinitionAt(reader, base, baseConfig.guard);
    let configValuesBefore = baseConfig.values;
    async function* withTrees() {
      let version = baseVersion;
      for await (const { commit, treeBytes } of withTreeBytesAhead(git.streamCommitsSince(base, tip), reader, READ_AHEAD)) {
        // The guard's definition, derived again only where the commit touched the config or a file or manifest of it.
        const relevant = new Set([LAYOUT.config, ...definition.definition.files, ...definition.definition.scripts.map((s) => s.manifest)]);
        let definitionChanged: string[] = [];
        // config.toml at a commit that changed it (a person's fix of the guard is judged valid or not), read once for both.
        const config = commit.changedPaths.some((changed) => relevant.has(changed)) ? await configAt(reader, commit.sha) : undefined;
        if (config) {
          const after = await guardDefinitionAt(reader, commit.sha, config.guard);
          definitionChanged = definitionDifferences(definition, after);
          definition = after;
        }
        // A commit that did not touch the tree file has its parent's tree: the same one, not read again.
        if (treeBytes === undefined) version = { tree: version.tree, node: version.node };
        else {
          const bytes = await treeBytes;
          version = versions.next(bytes);
          if (held !== undefined) reader.recycle(held);
          held = bytes;
        }
        const configChanged = commit.changedPaths.includes(LAYOUT.config);
        const configValid = configChanged ? config!.valid : undefined;
        const configPair =
          configChanged && configValuesBefore !== undefined && config!.values !== undefined
            ? { before: configValuesBefore, after: config!.values }
            : undefined;
        if (configChanged) configValuesBefore = config!.values;
        yield {
          ...commit,
          tree: version.tree,
          treeVersion: version,
          ...(configValid !== undefined ? { configValid } : {}),
          ...(configPair !== undefined ? { config: configPair } : {}),
          ...(definitionChanged.length > 0 ? { definitionChanged } : {}),
        };
      }
    }
    return await auditRun(runId, baseVersion.tree, withTrees());
  } finally {
    reader.close();
  }
}
