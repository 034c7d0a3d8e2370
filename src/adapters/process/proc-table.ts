// The process table as Linux shows it in /proc: one process's stat, the processes carrying a tag in
// their environment, and the processes of a session. Every read tolerates a process that vanishes
// between the directory listing and the read (it exited: nothing to do for it).
import { closeSync, existsSync, openSync, readdirSync, readFileSync, readlinkSync, readSync } from "node:fs";
import {
  bornBetween,
  environHasToken,
  parseForkCount,
  parseProcStat,
  parseTaskCount,
  type PidMark,
  type ProcStat,
} from "../../core/process/proc-text.js";

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
  /** Only processes born since this mark (taken by this process before the run began; never one read from a file). */
  since?: PidMark;
}

let procOurs: boolean | undefined;
/**
 * Whether /proc lists the runner's own PID namespace: ns_last_pid counts in the namespace of the
 * process reading it, and a /proc mounted for another one (`unshare --pid` without a new /proc)
 * lists pids of that one.
 */
function procIsOurs(): boolean {
  if (procOurs === undefined) {
    try {
      procOurs = readlinkSync("/proc/self") === String(process.pid);
    } catch {
      procOurs = false;
    }
  }
  return procOurs;
}

/**
 * Where the pid counter stands now (PidMark), or undefined where Linux does not say
 * (/proc/sys/kernel/ns_last_pid needs a kernel built with CONFIG_CHECKPOINT_RESTORE, as distributions' are).
 */
export function pidMark(): PidMark | undefined {
  if (!HAS_PROC || !procIsOurs()) return undefined;
  try {
    // The forks counted before and after the last pid is read: between two marks, at most the
    // difference of the outer counts were forked (threads and other namespaces included).
    const forksBefore = parseForkCount(readFileSync("/proc/stat", "latin1"));
    const tasks = parseTaskCount(readFileSync("/proc/loadavg", "latin1"));
    const pidMax = Number(readFileSync("/proc/sys/kernel/pid_max", "latin1"));
    const lastPid = Number(readFileSync("/proc/sys/kernel/ns_last_pid", "latin1"));
    const forksAfter = parseForkCount(readFileSync("/proc/stat", "latin1"));
    if (forksBefore === undefined || forksAfter === undefined || tasks === undefined) return undefined;
    return { lastPid, forksBefore, forksAfter, tasks, pidMax };
  } catch {
    return undefined;
  }
}

/**
 * Live processes whose environment carries the tag (or that belong to the session), born since
 * `since` where it is given and the pid counter can tell (core/process/proc-text.ts `bornBetween`: a
 * run of a few processes reads a few environments, not every process's on the machine). Zombies have
 * an empty environ and are not returned: they have exited already. Another user's processes cannot
 * be read without privileges and are skipped (they could not be signalled either).
 */
export function taggedProcesses(query: TagQuery): number[] {
  if (!HAS_PROC) return [];
  const found: number[] = [];
  // Marked before the listing: a process forked after the mark has a parent listed (tagged, so the
  // caller scans again) or is not the run's. A mark that cannot narrow the scan leaves it whole.
  const now = query.since === undefined ? undefined : pidMark();
  const born = now === undefined ? undefined : bornBetween(query.since!, now);
  for (const pid of allPids()) {
    if (born !== undefined && !born(pid)) continue;
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
