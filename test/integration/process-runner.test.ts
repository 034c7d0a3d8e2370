// runProcess against real child processes: process groups, deadlines, caps, redaction. No mocks.
import { getEventListeners } from "node:events";
import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { runProcess, type ProcessRequest } from "../../src/adapters/process/process-runner.js";
import { tempDir } from "../helpers/sandbox.js";

const CAP = 1_048_576;
const HAS_PROC = existsSync("/proc/self/stat");

/** Pids the tests started; any still alive after a test is killed so nothing outlives the suite. */
const started: number[] = [];
afterEach(() => {
  for (const pid of started.splice(0)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
});

function request(dir: string, argv: string[], fields: Partial<ProcessRequest> = {}): ProcessRequest {
  return {
    argv,
    cwd: dir,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    deadlineMs: Date.now() + 30_000,
    logFile: path.join(dir, "logs", "out.log"),
    capBytes: CAP,
    ...fields,
  };
}

function bash(dir: string, script: string, fields: Partial<ProcessRequest> = {}): ProcessRequest {
  return request(dir, ["bash", "-c", script], fields);
}

function logOf(dir: string): string {
  return readFileSync(path.join(dir, "logs", "out.log"), "utf8");
}

/**
 * Whether `pid` is a live process. A zombie counts as dead: it has exited and only waits to be
 * reaped, and the PID 1 of some sandboxes never reaps orphans, so `kill(pid, 0)` alone would lie.
 */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ESRCH") return false;
    throw error;
  }
  if (!HAS_PROC) return true;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

/**
 * The pids among `pids` still alive after up to `ms`: a SIGKILLed process runs no more code, but
 * the kernel needs a moment to tear it down after `kill()` returns.
 */
async function survivors(pids: number[], ms = 500): Promise<number[]> {
  const until = Date.now() + ms;
  while (pids.some(isAlive) && Date.now() < until) await sleep(10);
  return pids.filter(isAlive);
}

/** Reads the pids a script wrote to `file`, waiting until there are `count` of them. */
async function pidsFrom(file: string, count: number): Promise<number[]> {
  for (let i = 0; i < 200; i++) {
    const pids = existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean).map(Number) : [];
    if (pids.length >= count) {
      started.push(...pids);
      return pids;
    }
    await sleep(10);
  }
  throw new Error(`${file} never held ${count} pids`);
}

function timers(): number {
  return process.getActiveResourcesInfo().filter((kind) => kind === "Timeout").length;
}

