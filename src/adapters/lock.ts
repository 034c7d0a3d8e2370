// One runner at a time per repository: a lock file in the git folder (never tracked) naming the
// holder's pid and the start time of that process. A runner that was killed leaves the file behind;
// the next one sees the holder is gone (or its pid now belongs to another process) and takes over.
import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import { RefusalError } from "../errors.js";

interface LockRecord {
  pid: number;
  /** The process's start time (clock ticks since boot, /proc/<pid>/stat field 22), where known. */
  start: string | null;
  host: string;
  command: string;
  since: string;
}

/** A process's start time from /proc, or null where /proc is not available. */
function processStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses: count fields after the last ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (fields[0] === "Z") return null; // a zombie holds nothing
    return fields[19] ?? null;
  } catch {
    return null;
  }
}

function holderAlive(record: LockRecord): boolean {
  if (record.host !== hostname()) return true; // cannot check another machine's processes: assume alive
  try {
    process.kill(record.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ESRCH") return false;
  }
  const start = processStart(record.pid);
  if (record.start !== null) return start === record.start;
  return start !== null || process.platform !== "linux";
}

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
      const record: LockRecord = { pid: process.pid, start: processStart(process.pid), host: hostname(), command: this.command, since: new Date(now()).toISOString() };
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
    try {
      return JSON.parse(readFileSync(this.file, "utf8")) as LockRecord;
    } catch {
      return undefined; // half-written by a runner killed while taking it: stale
    }
  }
}
