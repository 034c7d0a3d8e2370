// Whether a process runs inside a runner's agent (or guard) containment (src/adapters/process/containment.ts):
// a person's commands (add, edit, config, recheck, start, cleanup, …) are refused there, in this
// checkout and every other one, because whatever an agent runs — our own CLI included — is the agent
// acting (CONTRACT §4, "What an agent cannot do to a run").
//
// Known from what the runner set up and the agent cannot undo, never from an environment variable
// the process itself carries:
// - "cgroup": the process's cgroup lies below a cgroup a runner made for a contained run
//   (`runner-<ns>-<pid>-<start>-<random>`); a process cannot leave it without write access to the
//   cgroup tree above (root, or a delegated tree, can: then the next checks still hold).
// - "pid-namespace": the process's PID namespace is one a runner made; its first process is the
//   runner's holder, whose environment the runner set before the agent existed.
// - "ancestry": a process it descends from was started by a runner as a contained run (the runner's
//   tag in that ancestor's environment, which the descendant cannot rewrite). Within a PID namespace
//   an orphan is adopted by the namespace's holder, so the chain holds there; with the other methods
//   a process that double-forks away to init leaves it (docs/decisions.md says what covers that).
import { readFileSync, readlinkSync } from "node:fs";
import { cgroup2Path, environHasName, parseProcStat } from "../../core/process/proc-text.js";
import { CGROUP_NAME } from "./cgroups.js";
import { CONTAINMENT_ENV } from "./containment.js";
import { RefusalError } from "../../errors.js";
import { HAS_PROC, readEnviron } from "./proc-table.js";

export interface ContainedCaller {
  how: "cgroup" | "pid-namespace" | "ancestry";
  /** What shows it (the cgroup, or the ancestor's pid), for the sentence. */
  evidence: string;
}

/** How far up the parent chain the ancestry check looks (a contained run is a few levels up at most; 1 is init). */
const MAX_ANCESTORS = 256;

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, "latin1");
  } catch {
    return undefined;
  }
}

/**
 * Whether process `pid` (default: this one) runs inside a runner's containment, and how that is
 * known; undefined when it does not (or where there is no Linux /proc to tell).
 */
export function containedCaller(pid: number = process.pid): ContainedCaller | undefined {
  if (!HAS_PROC) return undefined;
  const cgroup = cgroup2Path(readText(`/proc/${pid}/cgroup`) ?? "");
  const made = cgroup?.split("/").find((segment) => CGROUP_NAME.test(segment));
  if (made !== undefined) return { how: "cgroup", evidence: `cgroup ${made}` };
  if (pid === process.pid && insideRunnerPidNamespace()) return { how: "pid-namespace", evidence: "its PID namespace's first process is a runner's" };
  for (let current = pid, hops = 0; current > 1 && hops < MAX_ANCESTORS; hops++) {
    const environ = readEnviron(current);
    if (environ !== undefined && environHasName(environ, CONTAINMENT_ENV)) return { how: "ancestry", evidence: `process ${current}` };
    const stat = parseProcStat(readText(`/proc/${current}/stat`) ?? "");
    if (stat === undefined) break;
    current = stat.ppid;
  }
  return undefined;
}

/**
 * Whether the first process of this process's PID namespace is a runner's holder. Only inside a
 * namespace with its own /proc (the runner mounts one) is /proc/1 that first process; on the host
 * /proc/1 is init, whose environment another user cannot read and which carries no runner tag.
 */
function insideRunnerPidNamespace(): boolean {
  try {
    if (readlinkSync("/proc/self/ns/pid") !== readlinkSync("/proc/1/ns/pid")) return false;
  } catch {
    return false;
  }
  const environ = readEnviron(1);
  return environ !== undefined && environHasName(environ, CONTAINMENT_ENV);
}

/** Whether process `pid` lives in another PID namespace than this one (so it is not a process of this machine's person as seen here). */
export function inOtherPidNamespace(pid: number): boolean {
  try {
    return readlinkSync(`/proc/${pid}/ns/pid`) !== readlinkSync("/proc/self/ns/pid");
  } catch {
    return true;
  }
}

/**
 * Refuses a person's command (`runner <verb>`) when this process runs inside a runner's agent or
 * guard containment: an agent never steers a run, its own or another's.
 */
export function refuseInsideAgentContainment(command: string): void {
  const caller = containedCaller();
  if (caller === undefined) return;
  throw new RefusalError(
    `\`${command}\` is a person's command, and this process runs inside a runner's agent containment (${caller.evidence}); an agent cannot steer a run — write what a person should change in .runner/state/questions.md or in your summary instead.`,
  );
}
