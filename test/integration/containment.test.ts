// Containment against real processes: a child that double-forks a setsid daemon, a runner that is
// killed with SIGKILL, pids that were reused. Every method that works on this machine is tested;
// the control tests show that without containment the same daemons do survive.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmdirSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import {
  CONTAINMENT_ENV,
  killLeftovers,
  probeContainment,
  type ContainmentMethod,
  type ContainmentRecord,
} from "../../src/adapters/process/containment.js";
import { pidMark, taggedProcesses } from "../../src/adapters/process/proc-table.js";
import { discardAheadStart, prepareAheadStart, runProcess, type ProcessRequest } from "../../src/adapters/process/process-runner.js";
import { TEST_MODULES_DIR } from "../helpers/global-setup.js";
import { RUNNER_BIN, tempDir } from "../helpers/sandbox.js";
import { scenario, type Scenario } from "../helpers/scenario.js";

const METHODS = ["cgroup", "pid-namespace", "scan"] as const;
const WORKS = new Map<ContainmentMethod, boolean>();
for (const method of METHODS) WORKS.set(method, (await probeContainment(method)).works);
const CGROUP_PARENT = (await probeContainment("cgroup")).parent;
const HAS_PROC = existsSync("/proc/self/stat");
/** util-linux 2.40 and later re-raise a SIGKILL of the program in `unshare --fork`. */
const UNSHARE_RELAYS_SIGKILL = (() => {
  const version = /(\d+)\.(\d+)/.exec(spawnSync("unshare", ["--version"], { encoding: "utf8" }).stdout ?? "");
  return version !== null && (Number(version[1]) > 2 || (Number(version[1]) === 2 && Number(version[2]) >= 40));
})();

/** Every run's record, so that whatever a failing test left is ended (by tag, never by a pid the child reported). */
const records: ContainmentRecord[] = [];
/** Host pids written by uncontained children (control tests), killed after each test. */
const hostPidFiles: string[] = [];
afterEach(async () => {
  for (const record of records.splice(0)) await killLeftovers(record);
  for (const file of hostPidFiles.splice(0)) for (const pid of pidsIn(file)) kill(pid);
});

function kill(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // gone already
  }
}

function pidsIn(file: string): number[] {
  return existsSync(file) ? [...new Set(readFileSync(file, "utf8").split("\n").filter(Boolean).map(Number))] : [];
}

/** Live processes still carrying the tag of any of the runs. */
function leftAlive(runs: ContainmentRecord[]): number[] {
  return runs.flatMap((run) => taggedProcesses({ name: CONTAINMENT_ENV, token: run.tag }));
}

function sizeOf(file: string): number {
  return existsSync(file) ? statSync(file).size : 0;
}

/** Whether `file` grows within `ms` (its writers append every 50 ms). */
async function growsWithin(file: string, ms: number): Promise<boolean> {
  const before = sizeOf(file);
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (sizeOf(file) > before) return true;
    await sleep(10);
  }
  return false;
}

/** Waits until `file` has stopped growing (a quiet 300 ms), up to `ms`; true when it did. */
async function stopsWithin(file: string, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) if (!(await growsWithin(file, 300))) return true;
  return false;
}

/**
 * Shell text that double-forks a setsid daemon appending its pid to `file` every 50 ms (stdio
 * closed, so it holds none of the runner's pipes), and returns once the daemon has written.
 */
function startDaemon(file: string): string {
  return `( setsid sh -c 'while :; do echo $$ >> "$0"; sleep 0.05; done' ${file} </dev/null >/dev/null 2>&1 & )
until [ -s ${file} ]; do sleep 0.01; done
`;
}

function request(dir: string, script: string, containment: ProcessRequest["containment"], fields: Partial<ProcessRequest> = {}): ProcessRequest {
  return {
    argv: ["bash", "-c", script],
    cwd: dir,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    deadlineMs: Date.now() + 30_000,
    logFile: path.join(dir, "logs", "out.log"),
    capBytes: 65_536,
    containment,
    onSpawn: (record) => records.push(record),
    ...fields,
  };
}

