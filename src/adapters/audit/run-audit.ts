// Replays a run's history for the audit: every commit after the run's base (the parent of its first
// loop commit) with the tree at each, handed to the pure auditRun. Shared by `runner audit` and
// `runner report`. Streamed: the commits come from one `git log` process as git prints them, and each
// tree from one `git cat-file --batch` process as the audit reaches its commit, read only where the
// commit changed the tree file; no more than the tree before and the tree after are held at once.
import { auditRun, type AuditReport } from "../../core/audit/audit.js";
import { DEFAULT_GUARD_COMMAND, parseConfig } from "../../core/config/config.js";
import { configValues } from "../../core/edit/edit-changes.js";
import { definitionDifferences } from "../../core/guard/guard-definition.js";
import { LAYOUT } from "../../core/base/layout.js";
import { parseFinished } from "../../core/plan/plan-finished.js";
import type { PiecedBytes } from "../../core/tree/pieced-bytes.js";
import { TreeVersions } from "../../core/tree/tree-versions.js";
import { gitDir, GitRepo, type ObjectReader } from "../git/git.js";
import { ObjectStore } from "../git/object-store.js";
import { guardDefinitionAt } from "../guard/guard-definition.js";
import { takeAuditThread } from "./thread-ahead.js";

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
  store?: ObjectStore,
): Promise<RunBase | undefined> {
  if (first === undefined)
    return recorded !== undefined && (await git.resolve(recorded)) !== undefined ? { sha: recorded, from: "recorded" } : undefined;
  const named = first.trailers.start;
  const plausible = named !== undefined && named !== first.sha && /^[0-9a-f]{40,64}$/.test(named);
  // The parent from the object files when they can say (no git process); the run begun at it needs no further question.
  const parents = store?.parents(first.sha);
  const known = parents === undefined ? undefined : (parents[0] ?? "");
  // (else both questions at once: two git processes side by side)
  const [parentText, inHistory] = await Promise.all([
    known ?? git.raw(["rev-parse", "--verify", "-q", `${first.sha}^`]).catch(() => ""),
    plausible && named !== known ? git.isAncestor(named, first.sha) : Promise.resolve(plausible),
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
 * Files at revisions: from the object files where they can say (src/adapters/git/object-store.ts),
 * else from one `git cat-file --batch` process, started when first needed.
 */
class RevisionFiles {
  private reader: ObjectReader | undefined;

  constructor(
    private readonly git: GitRepo,
    readonly store: ObjectStore | undefined,
  ) {}

  /** The file at `revision` (`<revision>:<file>`: any object git names so), or undefined. */
  async read(revision: string, file: string): Promise<PiecedBytes | Buffer | undefined> {
    const stored = this.store?.fileAt(revision, file);
    if (stored !== undefined) return stored === "none" ? undefined : stored;
    return this.ask().read(`${revision}:${file}`);
  }

  /** The blob `id`, else the file at `revision` (when the blob is not read here). */
  async blob(id: string | undefined, revision: string, file: string): Promise<PiecedBytes | Buffer | undefined> {
    const stored = id === undefined ? undefined : this.store?.read(id);
    return stored?.type === "blob" ? stored.bytes : this.read(revision, file);
  }

  /** As GitRepo.filesAtRevision. */
  async filesAtRevision(revision: string, files: readonly string[]): Promise<(string | undefined)[]> {
    if (this.store === undefined) return this.ask().filesAtRevision(revision, files);
    return Promise.all(files.map(async (file) => (await this.read(revision, file))?.toString()));
  }

  close(): void {
    this.reader?.close();
  }

  private ask(): ObjectReader {
    this.reader ??= this.git.objectReader();
    return this.reader;
  }
}

/**
 * config.toml at `revision`: whether it is a valid config (missing: not valid), the guard command
 * whose definition is protected (the default when it names none or is invalid), and its values by
 * `section.key` (undefined: missing or no TOML).
 */
async function configAt(
  files: RevisionFiles,
  revision: string,
): Promise<{ valid: boolean; guard: readonly string[]; values: Record<string, unknown> | undefined }> {
  const bytes = await files.read(revision, LAYOUT.config);
  const text = bytes?.toString() ?? "";
  const config = parseConfig(text);
  return {
    valid: bytes !== undefined && config.ok,
    guard: config.ok ? config.config.guard.command : DEFAULT_GUARD_COMMAND,
    values: bytes === undefined ? undefined : configValues(text),
  };
}

/** The leaves finished.json lists at `revision` (none when it is missing or unreadable). */
async function finishedAt(files: RevisionFiles, revision: string): Promise<string[]> {
  const bytes = await files.read(revision, LAYOUT.finished);
  const parsed = bytes === undefined ? undefined : parseFinished(bytes.toString());
  return parsed?.ok ? parsed.ids : [];
}

/**
 * The audit of run `runId` from `base` to `tip` (first-parent history); `store`: the repository's
 * object files (ObjectStore.open), read without a git process where they can be.
 */
export async function auditHistory(git: GitRepo, runId: string, base: string, tip = "HEAD", store?: ObjectStore): Promise<AuditReport> {
  const files = new RevisionFiles(git, store);
  try {
    // Each version of the tree file is compared with the one before; only what changed is parsed and checked again.
    const versions = new TreeVersions();
    const [baseBytes, baseConfig] = await Promise.all([files.read(base, LAYOUT.tree), configAt(files, base)]);
    const baseVersion = versions.next(baseBytes);
    let definition = await guardDefinitionAt(files, base, baseConfig.guard);
    let configValuesBefore = baseConfig.values;
    async function* withTrees() {
      let version = baseVersion;
      // The guard's definition, derived again only where a commit touched the config or a file or manifest of it.
      const relevantTo = (now: typeof definition) =>
        new Set([LAYOUT.config, ...now.definition.files, ...now.definition.scripts.map((s) => s.manifest)]);
      let relevant = relevantTo(definition);
      for await (const commit of git.streamCommitsSince(base, tip)) {
        let definitionChanged: string[] = [];
        // config.toml at a commit that changed it (a person's fix of the guard is judged valid or not), read once for both.
        const config = commit.changedPaths.some((changed) => relevant.has(changed)) ? await configAt(files, commit.sha) : undefined;
        if (config) {
          const after = await guardDefinitionAt(files, commit.sha, config.guard);
          definitionChanged = definitionDifferences(definition, after);
          definition = after;
          relevant = relevantTo(definition);
        }
        // A commit that did not touch the tree file has its parent's tree: the same one, not read again.
        version = commit.changedPaths.includes(LAYOUT.tree)
          ? versions.next(await files.blob(commit.blobs.get(LAYOUT.tree), commit.sha, LAYOUT.tree))
          : { tree: version.tree, node: version.node };
        const configChanged = commit.changedPaths.includes(LAYOUT.config);
        const configValid = configChanged ? config!.valid : undefined;
        const configPair =
          configChanged && configValuesBefore !== undefined && config!.values !== undefined
            ? { before: configValuesBefore, after: config!.values }
            : undefined;
        if (configChanged) configValuesBefore = config!.values;
        const finished = commit.changedPaths.includes(LAYOUT.finished) ? await finishedAt(files, commit.sha) : undefined;
        yield {
          ...commit,
          tree: version.tree,
          treeVersion: version,
          ...(finished !== undefined ? { finished } : {}),
          ...(configValid !== undefined ? { configValid } : {}),
          ...(configPair !== undefined ? { config: configPair } : {}),
          ...(definitionChanged.length > 0 ? { definitionChanged } : {}),
        };
      }
    }
    return await auditRun(runId, baseVersion.tree, withTrees(), await finishedAt(files, base));
  } finally {
    files.close();
  }
}

/** The run `runner report` resolved (src/adapters/audit/resolve-run.ts), as its audit needs it: its tip, its first loop commit and where it began. */
export interface RunToAudit {
  runId: string;
  tip: string;
  /** The run's first loop commit. */
  first: string;
  /** Where the run began (runBase of the first loop commit). */
  start: RunBase;
}

/**
 * `runner report`'s audit of a run, from where it began (a problem with its first loop commit's
 * Runner-Start reported first).
 */
export async function auditOfResolvedRun(root: string, { runId, tip, first, start }: RunToAudit): Promise<AuditReport> {
  const store = ObjectStore.open(await gitDir(root), tip.length / 2);
  try {
    const report = await auditHistory(new GitRepo(root), runId, start.sha, tip, store);
    if (start.problem !== undefined) report.violations.unshift({ sha: first, iteration: 1, message: start.problem });
    return report;
  } finally {
    store?.close();
  }
}

/** What the report's thread posts to the audit's: the repository and the run in it. */
export interface AuditRequest {
  root: string;
  run: RunToAudit;
}

/** The audit's thread (startAuditThread): given the run once it is resolved, or ended unused. */
export interface AuditThread {
  audit(run: RunToAudit): Promise<AuditReport>;
  end(): void;
}

/**
 * auditOfResolvedRun on a thread of its own, so that the caller's thread goes on with other work on
 * the other core (`runner report` reads the logs and diffs meanwhile). The thread starts now and
 * loads while the caller resolves the run, which it then posts (resolved once, on the caller's
 * thread). Where no thread can run it, or it fails there, the audit runs on the caller's thread
 * (and a failure of its own is thrown there, as the audit throws it).
 */
export function startAuditThread(root: string): AuditThread {
  // (started ahead by the report command, else now: thread-ahead.ts)
  const thread = takeAuditThread();
  // (undefined: no thread, or it failed — the audit then runs here)
  const answer = new Promise<AuditReport | undefined>((resolve) => {
    if (thread === undefined) return resolve(undefined);
    thread.once("message", (message: { report?: AuditReport }) => resolve(message.report));
    thread.once("error", () => resolve(undefined));
    thread.once("exit", () => resolve(undefined));
  });
  return {
    audit: async (run) => {
      thread?.postMessage({ root, run } satisfies AuditRequest);
      return (await answer) ?? auditOfResolvedRun(root, run);
    },
    end: () => void thread?.terminate(),
  };
}
