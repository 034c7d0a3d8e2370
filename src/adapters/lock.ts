// One runner at a time per repository: a lock file in the git folder (never tracked) naming the
// holder's pid and the start time of that process. A runner that was killed leaves the file behind;
// the next one sees the holder is gone (or its pid now belongs to another process) and takes over.
import { closeSync, openSync, unlinkSync, writeSync } from "node:fs";
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
      const record: LockRecord = {
        pid: process.pid,
        start: processStart(process.pid),
        host: hostname(),
        command: this.command,
        since: new Date(now()).toISOString(),
      };
      writeSync(fd, `${JSON.stringify(record)}\n`);
      closeSync(fd);
      this.held = true;
      process.once("exit", this.release);
      return;
    }
    throw new RefusalError(`Could not take the repository lock ${this.file}; remove it if no runner is working here.`);
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