/** A runner process of its own (a small Node script calling runProcess from the build), and the record it reported. */
async function startRunner(
  dir: string,
  script: string,
  containment: string,
  exitWhen = "",
): Promise<{ runner: ChildProcess; record: ContainmentRecord | undefined }> {
  const fixture = `
    const [modulePath, script, cwd, containment, exitWhen] = process.argv.slice(1);
    const { runProcess } = await import(modulePath);
    const { existsSync, statSync } = await import("node:fs");
    // Exits (process.exit, as on an uncaught error) once the file has content.
    if (exitWhen) setInterval(() => existsSync(exitWhen) && statSync(exitWhen).size > 0 && process.exit(0), 10);
    await runProcess({
      argv: ["bash", "-c", script], cwd, env: { PATH: process.env.PATH }, deadlineMs: Date.now() + 60000,
      logFile: cwd + "/runner.log", capBytes: 65536, containment,
      onSpawn: (record) => process.stdout.write(JSON.stringify(record) + "\\n"),
    });
    process.stdout.write("done\\n");`;
  const modulePath = path.join(TEST_MODULES_DIR, "process-runner.mjs");
  const runner = spawn(process.execPath, ["--input-type=module", "-e", fixture, modulePath, script, dir, containment, exitWhen], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  if (containment === "off") return { runner, record: undefined };
  const line = await new Promise<string>((resolve, reject) => {
    let text = "";
    runner.stdout!.on("data", (chunk: Buffer) => {
      text += chunk.toString();
      if (text.includes("\n")) resolve(text.slice(0, text.indexOf("\n")));
    });
    runner.once("exit", () => reject(new Error(`the runner exited before the spawn: ${text}`)));
  });
  const record = JSON.parse(line) as ContainmentRecord;
  records.push(record);
  return { runner, record };
}

/** A new runner process's first probe of the cgroup method (it collects the cgroups of dead runners). */
async function probeInNewProcess(): Promise<void> {
  const modulePath = path.join(TEST_MODULES_DIR, "containment.mjs");
  const next = spawn(
    process.execPath,
    ["--input-type=module", "-e", `const c = await import(process.argv[1]); await c.probeContainment("cgroup");`, modulePath],
    { stdio: "inherit" },
  );
  expect(await new Promise((resolve) => next.once("exit", resolve))).toBe(0);
}

async function killRunner(runner: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => runner.once("exit", resolve));
  runner.kill("SIGKILL"); // the runner alone, not its group
  await exited;
}

