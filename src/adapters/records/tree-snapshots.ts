// The tree snapshots of an iteration's log (seed 001 §10: tree.before.json / tree.after.json) without
// copies of what git holds: where the snapshot is a committed tree file, the log keeps a reference,
// `trees.json` = { "before"?: Ref, "after"?: Ref }, Ref = { commit, path, blob }, and no copy. A copy
// (tree.<side>.json) stays where git has no such file: a repair's canonical starting tree, a snapshot
// redacted because it holds a secret value, the tree after an iteration not (yet) committed (the
// copy is made when the tree is written and becomes a reference once the commit is made). See
// docs/decisions.md, "Iteration logs refer to the tree git holds".
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { readFile, rm, stat } from "node:fs/promises";
import path from "node:path";
import { iterationDir, LAYOUT } from "../../core/base/layout.js";
import type { GitRepo } from "../git/git.js";
import type { IterationLog } from "./iteration-log.js";
import { readOptional } from "../files/project-files.js";

const TREE_REFS_FILE = "trees.json";

export type SnapshotSide = "before" | "after";

export interface SnapshotRef {
  /** The commit holding the snapshot. */
  commit: string;
  path: string;
  /** git's id of the file's bytes. */
  blob: string;
}

type Refs = Partial<Record<SnapshotSide, SnapshotRef>>;

const HEX = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

/** Files up to this size are hashed from one read; larger ones from a stream. */
const READ_WHOLE_BYTES = 4 * 1024 * 1024;

/** git's object id of a blob holding `file`'s bytes (SHA-1, or SHA-256 in a repository whose ids are 64 characters); undefined when it is missing. */
async function blobIdOfFile(file: string, idLength: number): Promise<string | undefined> {
  const size = await stat(file).then(
    (info) => info.size,
    () => undefined,
  );
  if (size === undefined) return undefined;
  const hash = createHash(idLength === 64 ? "sha256" : "sha1").update(`blob ${size}\0`);
  // (a tree file of up to a few MB read at once; a larger one streamed, never held whole)
  if (size <= READ_WHOLE_BYTES) hash.update(await readFile(file));
  else for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) hash.update(chunk);
  return hash.digest("hex");
}

function readRefs(text: string | undefined): Refs {
  if (text === undefined) return {};
  try {
    const data = JSON.parse(text) as Record<string, unknown>;
    const refs: Refs = {};
    for (const side of ["before", "after"] as const) {
      const ref = data?.[side] as Partial<SnapshotRef> | undefined;
      if (
        ref &&
        typeof ref.commit === "string" &&
        HEX.test(ref.commit) &&
        ref.path === LAYOUT.tree &&
        typeof ref.blob === "string" &&
        HEX.test(ref.blob)
      )
        refs[side] = { commit: ref.commit, path: ref.path, blob: ref.blob };
    }
    return refs;
  } catch {
    return {};
  }
}

async function updateRefs(log: IterationLog, change: (refs: Refs) => void): Promise<void> {
  const refs = readRefs(await readOptional(log.file(TREE_REFS_FILE)).catch(() => undefined));
  change(refs);
  log.writeJson(TREE_REFS_FILE, refs);
}

/** The snapshot `side` is the tree file as `commit` holds it (`file`: that file on disk): recorded as a reference, no copy. */
export async function referToCommittedTree(log: IterationLog, side: SnapshotSide, file: string, commit: string): Promise<void> {
  const blob = await blobIdOfFile(file, commit.length);
  if (blob === undefined) return;
  await updateRefs(log, (refs) => {
    refs[side] = { commit, path: LAYOUT.tree, blob };
  });
}

/**
 * After the iteration's commit: when tree.after.json is byte for byte the tree file committed (`file`
 * on disk, as staged), it becomes a reference to `commit` and the copy goes; a redacted copy stays.
 */
export async function settleTreeAfter(log: IterationLog, file: string, commit: string): Promise<void> {
  const copy = log.file("tree.after.json");
  const [kept, committed] = await Promise.all([blobIdOfFile(copy, commit.length), blobIdOfFile(file, commit.length)]);
  if (kept === undefined || kept !== committed) return;
  await updateRefs(log, (refs) => {
    refs.after = { commit, path: LAYOUT.tree, blob: committed };
  });
  await rm(copy, { force: true });
}

/** Where a snapshot of iteration `iteration` is, in words, or undefined when the log has none. */
export interface Snapshot {
  where: string;
  text: () => Promise<string>;
}

/**
 * An iteration's snapshots, before and after: the committed file a reference names (checked: the
 * commit holds that very blob at that path, as the log is in the agent's reach), else the log's copy.
 */
export async function readSnapshots(
  root: string,
  git: GitRepo,
  runId: string,
  iteration: number,
): Promise<Record<SnapshotSide, Snapshot | undefined>> {
  const dir = path.join(root, ...iterationDir(runId, iteration).split("/"));
  const refs = readRefs(await readOptional(path.join(dir, TREE_REFS_FILE)).catch(() => undefined));
  const read = async (side: SnapshotSide): Promise<Snapshot | undefined> => {
    const ref = refs[side];
    if (ref?.commit) {
      const committed = (await git.raw(["rev-parse", "-q", "--verify", `${ref.commit}:${ref.path}`]).catch(() => "")).trim();
      if (committed === ref.blob) {
        return {
          where: `commit ${ref.commit.slice(0, 12)}, ${ref.path} (blob ${ref.blob.slice(0, 12)})`,
          text: async () => git.raw(["cat-file", "blob", ref.blob]),
        };
      }
    }
    const file = path.join(dir, `tree.${side}.json`);
    const copy = await readOptional(file).catch(() => undefined);
    if (copy === undefined) return undefined;
    return { where: `${iterationDir(runId, iteration)}/tree.${side}.json`, text: async () => copy };
  };
  const [before, after] = await Promise.all([read("before"), read("after")]);
  return { before, after };
}
