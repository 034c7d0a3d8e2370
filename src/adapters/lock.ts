// One runner at a time per repository: a lock file in the git folder (never tracked) naming the
// holder's pid and the start time of that process. A runner that was killed leaves the file behind;
// the next one sees the holder is gone (or its pid now belongs to another process) and takes over.
import { closeSync, openSync, unlinkSync, writeFileSync, writeSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { hostname } from "node:os";
import { RefusalError } from "../errors.js";
import { holderAlive, type LockRecord, processStart, readLockRecord } from "./lock-holder.js";

export class RepositoryLock {
  private held = false;
  private readonly release = () => this.unlock();

  constructor(
    private readonly file: string,
    private readonly command: string,
  ) {}

  /** Takes the lock or refuses with the holder named. */
  acquire(now: () => number): void {
    for (let attempt = 0; attempt < 2; attempt++) {
      let fd: number;
      try {
        fd = openSync(this.file, "wx");
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
        const holder = this.read();
        if (holder && holderAlive(holder)) {
          throw new RefusalError(
            `Another runner (${holder.command}, pid ${holder.pid}, since ${holder.since}) is working in this repository; wait for it to finish or stop it, then try again.`,
          );
        }
        unlinkSync(this.file); // stale: its holder is gone
        continue;
      }
      writeSync(fd, this.record(now));
      closeSync(fd);
      this.held = true;
      process.once("exit", this.release);
      return;
    }
    throw new RefusalError(`Could not take the repository lock ${this.file}; remove it if no runner is working here.`);
  }

  /** The file a command waiting for the lock (`--wait`) names itself in; a run hands the lock over between iterations while it exists. */
  get waitingFile(): string {
    return `${this.file}.waiting`;
  }

  /**
   * Takes the lock, waiting for its holder: the waiting file asks a `runner run` to hand the lock
   * over between two iterations. Gives up after `timeoutMs` with the holder named.
   */
  async acquireWaiting(now: () => number, timeoutMs: number, pollMs = 200, signal?: AbortSignal): Promise<void> {
    writeFileSync(this.waitingFile, this.record(now));
    try {
      await this.acquireBefore(now, now() + timeoutMs, pollMs, signal);
    } finally {
      // (kept while the edit runs: the run waits until the lock is released and the file gone)
      if (!this.held) this.clearWaiting();
    }
  }

  /** Removes this process's waiting file (after its work under the lock is done). */
  clearWaiting(): void {
    try {
      if (readLockRecord(this.waitingFile)?.pid === process.pid) unlinkSync(this.waitingFile);
    } catch {
      // already gone
    }
  }

  /**
   * Between iterations of a run: when a live command waits for the lock (`runner add --wait` …), lets
   * it go, waits until that command is done (its waiting file gone, or its process), and takes the
   * lock again. Returns whether the lock was handed over.
   */
  async handOver(now: () => number, timeoutMs = 3_600_000, pollMs = 100): Promise<boolean> {
    const waiting = readLockRecord(this.waitingFile);
    if (!waiting || !this.held) return false;
    if (!holderAlive(waiting)) {
      try {
        unlinkSync(this.waitingFile);
      } catch {
        // already gone
      }
      return false;
    }
    this.unlock();
    const deadline = now() + timeoutMs;
    for (;;) {
      await sleep(pollMs);
      const still = readLockRecord(this.waitingFile);
      if (!still || still.pid !== waiting.pid || !holderAlive(still) || now() >= deadline) break;
    }
    // The waiting command may still be releasing the lock: take it as soon as it is free.
    await this.acquireBefore(now, deadline, pollMs);
    return true;
  }

  /**
   * Takes the lock as soon as it is free, trying every `pollMs`; after `deadline`, refuses with the
   * holder named. A `signal` that aborts (the caller gave up: an MCP client cancelled its request)
   * ends the wait with the signal's reason, the lock not taken.
   */
  private async acquireBefore(now: () => number, deadline: number, pollMs: number, signal?: AbortSignal): Promise<void> {
    for (;;) {
      signal?.throwIfAborted();
      try {
        this.acquire(now);
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
      const holder = this.read();
      if (holder?.pid === process.pid) unlinkSync(this.file);
    } catch {
      // already gone
    }
  }

  private read(): LockRecord | undefined {
    return readLockRecord(this.file);
  }
}