describe.each(METHODS.map((method) => [method]))("containment %s", (method) => {
  const supported = WORKS.get(method) === true;

  it.skipIf(!supported)("leaves nothing running when the child exits: its double-forked setsid daemon is ended", async () => {
    const dir = tempDir();
    const daemon = path.join(dir, "daemon.out");
    const result = await runProcess(request(dir, `${startDaemon(daemon)}echo started`, method));
    expect(result).toMatchObject({ exitCode: 0, signal: undefined, containment: method, tail: "started\n" });
    expect(await growsWithin(daemon, 300)).toBe(false);
    expect(leftAlive(records)).toEqual([]);
    if (method === "cgroup") expect(existsSync(records[0]!.cgroup!)).toBe(false);
  });

  it.skipIf(!supported)("leaves nothing running after the deadline", async () => {
    const dir = tempDir();
    const daemon = path.join(dir, "daemon.out");
    const result = await runProcess(request(dir, `${startDaemon(daemon)}sleep 1000`, method, { deadlineMs: Date.now() + 1_500 }));
    expect(result).toMatchObject({ timedOut: true, signal: "SIGTERM", containment: method });
    expect(sizeOf(daemon)).toBeGreaterThan(0); // it did start before the deadline
    expect(await growsWithin(daemon, 300)).toBe(false);
  });

  it.skipIf(!supported)("leaves nothing running after an abort", async () => {
    const dir = tempDir();
    const daemon = path.join(dir, "daemon.out");
    const controller = new AbortController();
    const running = runProcess(request(dir, `${startDaemon(daemon)}sleep 1000`, method, { abortSignal: controller.signal }));
    while (sizeOf(daemon) === 0) await sleep(10);
    controller.abort();
    expect(await running).toMatchObject({ aborted: true, signal: "SIGTERM", containment: method });
    expect(await growsWithin(daemon, 300)).toBe(false);
    expect(leftAlive(records)).toEqual([]);
  });

  it.skipIf(!supported)("reports the child's own exit code and signal through the wrapper", async () => {
    const dir = tempDir();
    const run = (script: string, fields: Partial<ProcessRequest> = {}) => runProcess(request(dir, script, method, fields));
    expect(await run("exit 7")).toMatchObject({ exitCode: 7, signal: undefined, containment: method });
    expect(await run("exit 143")).toMatchObject({ exitCode: 143, signal: undefined });
    expect(await run("kill -TERM $$")).toMatchObject({ exitCode: undefined, signal: "SIGTERM" });
    const killed = await run("kill -KILL $$");
    if (method === "pid-namespace" && !UNSHARE_RELAYS_SIGKILL) {
      // util-linux < 2.40: unshare fails to re-raise SIGKILL (fixed by "unshare: don't try to reset
      // the disposition of SIGKILL"). A SIGKILL from the runner itself hits the wrapper too and is exact.
      expect(killed).toMatchObject({ exitCode: 1, signal: undefined });
      expect(killed.tail).toContain("sigprocmask unblock failed");
    } else {
      expect(killed).toMatchObject({ exitCode: undefined, signal: "SIGKILL" });
    }
    const trapped = await run("trap 'echo caught; exit 9' TERM; sleep 1000 & wait", { deadlineMs: Date.now() + 500 });
    expect(trapped).toMatchObject({ exitCode: 9, signal: undefined, timedOut: true });
    expect(trapped.tail).toBe("caught\n");
    const echoed = await runProcess(request(dir, "", method, { argv: ["cat"], input: "line one\nline two\n" }));
    expect(echoed).toMatchObject({ exitCode: 0, tail: "line one\nline two\n" });
    expect(await run("echo out; echo err >&2")).toMatchObject({ stdoutBytes: 4, stderrBytes: 4 });
    // Runs this short are where a namespace's holder could miss its death signal: none is left.
    expect(records).toHaveLength(7);
    expect(leftAlive(records)).toEqual([]);
  });

  it.skipIf(!supported)("ends the child and its daemon when the runner itself is killed with SIGKILL", async () => {
    const dir = tempDir();
    const daemon = path.join(dir, "daemon.out");
    const agent = path.join(dir, "agent.out");
    const { runner, record } = await startRunner(dir, `${startDaemon(daemon)}while :; do echo $$ >> ${agent}; sleep 0.05; done`, method);
    expect(record).toMatchObject({
      method,
      pid: expect.any(Number),
      startTime: expect.stringMatching(/^\d+$/),
      pidNamespace: expect.stringMatching(/^\d+$/),
      tag: expect.stringMatching(/^[0-9a-f]{16}$/),
    });
    while (sizeOf(agent) === 0) await sleep(10);
    await killRunner(runner);
    // The agent has PR_SET_PDEATHSIG: it dies with the runner, whatever the method.
    expect(await stopsWithin(agent, 3_000)).toBe(true);
    if (method === "pid-namespace") {
      // Its namespace's init dies with it, and the kernel ends the whole namespace.
      expect(await stopsWithin(daemon, 3_000)).toBe(true);
    } else {
      expect(await growsWithin(daemon, 3_000)).toBe(true);
      await killLeftovers(record!);
      expect(await growsWithin(daemon, 300)).toBe(false);
      if (method === "cgroup") expect(existsSync(record!.cgroup!)).toBe(false);
    }
  });

  it.skipIf(!supported)("ends the child and its daemon when the runner exits while it runs", async () => {
    const dir = tempDir();
    const daemon = path.join(dir, "daemon.out");
    const { runner } = await startRunner(dir, `${startDaemon(daemon)}sleep 1000`, method, daemon);
    const code = await new Promise((resolve) => runner.once("exit", resolve));
    expect(code).toBe(0);
    expect(await stopsWithin(daemon, 1_000)).toBe(true);
    expect(leftAlive(records)).toEqual([]);
  });
});

