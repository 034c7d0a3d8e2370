// Whether a process that asks something of a run is a person's: a file that asks (a stop request) can
// be planted by an agent, so the run judges the process the file names, from what the kernel says of
// it and an agent cannot undo — live (its pid and start time), of this user, on this machine, not
// inside a containment the judging runner is not in itself (an agent's cgroup, PID namespace or
// containment tag: src/adapters/containment.ts), and holding the very file open. An agent of this run
// has no process left between two iterations (containment ended them all); an agent of another run
// is inside its own run's containment. Linux only: without /proc nothing can be judged, and nothing
// is accepted.
import { readdirSync, readFileSync, readlinkSync, statSync } from "node:fs";
import { hostname } from "node:os";
import { environHas, procUids, runnerCgroupsOf } from "../core/proc-text.js";
import { CONTAINMENT_ENV } from "./containment.js";
import { HAS_PROC, liveStartTime, ownPidNamespace } from "./proc-table.js";

/** Who asks: the process named in the file. */
export interface Asker {
  pid: number;
  /** Its start time (/proc/<pid>/stat field 22) when it wrote the file. */
  start: string | null;
  host: string;
}

/** The most descriptors looked through for the file (a person's command holds a few dozen). */
const MAX_DESCRIPTORS = 4096;

/** Why the process named is not a person's, in a clause; undefined when it is one, holding `file` open. */
export function notAPerson(asker: Asker, file: string): string | undefined {
  if (!HAS_PROC) return "this system has no /proc to check the process that asks";
  if (asker.host !== hostname()) return `its process is on another host (${asker.host})`;
  const { pid } = asker;
  if (asker.start === null || liveStartTime(pid) !== asker.start) return `its process (pid ${pid}) is not running`;
  const uids = procUids(readProc(pid, "status") ?? "");
  const uid = process.getuid?.();
  if (uids === undefined || uid === undefined || uids.real !== uid || uids.effective !== uid) return `its process (pid ${pid}) is another user's`;
  const contained = containedApart(pid);
  if (contained !== undefined) return `its process (pid ${pid}) runs ${contained}`;
  if (!holdsOpen(pid, file)) return `its process (pid ${pid}) does not hold the file open`;
  return undefined;
}

function readProc(pid: number, name: string): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/${name}`, "latin1");
  } catch {
    return undefined;
  }
}

/**
 * Where the process is contained and this runner is not: a runner-made cgroup, another PID
 * namespace, a containment tag. (A runner that itself runs inside an agent — the runner's own tests
 * in its own loop — accepts processes of that same containment: they are no more contained than it.)
 */
function containedApart(pid: number): string | undefined {
  const cgroup = readProc(pid, "cgroup");
  if (cgroup === undefined) return "where it cannot be checked";
  const own = new Set(runnerCgroupsOf(readProc(process.pid, "cgroup") ?? ""));
  if (runnerCgroupsOf(cgroup).some((name) => !own.has(name))) return "inside an agent's cgroup";
  let namespace: string | undefined;
  try {
    namespace = /\d+/.exec(readlinkSync(`/proc/${pid}/ns/pid`))?.[0];
  } catch {
    namespace = undefined;
  }
  if (namespace === undefined) return "where it cannot be checked";
  if (namespace !== ownPidNamespace()) return "in another PID namespace (an agent's)";
  let environ: Buffer;
  try {
    environ = readFileSync(`/proc/${pid}/environ`);
  } catch {
    return "where it cannot be checked";
  }
  if (environHas(environ, CONTAINMENT_ENV) && !tagsWithin(environ, process.env[CONTAINMENT_ENV] ?? "")) return "inside an agent's containment";
  return undefined;
}

/** Whether every containment tag of the environment block is one of `own` (space-separated). */
function tagsWithin(environ: Buffer, own: string): boolean {
  const ownTags = new Set(own.split(" ").filter(Boolean));
  const entry = environ
    .toString("latin1")
    .split("\0")
    .find((line) => line.startsWith(`${CONTAINMENT_ENV}=`));
  const tags = (entry ?? "")
    .slice(CONTAINMENT_ENV.length + 1)
    .split(" ")
    .filter(Boolean);
  return tags.every((tag) => ownTags.has(tag));
}

/** Whether one of the process's open descriptors is `file` (the same file, not merely the same name). */
function holdsOpen(pid: number, file: string): boolean {
  let target: { dev: number; ino: number };
  try {
    const info = statSync(file);
    target = { dev: info.dev, ino: info.ino };
  } catch {
    return false;
  }
  let descriptors: string[];
  try {
    descriptors = readdirSync(`/proc/${pid}/fd`).slice(0, MAX_DESCRIPTORS);
  } catch {
    return false;
  }
  return descriptors.some((fd) => {
    try {
      const info = statSync(`/proc/${pid}/fd/${fd}`);
      return info.dev === target.dev && info.ino === target.ino;
    } catch {
      return false;
    }
  });
}
