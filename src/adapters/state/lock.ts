// One runner at a time per checkout (CONTRACT §4), held in a way no file the agent deletes or writes
// can fool: on Linux the lock is a listening Unix socket in the abstract namespace, named after the
// checkout's git folder — the kernel frees the name when its holder dies, and nothing in the file
// system names it, so `rm .git/runner.lock` changes nothing. The holder answers every connection
// with its record (pid, command, since): that is how a refused command names it. The file
// `runner.lock` in the git folder keeps the same record for people and older tools; it is written
// by the holder but never trusted. Where there are no abstract sockets (not Linux) the file itself
// is the lock, as before: created exclusively, and taken over when its holder is gone.
//
// A person's edit with --wait names itself in `runner.lock.waiting` and keeps that file open while
// it waits; `runner run` hands the lock over between iterations only to such a waiter — a live
// process of this machine's user, in this PID namespace, outside every agent's containment, that
// holds the file open. Anything else in the file (planted by an agent) is ignored and removed. Every
// wait is bounded.
import {
  closeSync,
  fstatSync,
  lstatSync,
  openSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { createHash } from "node:crypto";
import net from "node:net";
import { hostname, userInfo } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { RefusalError } from "../../errors.js";
import { containedCaller, inOtherPidNamespace } from "../process/agent-containment.js";
import { holderAlive, LOCK_NAME, type LockRecord, parseLockRecord, processStart, readLockRecord } from "./lock-holder.js";
import { HAS_PROC } from "../process/proc-table.js";

/** Abstract Unix sockets: Linux only. */
const ABSTRACT_SOCKETS = process.platform === "linux";
/** How long a run waits for a person's edit it handed the lock to (the edit itself takes seconds). */
export const HAND_OVER_MS = 10 * 60_000;
/** How long asking a holder for its record may take before the lock file's record is shown instead. */
const ASK_HOLDER_MS = 1_000;

/** The abstract socket name of the lock of the checkout whose git folder is `gitDir` (its real path; the user's uid). */
export function lockAddress(gitDir: string): string {
  let real: string;
  try {
    real = realpathSync(gitDir);
  } catch {
    real = gitDir;
  }
  const uid = process.getuid?.() ?? 0;
  const name = `guarded-runner/lock/${uid}${real}`;
  // Names are at most 107 bytes; a long path is named by its hash.
  return `\0${Buffer.byteLength(name) <= 100 ? name : `guarded-runner/lock/${uid}/${createHash("sha256").update(real).digest("hex")}`}`;
}

/** What `handOver` tells, as it happens: a waiting file ignored, or the lock handed to a person's edit (before the wait). */
export interface HandOverNotice {
  cause: "ignored" | "handed-over";
  message: string;
}

export class RepositoryLock {
  private held = false;
  private server: net.Server | undefined;
  /** The git folder's identity when the lock was taken: a folder swapped under the runner no longer holds it. */
  private folder: { dev: number; ino: number } | undefined;
  /** This process's open waiting file, while it waits (and works) under `--wait`. */
  private waitingFd: number | undefined;
  private readonly release = () => this.unlock();
  readonly file: string;

  constructor(
    private readonly gitDir: string,
    private readonly command: string,
  ) {
    this.file = `${gitDir}/${LOCK_NAME}`;
  }

  /** Takes the lock or refuses with the holder named. */
  async acquire(now: () => number): Promise<void> {
    if (ABSTRACT_SOCKETS) await this.listen(now);
    else this.createFile(now);
    this.held = true;
    this.folder = statSync(this.gitDir);
    process.once("exit", this.release);
    // The record for people (and `runner status` where sockets are not used); written after the lock is ours.
    if (ABSTRACT_SOCKETS) writeRecordFile(this.file, this.record(now));
  }

  private listen(now: () => number): Promise<void> {
    const record = this.record(now);
    return new Promise((resolve, reject) => {
      const server = net.createServer((socket) => {
        socket.on("error", () => undefined);
        socket.end(record);
      });
      server.once("error", (error: NodeJS.ErrnoException) => {
        if (error.code !== "EADDRINUSE") return reject(error);
        void askHolder(this.gitDir).then((holder) => reject(heldBy(holder ?? readLockRecord(this.file))));
      });
      server.listen({ path: lockAddress(this.gitDir), exclusive: true }, () => {
        server.unref();
        this.server = server;
        resolve();
      });
    });
  }

  private createFile(now: () => number): void {
    for (let attempt = 0; attempt < 2; attempt++) {
      let fd: number;
      try {
        fd = openSync(this.file, "wx");
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
        const holder = readLockRecord(this.file);
        if (holder && holderAlive(holder)) throw heldBy(holder);
        unlinkSync(this.file); // stale: its holder is gone
        continue;
      }
      writeSync(fd, this.record(now));
      closeSync(fd);
      return;
    }
    throw new RefusalError(`Could not take the repository lock ${this.file}; remove it if no runner is working here.`);
  }

  /**
   * Why this runner no longer holds the lock, or undefined while it does: checked right before the
   * branch moves, so that a runner that lost it commits nothing.
   */
  lost(): string | undefined {
    if (!this.held) return "the lock was released";
    let now: { dev: number; ino: number };
    try {
      now = statSync(this.gitDir);
    } catch {
      return `the git folder ${this.gitDir} is gone`;
    }
    if (this.folder && (now.dev !== this.folder.dev || now.ino !== this.folder.ino)) return `the git folder ${this.gitDir} was replaced`;
    if (ABSTRACT_SOCKETS) return this.server?.listening ? undefined : "the lock's socket was closed";
    return readLockRecord(this.file)?.pid === process.pid ? undefined : `${this.file} no longer names this runner`;
  }

  /** The file a command waiting for the lock (`--wait`) names itself in; a run hands the lock over between iterations while it is valid. */
  get waitingFile(): string {
    return `${this.file}.waiting`;
  }

  /**
   * Takes the lock, waiting for its holder: the waiting file (kept open while this process waits
   * and works) asks a `runner run` to hand the lock over between two iterations. Gives up after
   * `timeoutMs` with the holder named. `say` tells once that it waits. A `signal` that aborts (the
   * caller gave up: an MCP client cancelled its request) ends the wait, the lock not taken.
   */
  async acquireWaiting(now: () => number, timeoutMs: number, say: (line: string) => void, pollMs = 200, signal?: AbortSignal): Promise<void> {
    try {
      await this.acquire(now);
      return;
    } catch (error) {
      if (!(error instanceof RefusalError)) throw error;
      say(
        `${error.message.replace(/; wait for it.*$/, "")}; waiting (up to ${Math.round(timeoutMs / 60_000)} minutes) to make the edit between two of its iterations.`,
      );
    }
    const deadline = now() + timeoutMs;
    await this.nameWaiting(now, deadline, pollMs, signal);
    try {
      await this.acquireBefore(now, deadline, pollMs, signal);
    } finally {
      // (kept while the edit runs: the run waits until the lock is released and the file gone)
      if (!this.held) this.clearWaiting();
    }
  }

  /** Writes this process's record to the waiting file, created exclusively and kept open; waits while another valid waiter holds it. */
  private async nameWaiting(now: () => number, deadline: number, pollMs: number, signal?: AbortSignal): Promise<void> {
    for (;;) {
      signal?.throwIfAborted();
      try {
        const fd = openSync(this.waitingFile, "wx", 0o600);
        writeSync(fd, this.record(now));
        this.waitingFd = fd;
        return;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
      // Another person's edit waits first; a file no live waiter holds is removed.
      if (waiterProblem(this.waitingFile) !== undefined) removeFile(this.waitingFile);
      else if (now() >= deadline)
        throw new RefusalError(`Another command waits for the lock of this repository (${this.waitingFile}); try again when it is done.`);
      else await sleep(pollMs, undefined, signal ? { signal } : undefined);
    }
  }

  /** Removes this process's waiting file (after its work under the lock is done). */
  clearWaiting(): void {
    if (this.waitingFd === undefined) return;
    try {
      const mine = fstatSync(this.waitingFd);
      const there = lstatSync(this.waitingFile);
      if (mine.dev === there.dev && mine.ino === there.ino) unlinkSync(this.waitingFile);
    } catch {
      // already gone
    }
    closeSync(this.waitingFd);
    this.waitingFd = undefined;
  }

  /**
   * Between iterations of a run: when a valid waiter asks for the lock (a person's `runner add
   * --wait` …), lets it go, waits until that command is done (its waiting file gone, or its
   * process) — at most `timeoutMs` — and takes the lock again. A waiting file that is not a valid
   * waiter's is removed and said to be ignored.
   */
  async handOver(now: () => number, say: (notice: HandOverNotice) => void, timeoutMs = HAND_OVER_MS, pollMs = 100): Promise<boolean> {
    if (!this.held) return false;
    let exists: boolean;
    try {
      lstatSync(this.waitingFile);
      exists = true;
    } catch {
      exists = false;
    }
    if (!exists) return false;
    const problem = waiterProblem(this.waitingFile);
    if (problem !== undefined) {
      removeFile(this.waitingFile);
      say({ cause: "ignored", message: `Ignored and removed ${this.waitingFile}: ${problem}; no person's edit waits for the lock.` });
      return false;
    }
    const waiting = readLockRecord(this.waitingFile)!;
    const started = now();
    say({
      cause: "handed-over",
      message: `A person's edit waits for the lock (\`${waiting.command}\`, pid ${waiting.pid}): handed over between two iterations; waiting up to ${Math.round(timeoutMs / 60_000)} minutes for it to finish.`,
    });
    this.unlock();
    const deadline = started + timeoutMs;
    for (;;) {
      await sleep(pollMs);
      const still = readLockRecord(this.waitingFile);
      if (!still || still.pid !== waiting.pid || !holderAlive(still) || now() >= deadline) break;
    }
    // The waiting command may still be releasing the lock: take it as soon as it is free.
    await this.acquireBefore(now, deadline, pollMs);
    return true;
  }

  /** Takes the lock as soon as it is free, trying every `pollMs`; after `deadline`, refuses with the holder named; `signal` ends the wait. */
  private async acquireBefore(now: () => number, deadline: number, pollMs: number, signal?: AbortSignal): Promise<void> {
    for (;;) {
      signal?.throwIfAborted();
      try {
        await this.acquire(now);
        return;
      } catch (error) {
        if (!(error instanceof RefusalError) || now() >= deadline) throw error;
      }
      await sleep(pollMs, undefined, signal ? { signal } : undefined);
    }
  }

  /** This process's line in the lock file (and in the waiting file). */
  private record(now: () => number): string {
    const record: LockRecord = {
      pid: process.pid,
      start: processStart(process.pid),
      host: hostname(),
      command: this.command,
      since: new Date(now()).toISOString(),
    };
    return `${JSON.stringify(record)}\n`;
  }

  unlock(): void {
    if (!this.held) return;
    this.held = false;
    process.off("exit", this.release);
    try {
      if (readLockRecord(this.file)?.pid === process.pid) unlinkSync(this.file);
    } catch {
      // already gone
    }
    // Closed last: the record file never outlives the lock it describes for long.
    this.server?.close();
    this.server = undefined;
  }
}

/** The lock's record for people: written whole (a temp file renamed over it), never through a link an agent planted. */
function writeRecordFile(file: string, record: string): void {
  const temp = `${file}.${process.pid}.tmp`;
  try {
    // (exclusive: a link planted at the temp name is removed, never written through)
    removeFile(temp);
    writeFileSync(temp, record, { flag: "wx", mode: 0o644 });
    renameSync(temp, file);
  } catch {
    removeFile(temp); // a record that cannot be written only leaves people without it: the lock is the socket
  }
}

function removeFile(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // already gone
  }
}

/** The refusal that names a lock's holder (or says it is unknown). */
function heldBy(holder: LockRecord | undefined): RefusalError {
  return new RefusalError(
    holder
      ? `Another runner (${holder.command}, pid ${holder.pid}, since ${holder.since}) is working in this repository; wait for it to finish or stop it, then try again.`
      : "Another runner is working in this repository (it holds the lock, but does not say which); wait for it to finish or stop it, then try again.",
  );
}

/**
 * Asks the holder of the lock of `gitDir` over its socket, without ever binding it (a runner taking
 * the lock at that moment is never refused because of the question): `held` when something listens
 * there, with its record when it answers with one; undefined where there are no abstract sockets
 * (the lock file tells there).
 */
export function probeLock(gitDir: string, timeoutMs = ASK_HOLDER_MS): Promise<{ held: boolean; holder?: LockRecord } | undefined> {
  if (!ABSTRACT_SOCKETS) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const socket = net.connect({ path: lockAddress(gitDir) });
    const chunks: Buffer[] = [];
    let size = 0;
    let connected = false;
    const done = (holder: LockRecord | undefined) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(connected ? { held: true, ...(holder ? { holder } : {}) } : { held: false });
    };
    const timer = setTimeout(() => done(undefined), timeoutMs);
    socket.on("connect", () => {
      connected = true;
    });
    socket.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > 4096) return done(undefined); // a record is a line, not a stream
      chunks.push(chunk);
    });
    socket.on("end", () => done(parseLockRecord(Buffer.concat(chunks).toString("utf8"))));
    socket.on("error", () => done(undefined));
  });
}