describe("containment cgroup", () => {
  it.skipIf(WORKS.get("cgroup") !== true)("is cleaned up by the next runner process even without the record", async () => {
    const dir = tempDir();
    const daemon = path.join(dir, "daemon.out");
    const { runner, record } = await startRunner(dir, `${startDaemon(daemon)}sleep 1000`, "cgroup");
    while (sizeOf(daemon) === 0) await sleep(10);
    await killRunner(runner);
    expect(await growsWithin(daemon, 3_000)).toBe(true);
    // A new runner process probes the cgroups once and ends those whose owner is dead.
    await probeInNewProcess();
    expect(await growsWithin(daemon, 300)).toBe(false);
    expect(existsSync(record!.cgroup!)).toBe(false);
  });

  it.skipIf(WORKS.get("cgroup") !== true)(
    "leaves the cgroups of runners in another PID namespace alone (their pids mean something else)",
    async () => {
      const parent = (await probeContainment("cgroup")).parent!;
      const namespace = /\d+/.exec(readlinkSync("/proc/self/ns/pid"))![0];
      // Two cgroups named as by a runner whose pid is dead here: one of another namespace, one of ours.
      const foreign = path.join(parent, `runner-1-999999999-1-${"ab".repeat(6)}`);
      const ours = path.join(parent, `runner-${namespace}-999999999-1-${"cd".repeat(6)}`);
      const sleepers = [foreign, ours].map((cgroup) => {
        mkdirSync(cgroup);
        const sleeper = spawn("sleep", ["1000"], { stdio: "ignore" });
        writeFileSync(path.join(cgroup, "cgroup.procs"), String(sleeper.pid));
        return { sleeper, exited: new Promise((resolve) => sleeper.once("exit", resolve)) };
      });
      try {
        await probeInNewProcess();
        await sleepers[1]!.exited;
        expect(sleepers[1]!.sleeper.signalCode).toBe("SIGKILL");
        expect(existsSync(ours)).toBe(false);
        expect(sleepers[0]!.sleeper.exitCode).toBeNull();
        expect(readFileSync(path.join(foreign, "cgroup.procs"), "utf8").trim()).toBe(String(sleepers[0]!.sleeper.pid));
      } finally {
        for (const { sleeper, exited } of sleepers) {
          sleeper.kill("SIGKILL");
          await exited;
        }
        for (const cgroup of [foreign, ours]) if (existsSync(cgroup)) rmdirSync(cgroup);
      }
    },
  );
});

