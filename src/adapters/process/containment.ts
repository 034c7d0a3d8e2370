// Containment: no process started by a child (the agent, the guard) outlives the child's run —
// not a double-forked `setsid` daemon, and not when the runner itself is killed with SIGKILL.
//
// Methods, best first; the first that works on this machine is used (probed once per process):
// - "cgroup": the child enters a new cgroup v2 below the runner's own (root, or a cgroup that
//   systemd delegated to the user) before it execs the program; `cgroup.kill` ends every process
//   in it at once. Invisible to the child. Needs Linux ≥ 5.14 and a writable cgroup2 hierarchy.
// - "pid-namespace": the child's processes live in a new PID namespace (util-linux `unshare`;
//   unprivileged users through a user namespace that maps their own uid, so the uid stays). Its
//   init is a holder process that dies with the child, and the kernel then kills every process of
//   the namespace. The child sees a fresh /proc with only its own processes; without root it
//   cannot use setuid programs (sudo).
// - "scan": the child's environment carries a random tag (RUNNER_CONTAINMENT); at the end every
//   process whose /proc/<pid>/environ holds it is killed, again until none is left (a daemon may
//   fork while the scan runs); `killLeftovers` also takes the child's session. Misses a process
//   that cleared or replaced its environment and left the session, or that made itself undumpable
//   (environ unreadable) without root.
// - "process-group": no /proc (not Linux): only the child's process group, as before.
// Every method tags the environment, and the end of every run scans for the tag as well (the
// processes born since the run began, where the pid counter can tell: proc-table.ts `pidMark`).
//
// Where util-linux `setpriv` exists, the direct child gets PR_SET_PDEATHSIG=SIGKILL, so it dies
// with the runner (the signal follows the death of the thread that spawned it: call runProcess on
// the main thread); with "pid-namespace" that ends all its processes. For the others the runner's
// crash journal keeps the record given right after the spawn, and the next runner calls
// `killLeftovers(record)` before it records the interrupted iteration; cgroups whose owner died are
// also ended by the next runner process's probe.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, rmdirSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { withToken, type PidMark } from "../../core/process/proc-text.js";
import { killCgroup, newCgroupPath, probeCgroupParent, removeCgroup, writeCgroupKill } from "./cgroups.js";
import { HAS_PROC, ownPidNamespace, pidMark, procStat, taggedProcesses } from "./proc-table.js";
import { systemTool } from "./program-path.js";

export type ContainmentMethod = "cgroup" | "pid-namespace" | "scan" | "process-group";

/** Best first. */
export const CONTAINMENT_METHODS: readonly ContainmentMethod[] = ["cgroup", "pid-namespace", "scan", "process-group"];

/** The environment variable carrying the tags of the runs a process belongs to (space-separated). */
export const CONTAINMENT_ENV = "RUNNER_CONTAINMENT";

/** What the crash journal keeps of a contained run (plain JSON), for `killLeftovers`. */
export interface ContainmentRecord {
  method: ContainmentMethod;
  /** The direct child (the runner's view of the pid). */
  pid: number;
  /** /proc/<pid>/stat field 22 at the spawn: a pid that now belongs to another process is left alone. */
  startTime: string | null;
  /** The runner's PID namespace (inode): the pid is left alone by a runner in another one. */
  pidNamespace: string;
  /** The child's tag in RUNNER_CONTAINMENT. */
  tag: string;
  /** The run's cgroup folder ("cgroup" method). */
  cgroup: string | null;
}

/** A program wrapped for a contained start. */
export interface ContainedStart {
  method: ContainmentMethod;
  argv: string[];
  env: Record<string, string>;
  tag: string;
  cgroup: string | null;
  /** The pid counter before the start (proc-table.ts `pidMark`): the end of the run scans only processes born since. */
  since: PidMark | undefined;
}

