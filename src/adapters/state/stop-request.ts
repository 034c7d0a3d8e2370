// "Stop after the current iteration": a person's request to a `runner run` (made from `runner watch`),
// honoured between two iterations. The request is a file beside the repository lock
// (`<git dir>/runner.stop`) naming the process that asks and the runner it asks; the asking process
// holds the file open for as long as the request stands. The folder is in the agent's reach, so the
// run believes a request only when the process it names is a person's, judged as the lock's waiting
// file is (src/adapters/state/lock.ts askerProblem: live, this user's, this PID namespace, outside every
// agent's containment, holding the file open): a file an agent planted — or a request whose watch has
// quit — is removed and changes nothing. The run removes a request it honours.
import { closeSync, fstatSync, lstatSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { hostname, userInfo } from "node:os";
import path from "node:path";
import { askerProblem } from "./lock.js";
import { processStart, readLockRecord, type LockRecord } from "./lock-holder.js";
import { openSafely, readSmallAgentFile } from "../files/safe-files.js";

/** The request's file name in the git folder, beside `runner.lock`. */
export const STOP_NAME = "runner.stop";
const MAX_BYTES = 4096;

/** The asking process as a lock record names a process (pid, start, host, command, since), and whom it asks. */
interface StopRecord extends LockRecord {
  /** Who asks, for the run's last sentence. */
  user: string;
  /** The runner asked to stop: its pid and start time (a request outlives neither). */
  run_pid: number;
  run_start: string | null;
}

/** A request made, held open until it is withdrawn (or the process ends). */
export class StopRequest {
  private constructor(
    private fd: number | undefined,
    private readonly file: string,
    private readonly identity: { dev: number; ino: number },
  ) {}

  /** Asks the runner `runPid` working in the checkout whose git folder is `gitDir` to stop after its current iteration. */
  static make(gitDir: string, runPid: number, now: () => number): StopRequest {
    const file = path.join(gitDir, STOP_NAME);
    const record: StopRecord = {
      pid: process.pid,
      start: processStart(process.pid),
      host: hostname(),
      command: "runner watch",
      since: new Date(now()).toISOString(),
      user: personName(),
      run_pid: runPid,
      run_start: processStart(runPid),
    };
    // Written whole beside it and then renamed into place, the descriptor kept: a reader never sees half a request.
    const temp = path.join(gitDir, `.${STOP_NAME}.${process.pid}.tmp`);
    const fd = openSafely(temp);
    try {
      writeSync(fd, `${JSON.stringify(record)}\n`);
      renameSync(temp, file);
    } catch (error) {
      closeSync(fd);
      throw error;
    }
    const info = fstatSync(fd);
    return new StopRequest(fd, file, { dev: info.dev, ino: info.ino });
  }

  /** Whether the request is still there (the run removes the one it honours). */
  get pending(): boolean {
    return this.fd !== undefined && sameFile(this.file, this.identity);
  }

  /** Withdraws the request: the file goes (when it is still this one) and the descriptor is closed. */
  withdraw(): void {
    if (this.fd === undefined) return;
    if (sameFile(this.file, this.identity)) removeQuietly(this.file);
    closeSync(this.fd);
    this.fd = undefined;
  }
}

function sameFile(file: string, identity: { dev: number; ino: number }): boolean {
  try {
    const info = lstatSync(file);
    return info.dev === identity.dev && info.ino === identity.ino;
  } catch {
    return false;
  }
}

function personName(): string {
  try {
    return userInfo().username;
  } catch {
    return `uid ${process.getuid?.() ?? "?"}`;
  }
}

function removeQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // already gone
  }
}

/** What the run reads of a request: who asked, or why the file was not one and was removed. */
export type StopAsk = { kind: "asked"; user: string; pid: number } | { kind: "ignored"; why: string };

/**
 * Between two iterations of the run `self`: a person's request to stop, taken (its file removed), or
 * undefined when there is none. A file that is not a standing request of a person's process for this
 * runner is removed, and said why.
 */
export function takeStopRequest(gitDir: string, self: { pid: number; start: string | null }): StopAsk | undefined {
  const file = path.join(gitDir, STOP_NAME);
  let exists: boolean;
  try {
    lstatSync(file);
    exists = true;
  } catch {
    exists = false;
  }
  if (!exists) return undefined;
  const why = requestProblem(file, self);
  if (typeof why === "string") {
    removeQuietly(file);
    return { kind: "ignored", why };
  }
  removeQuietly(file);
  return { kind: "asked", user: why.user, pid: why.pid };
}

/** The request's record, or why the file is not one a person's process still holds. */
function requestProblem(file: string, self: { pid: number; start: string | null }): string | StopRecord {
  let stat: { dev: number; ino: number; isFile(): boolean };
  try {
    stat = lstatSync(file);
  } catch {
    return "it is gone";
  }
  const text = stat.isFile() ? readSmallAgentFile(file, MAX_BYTES) : undefined;
  const asker = text === undefined ? undefined : readLockRecord(file);
  if (text === undefined || asker === undefined) return "it is not a request (a small file naming a process)";
  let value: Partial<StopRecord>;
  try {
    value = JSON.parse(text) as Partial<StopRecord>;
  } catch {
    return "it is not a request (a small file naming a process)";
  }
  if (value.run_pid !== self.pid || (value.run_start ?? null) !== self.start) return "it asks another runner";
  const problem = askerProblem(asker, stat, "it no longer asks");
  if (problem !== undefined) return problem;
  return { ...asker, user: typeof value.user === "string" ? value.user.slice(0, 64) : `pid ${asker.pid}`, run_pid: self.pid, run_start: self.start };
}
