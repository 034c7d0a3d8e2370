// Reading the texts Linux keeps in /proc: a process's stat line, its environment block, its cgroup
// and the mount table. Pure: the adapters read the files, these functions only take them apart.

/** The fields of /proc/<pid>/stat that containment needs. */
export interface ProcStat {
  /** R, S, D, Z (zombie: exited, waits to be reaped), T, … */
  state: string;
  ppid: number;
  /** Process group and session ids. */
  pgrp: number;
  session: number;
  /** Clock ticks since boot when the process started (field 22): a pid plus this names one process. */
  startTime: string;
}

/** Parses a /proc/<pid>/stat line; undefined when it is not one. */
export function parseProcStat(text: string): ProcStat | undefined {
  // The command name (field 2) may hold spaces and parentheses: count the fields after the last ")".
  const close = text.lastIndexOf(")");
  if (close === -1) return undefined;
  const fields = text.slice(close + 2).split(" ");
  const [state, ppid, pgrp, session] = fields;
  const startTime = fields[19];
  if (state === undefined || ppid === undefined || pgrp === undefined || session === undefined || startTime === undefined) return undefined;
  if (!/^\d+$/.test(startTime)) return undefined;
  return { state, ppid: Number(ppid), pgrp: Number(pgrp), session: Number(session), startTime };
}

/**
 * Whether an environment block (/proc/<pid>/environ: `NAME=value` entries separated by NUL) has
 * `name` set to a space-separated list holding `token`. A runner run by another runner's agent
 * inherits that agent's tag and appends its own, so both runners find the process.
 */
export function environHasToken(environ: Buffer, name: string, token: string): boolean {
  // Cheap filter first: nearly every process on the machine lacks the token entirely.
  if (token === "" || environ.indexOf(token, 0, "latin1") === -1) return false;
  for (const entry of environ.toString("latin1").split("\0")) {
    if (
      entry.startsWith(`${name}=`) &&
      entry
        .slice(name.length + 1)
        .split(" ")
        .includes(token)
    )
      return true;
  }
  return false;
}

/** The value of a tag variable with `token` added to what the environment already had. */
export function withToken(existing: string | undefined, token: string): string {
  const tokens = (existing ?? "").split(" ").filter((part) => part !== "" && part !== token);
  return [...tokens, token].join(" ");
}

/**
 * The directory of the calling process's cgroup v2, from /proc/self/cgroup (`0::/path`) and
 * /proc/self/mountinfo (the cgroup2 mount, which may be /sys/fs/cgroup or, on hybrid systems,
 * /sys/fs/cgroup/unified). Undefined without a cgroup2 hierarchy that holds the process.
 */
export function cgroup2Dir(selfCgroup: string, mountinfo: string): string | undefined {
  const line = selfCgroup.split("\n").find((entry) => entry.startsWith("0::"));
  if (line === undefined) return undefined;
  const own = line.slice(3);
  if (!own.startsWith("/")) return undefined; // "(deleted)" and the like
  for (const mount of mountinfo.split("\n")) {
    const [left, right] = mount.split(" - ");
    if (left === undefined || right === undefined || right.split(" ")[0] !== "cgroup2") continue;
    const fields = left.split(" ");
    const root = fields[3];
    const mountPoint = fields[4];
    if (root === undefined || mountPoint === undefined) continue;
    // Inside a cgroup namespace the mount's root is "/" and the path is relative to it already.
    if (root !== "/" && own !== root && !own.startsWith(`${root}/`)) continue;
    const relative = root === "/" ? own : own.slice(root.length);
    return unescapeMountPath(mountPoint) + (relative === "/" ? "" : relative);
  }
  return undefined;
}

/** mountinfo writes space, tab, newline and backslash in paths as three-digit octal escapes. */
function unescapeMountPath(text: string): string {
  return text.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

/** The path of a process's cgroup v2 (`0::/path` of /proc/<pid>/cgroup), or undefined. */
export function cgroup2Path(procCgroup: string): string | undefined {
  const line = procCgroup.split("\n").find((entry) => entry.startsWith("0::"));
  const own = line?.slice(3);
  return own?.startsWith("/") ? own : undefined;
}

/** Whether an environment block (NUL-separated `NAME=value` entries) sets `name` to anything. */
export function environHasName(environ: Buffer, name: string): boolean {
  const entry = `${name}=`;
  for (let at = environ.indexOf(entry, 0, "latin1"); at !== -1; at = environ.indexOf(entry, at + 1, "latin1"))
    if (at === 0 || environ[at - 1] === 0) return true;
  return false;
}

/**
 * Where Linux stood in handing out process ids at one moment: the last pid given in the runner's PID
 * namespace (/proc/sys/kernel/ns_last_pid), the tasks forked since boot in every namespace (the
 * `processes` line of /proc/stat), counted just before and just after that pid was read, the tasks
 * alive (/proc/loadavg; both counts include threads) and pid_max.
 */
export interface PidMark {
  lastPid: number;
  forksBefore: number;
  forksAfter: number;
  tasks: number;
  pidMax: number;
}

/** Linux gives no pid below this once its counter has wrapped (RESERVED_PIDS). */
const RESERVED_PIDS = 300;

/** The `processes` line of /proc/stat: tasks forked since boot. */
export function parseForkCount(procStat: string): number | undefined {
  const match = /^processes (\d+)$/m.exec(procStat);
  return match ? Number(match[1]) : undefined;
}

/** The tasks alive, from /proc/loadavg (`0.42 0.91 1.15 1/82 31561`: running/total, last pid). */
export function parseTaskCount(loadavg: string): number | undefined {
  const match = /^\S+ \S+ \S+ \d+\/(\d+) \d+/.exec(loadavg);
  return match ? Number(match[1]) : undefined;
}

/**
 * The pids a process born between two marks can hold, or undefined when it can hold any.
 *
 * Linux hands out pids cyclically: a new task takes the first free pid after the last one given,
 * wrapping at pid_max to 300. So every task born between `then` and `now` in this namespace holds
 * a pid of the cyclic range (then.lastPid, now.lastPid] — unless the counter went once round, which
 * passes every pid: each one given to a task forked in between (at most the forks counted, every
 * namespace's), held by a task alive at `then` (at most its count), or below 300. Only a process
 * with CAP_SYS_ADMIN over the namespace can set the counter (or choose its own pid); such a process
 * can also leave any cgroup and clear its tag, which is outside what the scan can catch anyway.
 */
export function bornBetween(then: PidMark, now: PidMark): ((pid: number) => boolean) | undefined {
  const forks = now.forksAfter - then.forksBefore;
  const values = [then.lastPid, now.lastPid, forks, then.tasks, then.pidMax, now.pidMax];
  if (!values.every((value) => Number.isSafeInteger(value) && value >= 0)) return undefined;
  if (forks + then.tasks + RESERVED_PIDS >= Math.min(then.pidMax, now.pidMax)) return undefined;
  const from = then.lastPid;
  const to = now.lastPid;
  return to >= from ? (pid) => pid > from && pid <= to : (pid) => pid > from || pid <= to;
}