interface Tools {
  sh: string | undefined;
  setpriv: string | undefined;
  unshare: string | undefined;
  sleep: string | undefined;
  env: string | undefined;
}

export interface ContainmentProbe {
  works: boolean;
  /** Why not, in one sentence. */
  reason: string;
  /** "pid-namespace": whether a user namespace is needed (not root, or root without CAP_SYS_ADMIN). */
  userNamespace?: boolean;
  /** "cgroup": the folder new cgroups are made in (the runner's own cgroup). */
  parent?: string;
}

/** Stays far beyond any run; the holder dies with the child long before. */
const HOLDER_SECONDS = "2147483647";
/** How long a probe may take before the method counts as not working. */
const PROBE_MS = 5_000;
/** Default time `killLeftovers` keeps killing and waiting before it gives up. */
const KILL_WITHIN_MS = 3_000;

// The child enters the cgroup before it execs the program, so nothing it starts can be outside.
// (sh's $0 is "runner", which names the shell in its own messages; the cgroup comes as $1)
const ENTER_CGROUP =
  'G=$1; shift; { echo $$ > "$G/cgroup.procs"; } 2>/dev/null || { echo "runner: cannot enter the cgroup $G" >&2; exit 125; }; exec "$@"';
// Run by sh after `unshare --pid` (sh itself stays outside; its next children are inside): the
// first child becomes the namespace's init, a holder that gets SIGKILL when sh — by then the exec'd
// `unshare --fork` that waits for the program — exits. That unshare is outside the namespace and
// relays the program's exit code or signal as its own, which an init could not; it forks the
// program inside, behind a /proc of the namespace. If that unshare exits before the holder has
// armed its death signal (a program that ends at once), the holder is left: the end-of-run scan
// finds it by its tag.
const PID_NAMESPACE =
  'S=$1 U=$2 Z=$3; shift 3; "$S" --pdeathsig KILL -- "$Z" ' +
  HOLDER_SECONDS +
  ' </dev/null >/dev/null 2>&1 & exec "$U" --fork --kill-child --mount-proc -- "$@"';

let toolCache: Tools | undefined;
function tools(): Tools {
  toolCache ??= {
    sh: systemTool("sh"),
    setpriv: systemTool("setpriv"),
    unshare: systemTool("unshare"),
    sleep: systemTool("sleep"),
    env: systemTool("env"),
  };
  return toolCache;
}

const probes = new Map<ContainmentMethod, Promise<ContainmentProbe>>();

/** Whether `method` works here, and why not (probed once per process). */
export function probeContainment(method: ContainmentMethod): Promise<ContainmentProbe> {
  let probe = probes.get(method);
  if (probe === undefined) {
    probe = runProbe(method);
    probes.set(method, probe);
  }
  return probe;
}

/** The best method that works here. */
export async function bestContainment(): Promise<ContainmentMethod> {
  for (const method of CONTAINMENT_METHODS) if ((await probeContainment(method)).works) return method;
  return "process-group";
}

async function runProbe(method: ContainmentMethod): Promise<ContainmentProbe> {
  const no = (reason: string): ContainmentProbe => ({ works: false, reason });
  if (method === "process-group") return { works: true, reason: "" };
  if (!HAS_PROC) return no("there is no Linux /proc");
  if (method === "scan") return { works: true, reason: "" };
  const { sh, setpriv, unshare, sleep: sleepTool } = tools();
  if (method === "cgroup") {
    if (sh === undefined) return no("there is no sh");
    const found = await probeCgroupParent();
    return "parent" in found ? { works: true, reason: "", parent: found.parent } : no(found.reason);
  }
  if (sh === undefined || setpriv === undefined || unshare === undefined || sleepTool === undefined) {
    return no("util-linux unshare and setpriv, sh and sleep are needed");
  }
  const variants = process.getuid?.() === 0 ? [false, true] : [true];
  for (const userNamespace of variants) {
    // Tagged like a run and swept after it: the holder of a run this short may miss its death signal.
    const tag = randomBytes(8).toString("hex");
    const works = await succeeds(pidNamespaceArgv(["true"], userNamespace), { [CONTAINMENT_ENV]: tag });
    await sweep(tag, undefined, Date.now() + PROBE_MS);
    if (works) return { works: true, reason: "", userNamespace };
  }
  return no(`unshare --pid${process.getuid?.() === 0 ? "" : " --user"} is not permitted here`);
}