// A cgroup start made ahead (the wrapper moves into its cgroup before the run, then waits for its
// program): what the program gets must be exactly what a start made at once gives it.
describe("a contained start made ahead (cgroup)", () => {
  const supported = WORKS.get("cgroup") === true;
  /** Where this process's cgroups are made. */
  const parentOf = () => CGROUP_PARENT!;
  const runBoth = async (fields: Partial<ProcessRequest>) => {
    const dir = tempDir();
    const run = () => runProcess(request(dir, "", "auto", { capBytes: 1 << 20, ...fields }));
    const cold = await run();
    prepareAheadStart();
    const warm = await run();
    return { cold, warm, coldRecord: records.at(-2)!, warmRecord: records.at(-1)! };
  };
  /** The output with the run's own tag and cgroup name left out. */
  const normal = (text: string, record: ContainmentRecord) =>
    text.replaceAll(record.tag, "<tag>").replaceAll(path.basename(record.cgroup ?? "-"), "<cgroup>");

  it.skipIf(!supported)("gives the program exactly the environment, folder, input and descriptors of a start made at once", async () => {
    const env = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      QUOTED: `it's "x"\nsecond line $HOME \`id\` \\ end`,
      EMPTY: "",
      [CONTAINMENT_ENV]: "outer",
    };
    const script = 'env -0 | sort -z | tr "\\0" "\\n"; pwd; ls /proc/self/fd; cat /proc/self/cgroup; cat; echo "exit at $$"';
    const { cold, warm, coldRecord, warmRecord } = await runBoth({ argv: ["bash", "-c", script], env, input: "the prompt\n" });
    expect(cold.exitCode).toBe(0);
    expect(warm).toMatchObject({ exitCode: 0, containment: "cgroup", spawnError: undefined });
    expect(normal(warm.tail, warmRecord).replace(/exit at \d+/, "")).toBe(normal(cold.tail, coldRecord).replace(/exit at \d+/, ""));
    expect(warm.tail).toContain(`${CONTAINMENT_ENV}=outer ${warmRecord.tag}\n`);
    expect(warm.tail).toContain("the prompt\n");
    // (a name sh cannot hold reaches the program too: sh's own `exec "$@"` of a start made at once drops it)
    prepareAheadStart();
    const dotted = await runProcess(request(tempDir(), "", "auto", { argv: ["env"], env: { ...env, "NAME.WITH-DOTS": "kept" } }));
    expect(dotted.tail).toContain("NAME.WITH-DOTS=kept\n");
    expect(warm.tail).toContain(path.basename(warmRecord.cgroup!));
    // The program is the wrapper itself (exec), so the recorded pid is the program's.
    expect(warm.tail).toContain(`exit at ${warmRecord.pid}`);
    expect(existsSync(warmRecord.cgroup!)).toBe(false);
  });

  it.skipIf(!supported)("gives a program without input /dev/null, exit codes and signals as they are, and ends what it started", async () => {
    const { warm } = await runBoth({ argv: ["bash", "-c", "readlink /proc/self/fd/0; exit 7"] });
    expect(warm).toMatchObject({ exitCode: 7, tail: "/dev/null\n", containment: "cgroup" });
    const dir = tempDir();
    const daemon = path.join(dir, "daemon.out");
    prepareAheadStart();
    expect(await runProcess(request(dir, `${startDaemon(daemon)}kill -TERM $$`, "auto"))).toMatchObject({ signal: "SIGTERM", containment: "cgroup" });
    expect(await growsWithin(daemon, 300)).toBe(false);
    expect(leftAlive(records)).toEqual([]);
  });

  it.skipIf(!supported)("is never left waiting: a run that cannot use it ends it, and so does the end of a step", async () => {
    const dir = tempDir();
    // (a cgroup's name holds its owner's pid: this process's)
    const cgroups = () => readdirSync(parentOf()).filter((name) => name.startsWith("runner-") && name.includes(`-${process.pid}-`));
    prepareAheadStart();
    await sleep(200);
    expect(cgroups()).toHaveLength(1);
    expect(await runProcess(request(dir, "echo plain", "scan"))).toMatchObject({ exitCode: 0, containment: "scan" });
    expect(cgroups()).toEqual([]);
    prepareAheadStart();
    await sleep(200);
    expect(await runProcess(request(dir, "echo off", "off"))).toMatchObject({ exitCode: 0, containment: "none" });
    expect(cgroups()).toEqual([]);
    prepareAheadStart();
    await sleep(200);
    await discardAheadStart();
    expect(cgroups()).toEqual([]);
  });

  it.skipIf(!supported)("is replaced by a start made at once when its wrapper died while it waited", async () => {
    const dir = tempDir();
    prepareAheadStart();
    await sleep(200);
    const parent = parentOf();
    const [cgroup] = readdirSync(parent).filter((name) => name.includes(`-${process.pid}-`));
    for (const pid of readFileSync(path.join(parent, cgroup!, "cgroup.procs"), "utf8")
      .split("\n")
      .filter(Boolean))
      kill(Number(pid));
    await sleep(100);
    expect(await runProcess(request(dir, "echo fine", "auto"))).toMatchObject({ exitCode: 0, tail: "fine\n", containment: "cgroup" });
    expect(existsSync(path.join(parent, cgroup!))).toBe(false);
  });
});

describe("containment scan", () => {
  it.skipIf(WORKS.get("scan") !== true)("cannot see a process that cleared its environment and left the session (a documented limit)", async () => {
    const dir = tempDir();
    const escaped = path.join(dir, "escaped.out");
    hostPidFiles.push(escaped);
    const script = `( setsid env -i sh -c 'while :; do echo $$ >> "$0"; sleep 0.05; done' ${escaped} </dev/null >/dev/null 2>&1 & )
until [ -s ${escaped} ]; do sleep 0.01; done`;
    expect(await runProcess(request(dir, script, "scan"))).toMatchObject({ exitCode: 0, containment: "scan" });
    expect(await growsWithin(escaped, 3_000)).toBe(true);
    if (WORKS.get("cgroup") !== true) return;
    // A cgroup holds it all the same.
    const held = path.join(dir, "held.out");
    await runProcess(request(dir, script.replaceAll(escaped, held), "cgroup"));
    expect(await growsWithin(held, 300)).toBe(false);
  });
});

