// Tree store: loads .runner/state/tree.json with every problem located, and writes canonical JSON
// atomically (temp file in the same folder, fsync, rename, fsync the folder), so a crash never
// leaves half a tree.
// It imports nothing of the config (and so not its TOML parser): `runner next` loads only this.
import { open, readFile, rename, stat, unlink } from "node:fs/promises";
import path from "node:path";
import { serializeTreeBody } from "../core/serialize.js";
import { checkTreeShape } from "../core/invariants.js";
import { LAYOUT } from "../core/layout.js";
import { jsonSyntaxMessage, type Problem } from "../core/problems.js";
import type { TaskTree } from "../core/tree.js";

/** Larger tree files are refused before they are read (a 100,000-node plan is about 30 MB). */
export const MAX_TREE_BYTES = 40 * 1024 * 1024;

export type TreeLoad =
  | { ok: true; tree: TaskTree; text: string }
  | { ok: false; problems: Problem[]; text?: string; missing?: boolean };

/** Reads and checks a tree file: size, JSON, schema, unique ids, attempts ≤ max_attempts. */
export async function loadTreeFile(file: string): Promise<TreeLoad> {
  let size: number;
  try {
    size = (await stat(file)).size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { ok: false, missing: true, problems: [{ path: "$", message: "the file does not exist" }] };
    throw error;
  }
  if (size > MAX_TREE_BYTES) {
    return { ok: false, problems: [{ path: "$", message: `the file is ${(size / 1024 / 1024).toFixed(1)} MiB, over the ${MAX_TREE_BYTES / 1024 / 1024} MiB limit` }] };
  }
  const text = await readFile(file, "utf8");
  return checkTreeText(text);
}

/** The project's tree file (.runner/state/tree.json), read and checked. */
export async function loadTree(root: string): Promise<TreeLoad> {
  return loadTreeFile(path.join(root, ...LAYOUT.tree.split("/")));
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
export async function writeFileAtomic(file: string, text: string | Uint8Array, options: { durable?: boolean } = {}): Promise<void> {
  const durable = options.durable ?? true;
  const dir = path.dirname(file);
  const temp = path.join(dir, `.${path.basename(file)}.${process.pid}.tmp`);
  const handle = await open(temp, "w");
  try {
    await handle.writeFile(text);
    if (durable) await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(temp, file);
  } catch (error) {
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

/** Writes the tree in canonical form, atomically. */
export async function writeTreeFile(file: string, tree: TaskTree): Promise<void> {
  await writeTreeBody(file, serializeTreeBody(tree));
}

/**
 * Writes a tree's canonical text given without its trailing newline (`serializeTreeBody`),
 * atomically, from one Buffer: the text is encoded once and never copied into a second string.
 */
export async function writeTreeBody(file: string, body: string): Promise<void> {
  const length = Buffer.byteLength(body, "utf8");
  const bytes = Buffer.allocUnsafe(length + 1);
  bytes.write(body, 0, "utf8");
  bytes[length] = 0x0a;
  await writeFileAtomic(file, bytes);
}