/** Runs a probe command; true when it exits 0 in time. */
function succeeds(argv: string[], env: Record<string, string>): Promise<boolean> {
  return new Promise((resolve) => {
    const [program, ...args] = argv;
    if (program === undefined) return resolve(false);
    const child = spawn(program, args, { stdio: "ignore", env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env } });
    const timer = setTimeout(() => child.kill("SIGKILL"), PROBE_MS);
    child.once("error", () => {
      clearTimeout(timer);
      resolve(false);
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve(code === 0);
    });
  });
}

/**
 * Wraps `argv` so that its whole process tree is contained with `method` ("auto": the best that
 * works). Throws when a method that was asked for does not work here (the message says why).
 */
export async function containedStart(method: ContainmentMethod | "auto", argv: string[], env: Record<string, string>): Promise<ContainedStart> {
  const chosen = method === "auto" ? await bestContainment() : method;
  const probe = await probeContainment(chosen);
  if (!probe.works) throw new Error(`containment "${chosen}" does not work here: ${probe.reason}.`);
  const start = (wrapped: string[], cgroup: string | null = null) => newStart(chosen, wrapped, env, cgroup);
  switch (chosen) {
    case "cgroup": {
      const cgroup = makeCgroup(probe.parent!);
      // (the hierarchy changed since the probe: the next method still contains the run)
      if (cgroup === undefined) return containedStart("scan", argv, env);
      return start(withDeathSignal([tools().sh!, "-c", ENTER_CGROUP, "runner", cgroup, ...argv]), cgroup);
    }
    case "pid-namespace":
      return start(pidNamespaceArgv(argv, probe.userNamespace === true));
    case "scan":
      return start(withDeathSignal(argv));
    case "process-group":
      return start(argv);
  }
}

// A cgroup start made ahead of its program (process-runner.ts, `prepareAheadStart`). Moving a
// process into a cgroup waits for the kernel (an RCU grace period: 10–15 ms per move, measured on
// Linux 6.18 while the runner works), so the wrapper is started and moved while the runner still
// prepares the run; then it waits. When the run begins, the runner writes one line on its stdin:
// the path of a script (written by the runner in a folder only its user can enter) that sets the
// program's input, folder and whole environment and execs it — the rest of stdin is the program's.
// The wrapper exists only while no agent or guard process does (the callers' rule), and its stdin
// is a socket, which no other process can open through /proc: nothing else can give it a program.
const ENTER_CGROUP_AND_WAIT =
  'G=$1; shift; { echo $$ > "$G/cgroup.procs"; } 2>/dev/null || { echo "runner: cannot enter the cgroup $G" >&2; exit 125; }; IFS= read -r S || exit 125; . "$S"';

/** A wrapper to start now, for a program given later (`startScript`); undefined where the cgroup method is not the one used or `env` is missing. */
export async function aheadStart(): Promise<ContainedStart | undefined> {
  if ((await bestContainment()) !== "cgroup") return undefined;
  const probe = await probeContainment("cgroup");
  const { sh, env } = tools();
  if (!probe.works || sh === undefined || env === undefined) return undefined;
  const cgroup = makeCgroup(probe.parent!);
  if (cgroup === undefined) return undefined;
  // (the program's own environment comes with its start script: the wrapper's holds the tag alone)
  return newStart("cgroup", withDeathSignal([sh, "-c", ENTER_CGROUP_AND_WAIT, "runner", cgroup]), {}, cgroup);
}