describe("the end-of-run scan", () => {
  const tagged = (tag: string) => spawn("sleep", ["1000"], { detached: true, stdio: "ignore", env: { ...process.env, [CONTAINMENT_ENV]: tag } });

  // Where the kernel keeps no pid counter to read (no /proc/sys/kernel/ns_last_pid), the scan reads every process.
  it.skipIf(pidMark() === undefined)("reads only the processes born since the run began", async () => {
    const tag = "5ca1ab1e5ca1ab1e";
    const older = tagged(tag);
    await sleep(20);
    const since = pidMark()!;
    const newer = tagged(tag);
    await sleep(20);
    try {
      expect(taggedProcesses({ name: CONTAINMENT_ENV, token: tag, since })).toEqual([newer.pid]);
      expect(taggedProcesses({ name: CONTAINMENT_ENV, token: tag }).sort((a, b) => a - b)).toEqual([older.pid!, newer.pid!].sort((a, b) => a - b));
    } finally {
      kill(older.pid!);
      kill(newer.pid!);
    }
  });

  it.skipIf(pidMark() === undefined || process.getuid?.() !== 0)(
    "reads every process where /proc lists another PID namespace than the runner's",
    () => {
      // In a new PID namespace without a /proc of its own, ns_last_pid counts in one namespace and /proc lists another.
      const modulePath = path.join(TEST_MODULES_DIR, "proc-table.mjs");
      const probe = `const t = await import(process.argv[1]); process.stdout.write(JSON.stringify({ pid: process.pid, mark: t.pidMark() ?? null }));`;
      const inside = spawnSync("unshare", ["--pid", "--fork", process.execPath, "--input-type=module", "-e", probe, modulePath], {
        encoding: "utf8",
      });
      expect(inside.status, inside.stderr).toBe(0);
      expect(JSON.parse(inside.stdout)).toEqual({ pid: 1, mark: null });
      const outside = spawnSync(process.execPath, ["--input-type=module", "-e", probe, modulePath], { encoding: "utf8" });
      expect(JSON.parse(outside.stdout).mark).toMatchObject({ lastPid: expect.any(Number) });
    },
  );

  it.skipIf(WORKS.get("cgroup") !== true || process.getuid?.() !== 0)(
    "ends a process that moved itself out of the run's cgroup (root can): it was born during the run",
    async () => {
      const dir = tempDir();
      const moved = path.join(dir, "moved.out");
      const where = path.join(dir, "cgroup.out");
      hostPidFiles.push(moved);
      const script = `( setsid sh -c 'echo $$ > "$1/cgroup.procs"; cat /proc/self/cgroup > "$2"; while :; do echo $$ >> "$0"; sleep 0.05; done' ${moved} ${CGROUP_PARENT} ${where} </dev/null >/dev/null 2>&1 & )
until [ -s ${moved} ]; do sleep 0.01; done`;
      expect(await runProcess(request(dir, script, "cgroup"))).toMatchObject({ exitCode: 0, containment: "cgroup" });
      // It was in the runner's own cgroup, out of the run's (cgroup.kill did not reach it): the scan ended it.
      expect(readFileSync(where, "utf8")).toBe(readFileSync("/proc/self/cgroup", "utf8"));
      expect(await growsWithin(moved, 300)).toBe(false);
    },
  );
});

describe("killLeftovers", () => {
  it.skipIf(!HAS_PROC)("does not kill a process that only has the recorded pid (another start time, another PID namespace)", async () => {
    const sleeper = spawn("sleep", ["1000"], { detached: true, stdio: "ignore" });
    const pid = sleeper.pid!;
    const exited = new Promise((resolve) => sleeper.once("exit", resolve));
    try {
      const startTime = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")[19]!;
      const pidNamespace = /\d+/.exec(readlinkSync("/proc/self/ns/pid"))![0];
      const record: ContainmentRecord = { method: "scan", pid, startTime, pidNamespace, tag: "0000000000000000", cgroup: null };
      await killLeftovers({ ...record, startTime: String(Number(startTime) - 1) }, 300);
      // A pid of another PID namespace names another process too.
      await killLeftovers({ ...record, pidNamespace: "1" }, 300);
      expect(sleeper.exitCode).toBeNull();
      expect(sleeper.signalCode).toBeNull();
      process.kill(pid, 0); // still there
      // The same record with the right start time does end it (so the checks above can fail).
      await killLeftovers(record, 300);
      await exited;
      expect(sleeper.signalCode).toBe("SIGKILL");
    } finally {
      kill(pid);
    }
  });
});

