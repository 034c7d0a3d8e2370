// Tree store: loads .runner/state/tree.json with every problem located, and writes canonical JSON
// atomically (temp file in the same folder, fsync, rename, fsync the folder), so a crash never
// leaves half a tree.
// It imports nothing of the config (and so not its TOML parser): `runner next` loads only this.
import { open, readFile, rename, stat, unlink, type FileHandle } from "node:fs/promises";
import path from "node:path";
import { checkTreeShape } from "../../core/tree/invariants.js";
import { LAYOUT } from "../../core/base/layout.js";
import { jsonSyntaxMessage, type Problem } from "../../core/base/problems.js";
import type { TaskTree } from "../../core/tree/tree.js";

/** Larger tree files are refused before they are read (a 100,000-node plan is about 30 MB). */
export const MAX_TREE_BYTES = 40 * 1024 * 1024;

export type TreeLoad = { ok: true; tree: TaskTree; text: string } | { ok: false; problems: Problem[]; text?: string; missing?: boolean };

/** The problem of a tree file of `bytes`, when it is over the limit every command reads. */
export function treeSizeProblem(bytes: number): Problem | undefined {
  if (bytes <= MAX_TREE_BYTES) return undefined;
  return { path: "$", message: `the file is ${(bytes / 1024 / 1024).toFixed(1)} MiB, over the ${MAX_TREE_BYTES / 1024 / 1024} MiB limit` };
}

/** Reads and checks a tree file: size, JSON, schema, unique ids, attempts ≤ max_attempts. */
export async function loadTreeFile(file: string): Promise<TreeLoad> {
  let size: number;
  try {
    size = (await stat(file)).size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT")
      return { ok: false, missing: true, problems: [{ path: "$", message: "the file does not exist" }] };
    throw error;
  }
  const tooLarge = treeSizeProblem(size);
  if (tooLarge) return { ok: false, problems: [tooLarge] };
  const text = await readFile(file, "utf8");
  return checkTreeText(text);
}

/** The project's tree file (.runner/state/tree.json), read and checked. */
export async function loadTree(root: string): Promise<TreeLoad> {
  return loadTreeFile(path.join(root, ...LAYOUT.tree.split("/")));
}

/**
 * The project's tree file as the runner itself wrote it at HEAD, in canonical form from a valid tree
 * (its state folder says so, and the work tree is clean): parsed, not checked again.
 */
export async function loadWrittenTree(root: string): Promise<TreeLoad> {
  const text = await readFile(path.join(root, ...LAYOUT.tree.split("/")), "utf8");
  return { ok: true, tree: JSON.parse(text) as TaskTree, text };
}

/** Parses and checks tree text (also used on trees read from git history). */
export function checkTreeText(text: string): TreeLoad {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    return { ok: false, text, problems: [{ path: "$", message: jsonSyntaxMessage(text, error) }] };
  }
  const { tree, problems } = checkTreeShape(data);
  return tree ? { ok: true, tree, text } : { ok: false, text, problems };
}

/** Writes `text` to `file` atomically: a reader sees the old bytes or the new ones, never a mix. */
export async function writeFileAtomic(file: string, text: string | Iterable<string>, options: { durable?: boolean } = {}): Promise<void> {
  const durable = options.durable ?? true;
  const dir = path.dirname(file);
  const temp = path.join(dir, `.${path.basename(file)}.${process.pid}.tmp`);
  try {
    const handle = await open(temp, "w");
    try {
      if (typeof text === "string") await handle.writeFile(text);
      else await writePieces(handle, text);
      if (durable) await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, file);
  } catch (error) {
    // A full disk, a failed write or rename: the old file stays, and no temp file is left behind.
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  if (!durable) return;
  const dirHandle = await open(dir, "r");
  try {
    await dirHandle.sync();
  } finally {
    await dirHandle.close();
  }
}

/** Writes each piece of text in turn, encoded on its own. */
async function writePieces(handle: FileHandle, pieces: Iterable<string>): Promise<void> {
  for (const piece of pieces) {
    const bytes = Buffer.from(piece, "utf8");
    for (let offset = 0; offset < bytes.length; ) offset += (await handle.write(bytes, offset, bytes.length - offset)).bytesWritten;
  }
}

/** Characters per piece a tree's text is encoded and written in (about 1 MB of a typical tree). */
export const WRITE_CHUNK_CHARS = 1 << 20;

/**
 * Writes a tree's canonical text given without its trailing newline (`serializeTreeBody`),
 * atomically. The text is encoded and written a piece at a time, never whole: a 40 MB tree would
 * otherwise add a 40 MB buffer to the step's peak memory, beside the text itself.
 */
export async function writeTreeBody(file: string, body: string): Promise<void> {
  await writeFileAtomic(file, textPieces(body));
}

/**
 * `text` and a trailing newline, in pieces of about `size` characters (slices of the one string, not
 * copies); a cut never falls inside a surrogate pair, so each piece encodes as its share of the whole.
 */
export function* textPieces(text: string, size = WRITE_CHUNK_CHARS): Generator<string> {
  let start = 0;
  while (start < text.length) {
    let end = Math.min(start + size, text.length);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end += 1;
    yield text.slice(start, end);
    start = end;
  }
  yield "\n";
}
