// One runner at a time per repository (issue 6 §2): a second `runner step` / `runner run` while one
// works refuses with one sentence naming the other runner; the lock goes away with its holder; a
// lock left by a killed runner, or naming a pid that now belongs to another process, is stale and
// taken over.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runRaw, stderrLines } from "../helpers/bad-input.js";
import { scenario, subject, type Scenario } from "../helpers/scenario.js";

const LOCK = "runner.lock";
const lockFile = (s: Scenario) => path.join(s.dir, ".git", LOCK);

/** Field 22 of /proc/<pid>/stat: the process's start time in clock ticks since boot. */
function startTime(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]!;
}

async function waitFor(condition: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function writeLock(s: Scenario, record: Record<string, unknown> | string): void {
  writeFileSync(lockFile(s), typeof record === "string" ? record : `${JSON.stringify(record)}\n`);
}

const ANOTHER_RUNNER =
  /^Another runner \((runner step|runner run), pid (\d+), since [0-9T:.-]+Z\) is working in this repository; wait for it to finish or stop it, then try again\.$/;

describe.concurrent("one runner per repository", () => {
  it("a second step (and a run) while a step works refuses with one sentence naming it; the lock goes away after", async () => {
    const s = await scenario();
    s.script({ 1: { write: { "src/x.txt": "x\n" }, status: "done", sleep: 5 } });
    const first = runRaw(s.dir, ["step"], s.env);
    await waitFor(() => s.agentRan(1), "the first runner's agent to start");
    expect(existsSync(lockFile(s))).toBe(true);
    const holder = JSON.parse(readFileSync(lockFile(s), "utf8")) as { pid: number; command: string };
    expect(holder.command).toBe("runner step");

    // Both while the agent sleeps (5 s: room for two runner start-ups on a busy machine).
    const [second, run] = await Promise.all([runRaw(s.dir, ["step"], s.env), runRaw(s.dir, ["run", "--max-iterations", "1"], s.env)]);
    expect(s.agentRan(1) && !existsSync(path.join(s.scriptDir, "guard-runs.txt")), "the first runner was still in its agent").toBe(true);
    expect(second.exitCode).toBe(1);
    const lines = stderrLines(second.stderr);
    expect(lines).toHaveLength(1);
    const match = ANOTHER_RUNNER.exec(lines[0]!);
    expect(match, lines[0]).not.toBeNull();
    expect(match![1]).toBe("runner step");
    expect(Number(match![2])).toBe(holder.pid);
    expect(second.stdout).toBe("");

    expect(run.exitCode).toBe(1);
    expect(stderrLines(run.stderr)).toEqual([expect.stringMatching(ANOTHER_RUNNER)]);

    const done = await first;
    expect(done.exitCode, done.stderr).toBe(0);
    expect(Number(match![2])).toBe(done.pid);
    expect(existsSync(lockFile(s))).toBe(false);
    // Only the first runner's iteration happened, and only once.
    expect(await s.subjects()).toEqual([subject("t1", 1, "root", "execute", "pass")]);
    expect(s.agentRan(2)).toBe(false);
    expect(s.guardRuns()).toEqual([1]);
  });

  it("a lock left by a SIGKILLed runner does not block the next step", async () => {
    const s = await scenario();
    s.script({ 1: { write: { "src/x.txt": "x\n" }, status: "done" } });
    const killed = await runRaw(s.dir, ["step"], { ...s.env, RUNNER_TEST_HOOKS: "1", RUNNER_TEST_KILL_AT: "selectLeaf" });
    expect(killed.signal).toBe("SIGKILL");
    const left = JSON.parse(readFileSync(lockFile(s), "utf8")) as { pid: number };
    expect(left.pid).toBe(killed.pid);

    const next = await runRaw(s.dir, ["step"], s.env);
    expect(next.exitCode, next.stderr).toBe(0);
    expect(next.stderr).toBe("");
    expect(await s.subjects()).toEqual([subject("t1", 1, "root", "execute", "pass")]);
    expect(existsSync(lockFile(s))).toBe(false);
  });

  it("a lock naming a live pid that belongs to another process (wrong start time) is stale", async () => {
    const s = await scenario();
    s.script({ 1: { status: "retry" } });
    writeLock(s, { pid: process.pid, start: "1", host: hostname(), command: "runner step", since: "2026-01-01T00:00:00.000Z" });
    const result = await runRaw(s.dir, ["step"], s.env);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(await s.subjects()).toEqual([subject("t1", 1, "root", "decompose", "skipped")]);
    expect(existsSync(lockFile(s))).toBe(false);
  });

  it("a lock file naming a live process with its true start time, planted without a runner behind it, holds nothing: the lock is the holder's socket (issue 28)", async () => {
    const s = await scenario();
    s.script({ 1: { status: "retry" } });
    writeLock(s, { pid: process.pid, start: startTime(process.pid), host: hostname(), command: "runner run", since: "2026-01-01T00:00:00.000Z" });
    const result = await runRaw(s.dir, ["step"], s.env);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(s.agentRan(1)).toBe(true);
    expect(await s.subjects()).toEqual([subject("t1", 1, "root", "decompose", "skipped")]);
  });

  it("a half-written lock file (a runner killed while taking it) is stale", async () => {
    const s = await scenario();
    s.script({ 1: { status: "retry" } });
    writeLock(s, '{"pid": 12');
    const result = await runRaw(s.dir, ["step"], s.env);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(await s.subjects()).toEqual([subject("t1", 1, "root", "decompose", "skipped")]);
    expect(existsSync(lockFile(s))).toBe(false);
  });
});