describe("runProcess", () => {
  it("reports the exit code and streams both outputs into the log with a byte-count line", async () => {
    const dir = tempDir();
    const chunks: string[] = [];
    const before = timers();
    const result = await runProcess(
      bash(dir, 'echo "out $FOO-$HOME"; echo err >&2; exit 3', {
        env: { PATH: process.env.PATH ?? "", FOO: "bar" },
        onOutput: (chunk, stream) => chunks.push(`${stream}:${chunk}`),
      }),
    );
    expect(result).toMatchObject({ exitCode: 3, signal: undefined, timedOut: false, aborted: false, spawnError: undefined });
    expect(result.stdoutBytes).toBe("out bar-\n".length);
    expect(result.stderrBytes).toBe(4);
    expect(result.droppedBytes).toBe(0);
    expect(result.durationMs).toBeGreaterThan(0);
    expect(result.tail).toContain("out bar-\n");
    expect(result.tail).toContain("err\n");
    const log = logOf(dir);
    expect(log).toContain("out bar-\n"); // only the given environment: HOME is not inherited
    expect(log).toContain("err\n");
    expect(log.endsWith("[runner] stdout 9 bytes, stderr 4 bytes, 0 dropped over the cap of 1048576 per stream\n")).toBe(true);
    expect(chunks).toContain("stdout:out bar-\n");
    expect(chunks).toContain("stderr:err\n");
    expect(timers()).toBeLessThanOrEqual(before);
  });

  it("truncates an existing log and ends the footer on its own line", async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, "old.log"), "stale content that must disappear\n");
    const result = await runProcess(bash(dir, "printf 'no newline'", { logFile: path.join(dir, "old.log") }));
    expect(result.exitCode).toBe(0);
    expect(readFileSync(path.join(dir, "old.log"), "utf8")).toBe(
      "no newline\n[runner] stdout 10 bytes, stderr 0 bytes, 0 dropped over the cap of 1048576 per stream\n",
    );
  });

  it("writes the input to the child's stdin", async () => {
    const dir = tempDir();
    const result = await runProcess(request(dir, ["cat"], { input: "hello\nworld\n" }));
    expect(result.exitCode).toBe(0);
    expect(result.tail).toBe("hello\nworld\n");
    expect(logOf(dir)).toContain("hello\nworld\n");
  });

  it("with inputThroughPipe, gives the input through a FIFO as a shell's `|` does (Node's own stdin pipe is a socket), with the program's exit code", async () => {
    const dir = tempDir();
    const script =
      "const fs = require('fs'); const s = fs.fstatSync(0); process.stdout.write(s.isFIFO() + ' ' + s.isSocket() + ' ' + fs.readFileSync(0, 'utf8')); process.exit(3);";
    const socket = await runProcess(request(dir, [process.execPath, "-e", script], { input: "the prompt\n" }));
    expect(socket.tail).toBe("false true the prompt\n");
    for (const containment of ["auto", "off"] as const) {
      const piped = await runProcess(request(dir, [process.execPath, "-e", script], { input: "the prompt\n", inputThroughPipe: true, containment }));
      expect(piped, containment).toMatchObject({ exitCode: 3, spawnError: undefined, tail: "true false the prompt\n" });
      const missing = await runProcess(request(dir, ["nosuchprog-runner-test"], { input: "x", inputThroughPipe: true, containment }));
      expect(missing.spawnError, containment).toBe('cannot start "nosuchprog-runner-test": not found on PATH');
    }
  });

  it("gives the child an empty stdin when there is no input", async () => {
    const dir = tempDir();
    const result = await runProcess(request(dir, ["cat"]));
    expect(result.exitCode).toBe(0);
    expect(result.stdoutBytes).toBe(0);
  });

  it("survives a child that ignores a large input or stops reading it early (EPIPE)", async () => {
    const dir = tempDir();
    const input = "x".repeat(1_048_576);
    const ignoring = await runProcess(request(dir, ["true"], { input }));
    expect(ignoring).toMatchObject({ exitCode: 0, spawnError: undefined });
    const partial = await runProcess(request(dir, ["head", "-c", "10"], { input }));
    expect(partial).toMatchObject({ exitCode: 0, spawnError: undefined, stdoutBytes: 10 });
    const sleeper = await runProcess(bash(dir, "sleep 0.2; exit 4", { input }));
    expect(sleeper).toMatchObject({ exitCode: 4, spawnError: undefined });
  });

  it("resolves with a readable spawnError for a program that cannot start", async () => {
    const dir = tempDir();
    const missing = await runProcess(request(dir, ["nosuchprog-runner-test"]));
    expect(missing).toMatchObject({ exitCode: undefined, signal: undefined, spawnError: 'cannot start "nosuchprog-runner-test": not found on PATH' });
    expect(logOf(dir)).toContain('[runner] cannot start "nosuchprog-runner-test": not found on PATH');

    const script = path.join(dir, "not-executable.sh");
    writeFileSync(script, "#!/bin/sh\necho hi\n");
    chmodSync(script, 0o644);
    const denied = await runProcess(request(dir, [script]));
    expect(denied.exitCode).toBeUndefined();
    expect(denied.spawnError).toBe(`cannot start ${JSON.stringify(script)}: permission denied (not an executable file)`);

    const noCwd = await runProcess(request(dir, ["true"], { cwd: path.join(dir, "missing"), logFile: path.join(dir, "cwd.log") }));
    expect(noCwd.spawnError).toContain("working directory");
  });

  it("reports an exit by signal", async () => {
    const dir = tempDir();
    const result = await runProcess(bash(dir, "kill -TERM $$"));
    expect(result).toMatchObject({ exitCode: undefined, signal: "SIGTERM", timedOut: false, aborted: false });
  });

  it("kills the whole process group at the deadline", async () => {
    const dir = tempDir();
    const pidFile = path.join(dir, "pids");
    const before = timers();
    // (a deadline the loaded machine's bash reaches with room to spare; the group sleeps far past the
    // test's own time limit, so that the result comes back at all shows it was killed)
    const running = runProcess(
      bash(dir, `sleep 1000 & echo $! >> ${pidFile}; sleep 1000 & echo $! >> ${pidFile}; echo $$ >> ${pidFile}; wait`, {
        deadlineMs: Date.now() + 3_000,
      }),
    );
    const pids = await pidsFrom(pidFile, 3);
    expect(pids.every(isAlive)).toBe(true);
    const result = await running;
    expect(result).toMatchObject({ timedOut: true, aborted: false, exitCode: undefined, signal: "SIGTERM" });
    expect(await survivors(pids)).toEqual([]);
    expect(timers()).toBeLessThanOrEqual(before);
  });

  it("SIGKILLs a group that traps SIGTERM after the grace period", async () => {
    const dir = tempDir();
    const pidFile = path.join(dir, "pids");
    const t0 = Date.now();
    const running = runProcess(
      bash(
        dir,
        `trap 'echo caught TERM' TERM; echo $$ > ${pidFile}; trap '' TERM; sleep 1000 & echo $! >> ${pidFile}; trap 'echo caught TERM' TERM; while :; do sleep 0.05; done`,
        // (a deadline the loaded machine's bash reaches with its traps set)
        { deadlineMs: t0 + 3_000 },
      ),
    );
    const pids = await pidsFrom(pidFile, 2);
    const result = await running;
    const elapsed = Date.now() - t0;
    expect(result).toMatchObject({ timedOut: true, signal: "SIGKILL", exitCode: undefined });
    expect(logOf(dir)).toContain("caught TERM");
    expect(await survivors(pids)).toEqual([]);
    // Not before the deadline and the 2 s grace period after it (a lower bound: load only lengthens
    // it); the loop never ends, so the result shows the SIGKILL.
    expect(elapsed).toBeGreaterThanOrEqual(4_900);
  });

  it("kills what the child left behind when it exits normally, even if it holds the pipes", async () => {
    const dir = tempDir();
    const pidFile = path.join(dir, "pids");
    // With a grace period far past the test's own time limit: a result that comes back at all was not
    // kept waiting for the pipes (its leftovers were killed when it exited), whatever the machine's load.
    const result = await runProcess(
      bash(dir, `sleep 1000 & echo $! > ${pidFile}; sleep 1000 > /dev/null 2>&1 & echo $! >> ${pidFile}; echo done`, { graceMs: 3_600_000 }),
    );
    const pids = await pidsFrom(pidFile, 2);
    expect(result).toMatchObject({ exitCode: 0, timedOut: false });
    expect(result.tail).toBe("done\n");
    expect(await survivors(pids)).toEqual([]);
  });

  it("stops waiting for a process that left the group but holds the pipes", async () => {
    const dir = tempDir();
    const pidFile = path.join(dir, "pids");
    const t0 = Date.now();
    // Without containment (it would kill the escaped process at once; containment.test.ts covers that).
    const result = await runProcess(bash(dir, `setsid sleep 1000 & echo $! > ${pidFile}; sleep 0.3; echo done`, { containment: "off" }));
    const elapsed = Date.now() - t0;
    await pidsFrom(pidFile, 1); // killed by afterEach: it escaped the group on purpose
    expect(result).toMatchObject({ exitCode: 0, timedOut: false });
    expect(result.tail).toBe("done\n");
    // After the grace period (a lower bound); the escaped sleep holds the pipes for ever, so the result shows the wait ended.
    expect(elapsed).toBeGreaterThanOrEqual(2_200);
  });

  it("caps each stream and counts what was dropped", async () => {
    const dir = tempDir();
    const cap = 65_536;
    const result = await runProcess(
      bash(dir, "head -c 5000000 /dev/zero | tr '\\0' a; head -c 3000000 /dev/zero | tr '\\0' b >&2", { capBytes: cap }),
    );
    expect(result).toMatchObject({ exitCode: 0, stdoutBytes: 5_000_000, stderrBytes: 3_000_000 });
    expect(result.droppedBytes).toBe(5_000_000 - cap + 3_000_000 - cap);
    const log = logOf(dir);
    expect(statSync(path.join(dir, "logs", "out.log")).size).toBeLessThanOrEqual(2 * cap + 200);
    const output = log.slice(0, log.indexOf("\n[runner]"));
    expect(output.length).toBe(2 * cap);
    expect(output.split("a").length - 1).toBe(cap);
    expect(output.split("b").length - 1).toBe(cap);
    expect(log).toContain(`[runner] stdout 5000000 bytes, stderr 3000000 bytes, ${8_000_000 - 2 * cap} dropped over the cap of 65536 per stream`);
    expect(result.tail.length).toBeLessThanOrEqual(4_096);
    expect(result.tail.length).toBeGreaterThan(4_000);
  });

  it("keeps memory bounded while the child prints 200 MB", async () => {
    const dir = tempDir();
    const rssBefore = process.memoryUsage().rss;
    const t0 = Date.now();
    const result = await runProcess(request(dir, ["head", "-c", "200000000", "/dev/zero"], { capBytes: 65_536 }));
    const growth = process.memoryUsage().rss - rssBefore;
    console.log(`200 MB print: RSS growth ${(growth / 1e6).toFixed(1)} MB in ${Date.now() - t0} ms`);
    expect(result).toMatchObject({ exitCode: 0, stdoutBytes: 200_000_000, droppedBytes: 200_000_000 - 65_536 });
    expect(growth).toBeLessThan(100_000_000);
    expect(statSync(path.join(dir, "logs", "out.log")).size).toBeLessThan(65_536 + 200);
  }, 15_000);

  it("redacts secrets in the log, the tail and the chunks, even when split across chunks", async () => {
    const dir = tempDir();
    const chunks: string[] = [];
    const result = await runProcess(
      bash(dir, "printf 'x abc'; sleep 0.2; printf 'def y\\n'; printf 'tok' >&2; sleep 0.2; printf 'en1 z\\n' >&2; echo 'abcdef again'", {
        secrets: ["abcdef", "token1", ""],
        onOutput: (chunk) => chunks.push(chunk),
      }),
    );
    expect(result.exitCode).toBe(0);
    const log = logOf(dir);
    for (const text of [log, result.tail, chunks.join("")]) {
      expect(text).toContain("x *** y\n");
      expect(text).toContain("*** z\n");
      expect(text).toContain("*** again\n");
      expect(text).not.toContain("abc");
      expect(text).not.toContain("en1");
    }
  });

  it("kills the whole group when the abort signal fires", async () => {
    const dir = tempDir();
    const pidFile = path.join(dir, "pids");
    const controller = new AbortController();
    const running = runProcess(bash(dir, `sleep 1000 & echo $! >> ${pidFile}; echo $$ >> ${pidFile}; wait`, { abortSignal: controller.signal }));
    const pids = await pidsFrom(pidFile, 2);
    expect(pids.every(isAlive)).toBe(true);
    controller.abort();
    const result = await running;
    expect(result).toMatchObject({ aborted: true, timedOut: false, exitCode: undefined });
    expect(await survivors(pids)).toEqual([]);
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });

  it("leaves no timer or listener behind", async () => {
    const dir = tempDir();
    const controller = new AbortController();
    const exitListeners = process.listenerCount("exit");
    const before = process.getActiveResourcesInfo().filter((kind) => kind !== "TTYWrap");
    const done = await runProcess(bash(dir, "echo hi", { abortSignal: controller.signal, deadlineMs: Date.now() + 10 * 24 * 3_600_000 }));
    const late = await runProcess(bash(dir, "sleep 1000", { abortSignal: controller.signal, deadlineMs: Date.now() + 200 }));
    expect(done.exitCode).toBe(0);
    expect(late.timedOut).toBe(true);
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
    expect(process.listenerCount("exit")).toBe(exitListeners);
    await sleep(10); // Node closes a child's handle in the loop turn after its exit
    const after = process.getActiveResourcesInfo().filter((kind) => kind !== "TTYWrap");
    expect(after.filter((kind) => kind === "Timeout").length).toBeLessThanOrEqual(before.filter((kind) => kind === "Timeout").length);
    expect(after.filter((kind) => kind === "ProcessWrap")).toEqual([]);
  });

  it("never starts the process when the deadline has passed or the signal is already aborted", async () => {
    const dir = tempDir();
    const marker = path.join(dir, "marker");
    const late = await runProcess(bash(dir, `touch ${marker}`, { deadlineMs: Date.now() - 1 }));
    expect(late).toMatchObject({ timedOut: true, aborted: false, durationMs: 0, exitCode: undefined, spawnError: undefined });
    const nan = await runProcess(bash(dir, `touch ${marker}`, { deadlineMs: Number.NaN }));
    expect(nan).toMatchObject({ timedOut: true, durationMs: 0 });
    const controller = new AbortController();
    controller.abort();
    const aborted = await runProcess(bash(dir, `touch ${marker}`, { abortSignal: controller.signal }));
    expect(aborted).toMatchObject({ timedOut: false, aborted: true, durationMs: 0, exitCode: undefined });
    await sleep(100);
    expect(existsSync(marker)).toBe(false);
  });
});