/** The record of the runner holding the lock of `gitDir`, asked over its socket; undefined when none answers (or not Linux). */
export async function askHolder(gitDir: string, timeoutMs = ASK_HOLDER_MS): Promise<LockRecord | undefined> {
  return (await probeLock(gitDir, timeoutMs))?.holder;
}

/**
 * Why the waiting file does not ask for the lock on behalf of a person, or undefined when it does:
 * its record names a live process of this host and user, in this PID namespace and outside every
 * agent's containment, that holds this very file open (a file an agent wrote and left names no
 * such process; agents' processes end with their iteration).
 */
export function waiterProblem(file: string): string | undefined {
  let stat: { dev: number; ino: number; isFile(): boolean };
  try {
    stat = lstatSync(file);
  } catch {
    return "it is gone";
  }
  if (!stat.isFile()) return "it is not a regular file";
  const record = readLockRecord(file);
  if (!record) return "it holds no lock request";
  return askerProblem(record, stat, "it is not waiting");
}

/**
 * Why the process a request file names (a waiting file, a stop request: src/adapters/state/stop-request.ts)
 * is not a person asking now, or undefined when it is: a live process of this host and user, in this
 * PID namespace and outside every agent's containment, that holds the file (`file`: its device and
 * inode) open. `notHolding` says what a process that let the file go no longer does.
 */
