// The process table as Linux shows it in /proc: one process's stat, the processes carrying a tag in
// their environment, and the processes of a session. Every read tolerates a process that vanishes
// between the directory listing and the read (it exited: nothing to do for it).
import { closeSync, existsSync, openSync, readdirSync, readFileSync, readlinkSync, readSync } from "node:fs";
import { environHasToken, parseProcStat, type ProcStat } from "../../core/process/proc-text.js";

/** Whether this system has a Linux /proc to read processes from. */
export const HAS_PROC = process.platform === "linux" && existsSync("/proc/self/stat");

export function procStat(pid: number): ProcStat | undefined {
  try {
    return parseProcStat(readFileSync(`/proc/${pid}/stat`, "latin1"));
  } catch {
    return undefined;
  }
}

/** The start time of a live (not zombie) process, or undefined when there is none with that pid. */
export function liveStartTime(pid: number): string | undefined {
  const stat = procStat(pid);
  return stat === undefined || stat.state === "Z" ? undefined : stat.startTime;
}

let pidNamespace: string | undefined;
/** The inode of this process's PID namespace ("pid:[4026531836]"), "0" where it cannot be read. */
export function ownPidNamespace(): string {
  if (pidNamespace === undefined) {
    try {
      pidNamespace = /\d+/.exec(readlinkSync("/proc/self/ns/pid"))?.[0] ?? "0";
    } catch {
      pidNamespace = "0";
    }
  }
  return pidNamespace;
}

function allPids(): number[] {
  const pids: number[] = [];
  for (const name of readdirSync("/proc")) {
    const pid = Number(name);
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid) pids.push(pid);
  }
  return pids;
}

export interface TagQuery {
  /** Environment variable holding space-separated tags, and the tag to look for. */
  name: string;
  token: string;
  /** Also match processes of this session (a process that cleared its environment but kept the session). */
  session?: number;
}

/**
 * Live processes whose environment carries the tag (or that belong to the session). Zombies have
 * an empty environ and are not returned: they have exited already. Another user's processes cannot
 * be read without privileges and are skipped (they could not be signalled either).
 */
export function taggedProcesses(query: TagQuery): number[] {
  if (!HAS_PROC) return [];
  const found: number[] = [];
  for (const pid of allPids()) {
    const environ = readEnviron(pid);
    if (environ !== undefined && environHasToken(environ, query.name, query.token)) {
      found.push(pid);
      continue;
    }
    if (query.session !== undefined) {
      const stat = procStat(pid);
      if (stat !== undefined && stat.state !== "Z" && stat.session === query.session) found.push(pid);
    }
  }
  return found;
}

/** Reused across reads: a scan reads every process's environment, and most are a few KB. */
let environBuffer = Buffer.alloc(64 * 1024);

/** A view of the process's environment block (valid until the next call), or undefined when unreadable. */
export function readEnviron(pid: number): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(`/proc/${pid}/environ`, "r");
  } catch {
    return undefined;
  }
  try {
    let length = 0;
    for (;;) {
      if (length === environBuffer.length) {
        const larger = Buffer.alloc(environBuffer.length * 2);
        environBuffer.copy(larger);
        environBuffer = larger;
      }
      const read = readSync(fd, environBuffer, length, environBuffer.length - length, null);
      if (read === 0) return environBuffer.subarray(0, length);
      length += read;
    }
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}