/** A contained start of the wrapped `argv`: a new tag added to `env`, the pid counter marked now. */
function newStart(method: ContainmentMethod, argv: string[], env: Record<string, string>, cgroup: string | null): ContainedStart {
  const tag = randomBytes(8).toString("hex");
  return { method, argv, env: taggedEnv(env, tag), tag, cgroup, since: pidMark() };
}

/** A new cgroup under `parent`; undefined when it cannot be made (the hierarchy changed since the probe). */
function makeCgroup(parent: string): string | undefined {
  const cgroup = newCgroupPath(parent);
  try {
    mkdirSync(cgroup);
    return cgroup;
  } catch {
    return undefined;
  }
}

/** `argv` started by setpriv so that it is killed when the runner dies (where setpriv is there). */
function withDeathSignal(argv: string[]): string[] {
  const { setpriv } = tools();
  return setpriv === undefined ? argv : [setpriv, "--pdeathsig", "KILL", "--", ...argv];
}

/** `env` with the run's tag added to what RUNNER_CONTAINMENT already holds (a run started inside another keeps both). */
function taggedEnv(env: Record<string, string>, tag: string): Record<string, string> {
  return { ...env, [CONTAINMENT_ENV]: withToken(env[CONTAINMENT_ENV], tag) };
}

/**
 * The script a wrapper of `aheadStart` sources to become `argv` in `cwd` with exactly `env` (plus
 * the run's tag), stdin /dev/null unless the program gets input; undefined when `env` cannot carry
 * it (a name `env` would read as an option, a program whose name looks like an assignment).
 */
export function startScript(
  start: ContainedStart,
  argv: readonly string[],
  env: Record<string, string>,
  cwd: string,
  input: boolean,
): string | undefined {
  const envTool = tools().env;
  if (envTool === undefined || argv.length === 0 || argv[0]!.includes("=")) return undefined;
  const tagged = taggedEnv(env, start.tag);
  const names = Object.keys(tagged);
  if (names.some((name) => name === "" || name.startsWith("-") || name.includes("="))) return undefined;
  const pairs = names.map((name) => shellQuote(`${name}=${tagged[name]}`));
  return `${input ? "" : "exec </dev/null\n"}cd -- ${shellQuote(cwd)} || exit 126\nexec ${shellQuote(envTool)} -i ${pairs.join(" ")} ${argv.map(shellQuote).join(" ")}\n`;
}

