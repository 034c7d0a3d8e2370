// The runner's commit object and the branch's move, written by the runner itself as git writes them,
// instead of two git processes per commit (`commit-tree`, `update-ref`: 12–18 ms of a night's
// iteration on the bench machine). A commit object is a loose object: "commit <size>\0" and its text,
// deflated, at objects/<2 hex>/<38 hex>. A branch moves by git's own lock-file protocol, so that git
// and the runner exclude each other: <ref>.lock created exclusively, the old value checked (the
// compare-and-swap), the new one written, one line added to the reflogs that exist, the lock renamed
// over the ref.
//
// Whatever git would write differently is left to git (the functions answer undefined): an identity
// git would clean up (leading or trailing punctuation, `<`, `>`, a newline), a date given in the
// environment (GIT_AUTHOR_DATE, GIT_COMMITTER_DATE), a shared repository (core.sharedRepository sets
// the files' modes), SHA-256 ids, a branch that is not a plain loose ref (packed, symbolic, reftable).
// An object file already at the commit's id is read and compared: one the agent planted there
// (git would keep it) is replaced by the runner's.
import { createHash, randomBytes } from "node:crypto";
import { closeSync, constants, existsSync, fstatSync, linkSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import path from "node:path";
import { deflateSync, inflateSync } from "node:zlib";
import { GitError } from "../../errors.js";
import { readAgentFileRange, readSmallAgentFile } from "../files/safe-files.js";
import { commonDir } from "./git-control.js";
import type { CommitIdentity } from "./git.js";

/** When a commit is made: seconds since the epoch and the local offset from UTC in minutes (east positive). */
export interface CommitTime {
  seconds: number;
  offsetMinutes: number;
}

export function commitTimeNow(now = new Date()): CommitTime {
  return { seconds: Math.floor(now.getTime() / 1000), offsetMinutes: -now.getTimezoneOffset() };
}

/** git's zone: ±HHMM. */
function zone(offsetMinutes: number): string {
  const sign = offsetMinutes < 0 ? "-" : "+";
  const minutes = Math.abs(offsetMinutes);
  return `${sign}${String(Math.floor(minutes / 60)).padStart(2, "0")}${String(minutes % 60).padStart(2, "0")}`;
}

function signature(identity: CommitIdentity, when: CommitTime): string {
  return `${identity.name} <${identity.email}> ${when.seconds} ${zone(when.offsetMinutes)}`;
}

/** The text of a commit of `tree` on `parent` by `identity` (author and committer), `message` verbatim — as `git commit-tree` writes it. */
export function commitText(tree: string, parent: string, message: string, identity: CommitIdentity, when: CommitTime): string {
  const by = signature(identity, when);
  return `tree ${tree}\nparent ${parent}\nauthor ${by}\ncommitter ${by}\n\n${message}`;
}

/** git's "crud" (ident.c): what it strips from the ends of a name or email. */
function crud(code: number): boolean {
  return code <= 32 || ".,:;<>\"\\'".includes(String.fromCharCode(code));
}

/** Whether git would write this name or email as it is. */
function asGitWrites(text: string): boolean {
  return text !== "" && !crud(text.charCodeAt(0)) && !crud(text.charCodeAt(text.length - 1)) && !/[<>\n]/.test(text);
}

/** Whether the runner writes commits here itself (else: git does). */
export function writesCommitsItself(
  gitDir: string,
  identity: CommitIdentity,
  env: Readonly<Record<string, string | undefined>> = process.env,
): boolean {
  if (env.GIT_AUTHOR_DATE !== undefined || env.GIT_COMMITTER_DATE !== undefined) return false;
  if (!asGitWrites(identity.name) || !asGitWrites(identity.email)) return false;
  const config = readSmallAgentFile(path.join(commonDir(gitDir), "config"), MAX_CONFIG_BYTES);
  return config !== undefined && !/sharedrepository/i.test(config);
}

/**
 * Writes the commit object (see writesCommitsItself for when) and returns its id; undefined when git
 * should (SHA-256 ids).
 */
export function writeCommitObject(
  gitDir: string,
  tree: string,
  parent: string,
  message: string,
  identity: CommitIdentity,
  when: CommitTime,
): string | undefined {
  if (!/^[0-9a-f]{40}$/.test(tree) || !/^[0-9a-f]{40}$/.test(parent)) return undefined;
  const body = Buffer.from(commitText(tree, parent, message, identity, when), "utf8");
  const object = Buffer.concat([Buffer.from(`commit ${body.length}\0`, "latin1"), body]);
  const id = createHash("sha1").update(object).digest("hex");
  const dir = path.join(commonDir(gitDir), "objects", id.slice(0, 2));
  const file = path.join(dir, id.slice(2));
  if (existsSync(file)) {
    if (holds(file, object)) return id;
    rmSync(file, { force: true }); // not what its name says: planted
  }
  mkdirSync(dir, { recursive: true });
  const temp = path.join(dir, `tmp_obj_runner_${process.pid}_${randomBytes(6).toString("hex")}`);
  const fd = openSync(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o444);
  try {
    try {
      writeSync(fd, deflateSync(object, { level: 1 }));
    } finally {
      closeSync(fd);
    }
    try {
      linkSync(temp, file);
    } catch (error) {
      // A file system without hard links: renamed into place instead, as git does.
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") renameSync(temp, file);
      else if (!holds(file, object)) throw error;
    }
  } finally {
    rmSync(temp, { force: true }); // (gone already where it was renamed)
  }
  return id;
}

/** Whether the object file at `file` holds `object` (read as the agent's files are: no link, no FIFO). */
function holds(file: string, object: Buffer): boolean {
  const read = readAgentFileRange(file, 0, MAX_OBJECT_FILE_BYTES);
  if (read.kind !== "bytes" || read.size > MAX_OBJECT_FILE_BYTES) return false;
  try {
    return inflateSync(read.bytes).equals(object);
  } catch {
    return false;
  }
}

/** A repository's config larger than this is left to git (it is read whole here). */
const MAX_CONFIG_BYTES = 1024 * 1024;

/** A commit object's file is far smaller (its message is bounded). */
const MAX_OBJECT_FILE_BYTES = 16 * 1024 * 1024;

/** A ref or HEAD: a small file of the git folder, which the agent can write (no link followed, no FIFO waited on). */
const REF_FILE_BYTES = 64 * 1024;

/**
 * Moves `refs/heads/<branch>` from `parent` to `commit` as git does (see the top of this file): true
 * when moved; undefined when the branch is not a plain loose ref here (then ask git); throws when
 * the branch no longer points at `parent` or another process holds its lock — nothing moves then.
 */
export function moveBranch(
  gitDir: string,
  branch: string,
  commit: string,
  parent: string,
  identity: CommitIdentity,
  when: CommitTime,
  reason = "runner",
): true | undefined {
  const common = commonDir(gitDir);
  const ref = path.join(common, "refs", "heads", ...branch.split("/"));
  const current = readSmallAgentFile(ref, REF_FILE_BYTES);
  if (current === undefined || !/^[0-9a-f]{40}\n$/.test(current) || !/^[0-9a-f]{40}$/.test(commit)) return undefined;
  // (what does not need the lock is read first: a runner killed while it holds the lock leaves it behind, as git would)
  const line = `${parent} ${commit} ${signature(identity, when)}\t${reason}\n`;
  const headToo = readHead(gitDir) === `ref: refs/heads/${branch}`;
  const lock = `${ref}.lock`;
  let fd: number;
  try {
    fd = openSync(lock, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o644);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST")
      throw new GitError(
        `git update-ref failed: cannot lock ref 'refs/heads/${branch}': ${lock} exists (another git process is updating it, or one was stopped while it did: then remove that file)`,
      );
    throw error;
  }
  try {
    try {
      writeSync(fd, `${commit}\n`);
    } finally {
      closeSync(fd);
    }
    const now = readSmallAgentFile(ref, REF_FILE_BYTES);
    if (now !== `${parent}\n`)
      throw new GitError(
        `git update-ref failed: cannot lock ref 'refs/heads/${branch}': is at ${now?.trim() ?? "something else"} but expected ${parent}`,
      );
    appendIfPresent(path.join(common, "logs", "refs", "heads", ...branch.split("/")), line);
    if (headToo) appendIfPresent(path.join(gitDir, "logs", "HEAD"), line);
    renameSync(lock, ref);
  } catch (error) {
    rmSync(lock, { force: true });
    throw error;
  }
  return true;
}

function readHead(gitDir: string): string | undefined {
  return readSmallAgentFile(path.join(gitDir, "HEAD"), REF_FILE_BYTES)?.trim();
}

/**
 * Adds `line` to a reflog that exists (git creates them when the branch is made; a repository
 * without reflogs gets none). Only to a regular file: a FIFO planted there is never waited on.
 */
function appendIfPresent(file: string, line: string): void {
  let fd: number;
  try {
    fd = openSync(file, constants.O_WRONLY | constants.O_APPEND | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return;
  }
  try {
    if (fstatSync(fd).isFile()) writeSync(fd, line);
  } finally {
    closeSync(fd);
  }
}
