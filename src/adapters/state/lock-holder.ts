// The repository lock's file and the judgement of whether its holder still runs, shared by the lock
// itself (src/adapters/state/lock.ts, before taking over a lock) and by `runner status`/`runner log`
// (src/cli/run-in-progress.ts, to show a run in progress). Small (Node built-ins and the process
// table): `runner status` loads it on every call.
import { hostname } from "node:os";
import { liveStartTime } from "../process/proc-table.js";
import { readSmallAgentFile } from "../files/safe-files.js";

/** The lock's file name in the git folder. */
export const LOCK_NAME = "runner.lock";

export interface LockRecord {
  pid: number;
  /** The process's start time (clock ticks since boot, /proc/<pid>/stat field 22), where known. */
  start: string | null;
  host: string;
  command: string;
  since: string;
}

/** A lock record is one short JSON line: anything longer is not one. */
const MAX_RECORD_BYTES = 4096;

/**
 * The lock file's record, or undefined: none, half-written by a runner killed while taking it, or
 * something else the agent put there (read at most MAX_RECORD_BYTES, never through a link or from
 * a FIFO that would block the read).
 */
export function readLockRecord(file: string): LockRecord | undefined {
  const text = readSmallAgentFile(file, MAX_RECORD_BYTES);
  return text === undefined ? undefined : parseLockRecord(text);
}

/** A lock record's line read back (from the file, or as the holder answers over the lock's socket); undefined when it is none. */
export function parseLockRecord(text: string): LockRecord | undefined {
  try {
    const value = JSON.parse(text) as Partial<LockRecord>;
    if (typeof value.pid !== "number" || typeof value.command !== "string" || typeof value.since !== "string") return undefined;
    return {
      pid: value.pid,
      start: typeof value.start === "string" ? value.start : null,
      host: typeof value.host === "string" ? value.host : hostname(),
      command: value.command,
      since: value.since,
    };
  } catch {
    return undefined;
  }
}

/** A process's start time from /proc, or null where /proc is not available; a zombie has none. */
export function processStart(pid: number): string | null {
  return liveStartTime(pid) ?? null;
}

/** Whether the lock's holder still runs: on another host it cannot be checked and is taken as alive. */
export function holderAlive(record: LockRecord): boolean {
  if (record.host !== hostname()) return true;
  try {
    process.kill(record.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ESRCH") return false;
  }
  const start = processStart(record.pid);
  if (record.start !== null) return start === record.start;
  return start !== null || process.platform !== "linux";
}
