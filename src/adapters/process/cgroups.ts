// The cgroups of contained runs (containment.ts, method "cgroup"): where they are made, how they
// are named so that a later runner can tell a dead owner's, and how they are ended and removed.
import { randomBytes } from "node:crypto";
import { accessSync, constants, existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { cgroup2Dir } from "../../core/process/proc-text.js";
import { liveStartTime, ownPidNamespace } from "./proc-table.js";

/**
 * Checked without starting a process (a probe spawn would cost every `runner step` several ms):
 * a cgroup2 hierarchy holds the runner, a cgroup can be made below the runner's own, it has
 * `cgroup.kill`, and the runner may write the `cgroup.procs` files a move needs (the target's and
 * the common ancestor's, which is the runner's own cgroup).
 */
export async function probeCgroupParent(): Promise<{ parent: string } | { reason: string }> {
  let parent: string | undefined;
  try {
    parent = cgroup2Dir(readFileSync("/proc/self/cgroup", "utf8"), readFileSync("/proc/self/mountinfo", "utf8"));
  } catch {
    parent = undefined;
  }
  if (parent === undefined) return { reason: "there is no cgroup v2 hierarchy" };
  const probe = newCgroupPath(parent);
  try {
    mkdirSync(probe);
  } catch {
    return { reason: `cannot create a cgroup in ${parent}` };
  }
  try {
    if (!existsSync(path.join(probe, "cgroup.kill"))) return { reason: "the kernel has no cgroup.kill (Linux < 5.14)" };
    if (!writable(path.join(parent, "cgroup.procs")) || !writable(path.join(probe, "cgroup.procs"))) {
      return { reason: `cannot move a process into a cgroup below ${parent}` };
    }
    await collectStaleCgroups(parent);
    return { parent };
  } finally {
    await removeCgroup(probe, Date.now() + 1_000);
  }
}

function writable(file: string): boolean {
  try {
    accessSync(file, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** A new cgroup's path: its name says who made it, so that a later runner can tell when the owner is dead. */
export function newCgroupPath(parent: string): string {
  return path.join(parent, `runner-${ownPidNamespace()}-${process.pid}-${liveStartTime(process.pid) ?? "0"}-${randomBytes(6).toString("hex")}`);
}

/**
 * `runner-<pid namespace>-<owner pid>-<owner start time>-<random>`. A pid means something only in
 * its PID namespace (a runner inside another runner's namespace shares the cgroup tree with the
 * host): cgroups of another namespace's runners are never judged.
 */
export const CGROUP_NAME = /^runner-(\d+)-(\d+)-(\d+)-[0-9a-f]{12}$/;

/** Ends and removes the cgroups of runners that died without cleaning up (their owner is gone). */
async function collectStaleCgroups(parent: string): Promise<void> {
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return;
  }
  for (const name of names) {
    const owner = CGROUP_NAME.exec(name);
    if (owner === null || owner[1] !== ownPidNamespace() || owner[1] === "0" || liveStartTime(Number(owner[2])) === owner[3]) continue;
    await killCgroup(path.join(parent, name), Date.now() + 1_000);
    await removeCgroup(path.join(parent, name), Date.now() + 1_000);
  }
}

/** True when the cgroup folder is gone. */
export function writeCgroupKill(cgroup: string): boolean {
  try {
    writeFileSync(path.join(cgroup, "cgroup.kill"), "1");
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT";
  }
}

/** Kills every process in the cgroup and waits until it is empty. */
export async function killCgroup(cgroup: string, deadline: number): Promise<void> {
  if (writeCgroupKill(cgroup)) return;
  for (let round = 0; Date.now() < deadline; round++) {
    let events: string;
    try {
      events = readFileSync(path.join(cgroup, "cgroup.events"), "utf8");
    } catch {
      return;
    }
    if (/^populated 0$/m.test(events)) return;
    await sleep(Math.min(round + 1, 10));
  }
}

/** Removes an empty cgroup; a cgroup that is emptying is busy for a moment. */
export async function removeCgroup(cgroup: string, deadline: number): Promise<void> {
  for (let round = 0; ; round++) {
    try {
      rmdirSync(cgroup);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EBUSY" || Date.now() >= deadline) return;
    }
    await sleep(Math.min(round + 1, 10));
  }
}
