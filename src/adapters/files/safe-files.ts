// Writing the runner's own logs where the agent can reach (.runner/iterations/ is in the work tree):
// never through a symbolic link, never into a file the runner did not create for this write. A
// folder on the way that is a symbolic link (or a file) is replaced by a real folder; the file is
// removed first (a link, a hard link to someone else's file, an earlier copy) and created anew,
// exclusively, without following links. So a link the agent plants cannot aim the runner's writes
// at a file outside the repository. A file the agent wrote for the runner (its answer) is read the
// same way: never through a link, never from a FIFO or a device that would block the read.
import {
  closeSync,
  constants,
  copyFileSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import path from "node:path";

const CREATE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
const READ = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
const APPEND = constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/**
 * Each folder on the way from `top` (trusted, not included) to `dir`, with what is there now: a real
 * folder, something else (a link, a file), or nothing.
 */
function* foldersOnTheWay(top: string, dir: string): Generator<{ at: string; found: "folder" | "other" | "none" }> {
  const relative = path.relative(top, dir);
  if (relative.startsWith("..") || path.isAbsolute(relative)) throw new Error(`${dir} is not inside ${top}`);
  let at = top;
  for (const part of relative.split(path.sep).filter(Boolean)) {
    at = path.join(at, part);
    let info;
    try {
      info = lstatSync(at);
    } catch {
      info = undefined;
    }
    yield { at, found: info === undefined ? "none" : info.isDirectory() ? "folder" : "other" };
  }
}

/** Makes `dir` a real folder, every folder between `top` and it too (`top` itself is trusted). */
export function ensureRealFolder(top: string, dir: string): void {
  for (const { at, found } of foldersOnTheWay(top, dir)) {
    if (found === "other") rmSync(at, { force: true }); // a link or a file where a folder belongs
    if (found !== "folder") mkdirSync(at);
  }
}

/**
 * The first folder on the way from `top` to `dir` that is not a real folder (a link, a file, or
 * nothing), as a path relative to `top`; undefined when all are. Changes nothing: for reading.
 */
export function notRealFolder(top: string, dir: string): string | undefined {
  for (const { at, found } of foldersOnTheWay(top, dir)) if (found !== "folder") return path.relative(top, at);
  return undefined;
}

/** Removes whatever is at `file` and creates it anew for writing: a descriptor to a file only this write owns. */
export function openSafely(file: string): number {
  removeAnything(file);
  return openSync(file, CREATE, 0o644);
}

export function writeSafely(file: string, data: string): void {
  const fd = openSafely(file);
  try {
    writeSync(fd, data);
  } finally {
    closeSync(fd);
  }
}

export function copySafely(source: string, file: string): void {
  removeAnything(file);
  copyFileSync(source, file, constants.COPYFILE_EXCL);
}

/** Appends to a log the runner keeps across iterations; a link, a hard link, a FIFO or a device found there is replaced by a new file. */
export function appendSafely(file: string, text: string): void {
  let fd: number;
  try {
    // (without blocking: a FIFO planted there, with or without a reader, is replaced, never waited on)
    fd = openSync(file, APPEND, 0o644);
    const info = fstatSync(fd);
    if (!info.isFile() || info.nlink > 1) {
      closeSync(fd);
      fd = openSafely(file);
    }
  } catch {
    fd = openSafely(file); // a symbolic link (ELOOP) or something else in the way
  }
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
}

/** A file the agent could have written, read: its text, nothing there, or something else than a regular file. */
export type AgentFileRead = { kind: "text"; text: string } | { kind: "missing" } | { kind: "not-regular" };

/**
 * Reads a file the agent could have written, never through a symbolic link and never from a FIFO, a
 * device or a folder (it is opened without following links and without blocking, then checked).
 */
export function readAgentFile(file: string): AgentFileRead {
  let fd: number;
  try {
    fd = openSync(file, READ);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT" ? { kind: "missing" } : { kind: "not-regular" }; // ELOOP: a link
  }
  try {
    return fstatSync(fd).isFile() ? { kind: "text", text: readFileSync(fd, "utf8") } : { kind: "not-regular" };
  } finally {
    closeSync(fd);
  }
}

/** A part of a file the agent could have written: its size, and the bytes read. */
export type AgentFileRange = { kind: "bytes"; size: number; bytes: Buffer } | { kind: "missing" } | { kind: "not-regular" };

/**
 * At most `maxBytes` of a file the agent could have written, from byte `offset` on, opened as
 * `readAgentFile` opens it: a huge file costs no more than the bytes asked for.
 */
export function readAgentFileRange(file: string, offset: number, maxBytes: number): AgentFileRange {
  let fd: number;
  try {
    fd = openSync(file, READ);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT" ? { kind: "missing" } : { kind: "not-regular" };
  }
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) return { kind: "not-regular" };
    const length = Math.max(0, Math.min(maxBytes, info.size - offset));
    const bytes = Buffer.alloc(length);
    let read = 0;
    while (read < length) {
      const got = readSync(fd, bytes, read, length - read, offset + read);
      if (got === 0) break;
      read += got;
    }
    return { kind: "bytes", size: info.size, bytes: bytes.subarray(0, read) };
  } finally {
    closeSync(fd);
  }
}

/** A small file the agent could have written, whole: its text, or undefined when it is missing, not a regular file, or over `maxBytes`. */
export function readSmallAgentFile(file: string, maxBytes: number): string | undefined {
  const read = readAgentFileRange(file, 0, maxBytes + 1);
  return read.kind === "bytes" && read.size <= maxBytes ? read.bytes.toString("utf8") : undefined;
}

/**
 * Replaces `file` with `data` at once (a reader sees the old text or the new, never half): written
 * to a file of its own beside it, created as `openSafely` creates files, then renamed over whatever
 * is at the name — a link planted there is replaced, never followed.
 */
export function replaceSafely(file: string, data: string): void {
  const temp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`);
  writeSafely(temp, data);
  try {
    renameSync(temp, file);
  } catch (error) {
    // a folder in the way (rename cannot replace one): removed, then once more
    removeAnything(file);
    try {
      renameSync(temp, file);
    } catch {
      removeAnything(temp);
      throw error;
    }
  }
}

function removeAnything(file: string): void {
  try {
    const info = lstatSync(file);
    if (info.isDirectory()) rmSync(file, { recursive: true, force: true });
    else unlinkSync(file);
  } catch {
    // nothing there
  }
}