export function askerProblem(record: LockRecord, file: { dev: number; ino: number }, notHolding: string): string | undefined {
  if (record.host !== hostname()) return `it names a process on another host (${record.host})`;
  if (!HAS_PROC) return holderAlive(record) ? undefined : `its process ${record.pid} is not running`;
  if (record.start === null || processStart(record.pid) !== record.start) return `its process ${record.pid} is not running`;
  if (ownerOf(record.pid) !== (process.getuid?.() ?? userInfo().uid)) return `its process ${record.pid} is another user's`;
  if (inOtherPidNamespace(record.pid)) return `its process ${record.pid} runs in another PID namespace`;
  const contained = containedCaller(record.pid);
  if (contained) return `its process ${record.pid} runs inside a runner's agent containment (${contained.evidence})`;
  if (!holdsOpen(record.pid, file)) return `its process ${record.pid} does not hold it open (${notHolding})`;
  return undefined;
}

function ownerOf(pid: number): number | undefined {
  try {
    const line = /^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "latin1"));
    return line ? Number(line[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** Whether process `pid` has the file (device and inode) open. */
function holdsOpen(pid: number, file: { dev: number; ino: number }): boolean {
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return false;
  }
  for (const fd of fds) {
    try {
      const open = statSync(`/proc/${pid}/fd/${fd}`);
      if (open.dev === file.dev && open.ino === file.ino) return true;
    } catch {
      // closed meanwhile
    }
  }
  return false;
}