describe("without containment (control: the daemons above are real)", () => {
  it.skipIf(!HAS_PROC)("a double-forked setsid daemon outlives the run", async () => {
    const dir = tempDir();
    const daemon = path.join(dir, "daemon.out");
    hostPidFiles.push(daemon);
    const result = await runProcess(request(dir, startDaemon(daemon), "off"));
    expect(result).toMatchObject({ exitCode: 0, containment: "none" });
    expect(await growsWithin(daemon, 3_000)).toBe(true);
  });

  it.skipIf(!HAS_PROC)("the child and its daemon outlive a runner killed with SIGKILL", async () => {
    const dir = tempDir();
    const daemon = path.join(dir, "daemon.out");
    const agent = path.join(dir, "agent.out");
    hostPidFiles.push(daemon, agent);
    const { runner } = await startRunner(dir, `${startDaemon(daemon)}while :; do echo $$ >> ${agent}; sleep 0.05; done`, "off");
    while (sizeOf(agent) === 0) await sleep(10);
    await killRunner(runner);
    expect(await growsWithin(agent, 3_000)).toBe(true);
    expect(await growsWithin(daemon, 3_000)).toBe(true);
  });
});

// A person's command run from inside a contained run (issue 28): refused by what the runner set up —
// the cgroup, the PID namespace, the ancestry — even when the process clears its environment.
describe.each(METHODS.map((method) => [method]))("a person's command inside containment %s", (method) => {
  const supported = WORKS.get(method) === true;
  /** A script file that tries `runner edit` in the scenario's repository, with a cleared environment, and records its exit code and stderr. */
  const editScript = (s: Scenario, dir: string, name: string): string => {
    const file = path.join(dir, `${name}.sh`);
    const env = `PATH="$PATH" RUNNER_STATE_DIR='${s.env.RUNNER_STATE_DIR}' GIT_CONFIG_GLOBAL=/dev/null GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@b`;
    writeFileSync(
      file,
      `env -i ${env} node '${RUNNER_BIN}' -C '${s.dir}' edit root --title 'From inside' 2> '${dir}/${name}.err'\necho $? > '${dir}/${name}.exit'\n`,
    );
    return file;
  };
  const outcome = (dir: string, name: string) => ({
    exit: Number(readFileSync(path.join(dir, `${name}.exit`), "utf8").trim()),
    stderr: readFileSync(path.join(dir, `${name}.err`), "utf8"),
  });

  it.skipIf(!supported)("is refused, also with a cleared environment", async () => {
    const s = await scenario();
    const dir = tempDir();
    expect(await runProcess(request(dir, `sh '${editScript(s, dir, "cleared")}'`, method))).toMatchObject({ exitCode: 0, containment: method });
    const result = outcome(dir, "cleared");
    expect(result.exit, result.stderr).toBe(1);
    expect(result.stderr).toMatch(/runs inside a runner's agent containment/);
    expect((await s.git(["log", "--format=%s", "main..HEAD"])).trim()).toBe("");
  });

  it.skipIf(!supported)(
    method === "scan"
      ? "scan only: a double-forked setsid daemon that cleared its environment is not recognised (the documented limit)"
      : "is refused in a double-forked setsid daemon that cleared its environment",
    async () => {
      const s = await scenario();
      const dir = tempDir();
      const script = `( setsid env -i PATH="$PATH" sh '${editScript(s, dir, "daemon")}' </dev/null >/dev/null 2>&1 & )\nuntil [ -s '${dir}/daemon.exit' ]; do sleep 0.05; done`;
      expect(await runProcess(request(dir, script, method))).toMatchObject({ exitCode: 0 });
      const result = outcome(dir, "daemon");
      expect(result.exit, result.stderr).toBe(method === "scan" ? 0 : 1);
    },
  );
});