/** `text` as one word of sh, whatever it holds (NUL aside, which no argument or variable can hold). */
function shellQuote(text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`;
}

function pidNamespaceArgv(argv: string[], userNamespace: boolean): string[] {
  const { sh, setpriv, unshare, sleep: sleepTool } = tools();
  // In a user namespace the capabilities kept for mounting /proc are dropped before the program runs.
  const program = userNamespace ? [setpriv!, "--inh-caps=-all", "--ambient-caps=-all", "--", ...argv] : argv;
  const namespaces = userNamespace ? ["--user", "--map-current-user", "--keep-caps", "--pid"] : ["--pid"];
  return [
    setpriv!,
    "--pdeathsig",
    "KILL",
    "--",
    unshare!,
    ...namespaces,
    "--",
    sh!,
    "-c",
    PID_NAMESPACE,
    "sh",
    setpriv!,
    unshare!,
    sleepTool!,
    ...program,
  ];
}

/** Undoes a `containedStart` whose program never started. */
export function discardStart(start: ContainedStart): void {
  if (start.cgroup === null) return;
  try {
    rmdirSync(start.cgroup);
  } catch {
    // not there, or not empty: killLeftovers of a record would remove it
  }
}

/** The record of a contained run, taken right after the spawn (the child is at worst a zombie then). */
export function containmentRecord(start: ContainedStart, pid: number): ContainmentRecord {
  return {
    method: start.method,
    pid,
    startTime: procStat(pid)?.startTime ?? null,
    pidNamespace: ownPidNamespace(),
    tag: start.tag,
    cgroup: start.cgroup,
  };
}

/**
 * Ends everything that remains of a contained run: the direct child (unless its pid now belongs to
 * another process), its process group, the cgroup, and every process carrying the run's tag (and,
 * for "scan", its session), until none is left or `withinMs` has passed. For the next runner, with
 * the record of one that was killed. Never throws.
 */
export function killLeftovers(record: ContainmentRecord, withinMs = KILL_WITHIN_MS): Promise<void> {
  return end(record, true, withinMs);
}

/**
 * `killLeftovers` once the direct child has exited, without the session: reading every process's
 * stat costs several ms, the group was just killed, and a session member outside the group that
 * also cleared its environment is rare. The tag scan stays for every method: with a PID namespace
 * it finds the holder and waits until the kernel has ended the namespace; with a cgroup it finds a
 * process that was moved out of it (root, or a user with a delegated cgroup tree, can do that).
 * With `since`, the start's own mark (never one from the journal, which the agent can write), it
 * reads only the processes born since the run began.
 */
export function endContainedRun(record: ContainmentRecord, since?: PidMark): Promise<void> {
  return end(record, false, KILL_WITHIN_MS, since);
}

async function end(record: ContainmentRecord, withSession: boolean, withinMs: number, since?: PidMark): Promise<void> {
  const deadline = Date.now() + withinMs;
  const session = killDirectChild(record);
  if (record.cgroup !== null) await killCgroup(record.cgroup, deadline);
  await sweep(record.tag, withSession ? session : undefined, deadline, since);
  if (record.cgroup !== null) await removeCgroup(record.cgroup, deadline);
}

/** Kills the processes carrying the run's tag (or in its session), again until none is left. */
async function sweep(tag: string, session: number | undefined, deadline: number, since?: PidMark): Promise<void> {
  if (!HAS_PROC) return;
  for (let round = 0; ; round++) {
    const pids = taggedProcesses({ name: CONTAINMENT_ENV, token: tag, session, since });
    if (pids.length === 0) return;
    for (const pid of pids) signal(pid, "SIGKILL");
    if (Date.now() >= deadline) return;
    // A SIGKILLed process is gone a moment after kill() returns; the next round also finds what it forked.
    await sleep(Math.min(round + 1, 10));
  }
}

/**
 * As much of `killLeftovers` as can be done synchronously, for the runner's own `exit` event: the
 * cgroup is killed but stays (the next runner removes it: its owner is dead), and the scan is
 * repeated a few times without waiting in between.
 */
export function killLeftoversNow(record: ContainmentRecord): void {
  const session = killDirectChild(record);
  if (record.cgroup !== null) writeCgroupKill(record.cgroup);
  if (!HAS_PROC || record.cgroup !== null) return;
  for (let round = 0; round < 5; round++) {
    const pids = taggedProcesses({ name: CONTAINMENT_ENV, token: record.tag, session });
    if (pids.length === 0) return;
    for (const pid of pids) signal(pid, "SIGKILL");
  }
}

/**
 * Kills the direct child and its process group when they are still this run's; returns the session
 * to sweep ("scan" and "process-group": the child made its own session when it started).
 */
function killDirectChild(record: ContainmentRecord): number | undefined {
  if (record.pidNamespace !== ownPidNamespace()) return undefined;
  const now = HAS_PROC ? procStat(record.pid)?.startTime : undefined;
  if (HAS_PROC && (record.startTime === null || (now !== undefined && now !== record.startTime))) return undefined;
  // Alive with the same start time, or gone: a group or session id is not reused while any member
  // lives, so what is left under that id is this run's.
  signal(record.pid, "SIGKILL");
  signal(-record.pid, "SIGKILL");
  return record.method === "scan" || record.method === "process-group" ? record.pid : undefined;
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // ESRCH: gone already. EPERM: not ours to end (another user's process).
  }
}
