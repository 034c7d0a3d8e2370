// The parts of `runner watch` that read what a run (and its agent) wrote, and draw it: the status
// file's fixed size and its reading as untrusted input, the journal read from where the last look
// ended (bounded, garbage skipped), the machine's states, the estimate of the time to the end, a
// frame of a 10,000-node tree within the terminal's size, and the judgement of a process that asks a
// run to stop (live, this user's, not contained, holding the request open).
import { execFileSync, spawn } from "node:child_process";
import { appendFileSync, existsSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { hostname, userInfo } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { FileTail } from "../../src/adapters/files/file-tail.js";
import { readLiveStatus } from "../../src/adapters/records/live-status.js";
import { processStart } from "../../src/adapters/state/lock-holder.js";
import { HAS_PROC } from "../../src/adapters/process/proc-table.js";
import { StopRequest, takeStopRequest, STOP_NAME } from "../../src/adapters/state/stop-request.js";
import { LIVE_STATUS_CAP, liveStatusText, parseLiveStatus, type LiveStatus } from "../../src/core/step/live-status.js";
import { estimateToEnd } from "../../src/core/step/run-estimate.js";
import type { TaskNode, TaskTree } from "../../src/core/tree/tree.js";
import type { RunSnapshot } from "../../src/cli/watch/follow.js";
import { frameText, watchFrame } from "../../src/cli/watch/frame.js";
import { followMachine, parseTransition } from "../../src/cli/watch/machine.js";
import { node, tempDir, tree } from "../helpers/sandbox.js";

function status(fields: Partial<LiveStatus> = {}): LiveStatus {
  return {
    version: 1,
    run_id: "r1",
    pid: 42,
    started_at: "2026-11-26T10:00:00.000Z",
    updated_at: "2026-11-26T10:01:00.000Z",
    state: "working",
    iteration: 3,
    node_id: "b",
    title: "File b",
    phase: "agent",
    phase_since: "2026-11-26T10:00:30.000Z",
    agent_status: null,
    lines: ["one", "two"],
    line_count: 2,
    iterations_done: 2,
    max_iterations: 50,
    passes: 1,
    failures: 1,
    usage: { tokens: 1200, cost_usd: 0.01 },
    budgets: { seconds: 3600, tokens: null, cost_usd: 5 },
    guard_tail: { iteration: 2, lines: ["FAIL: b"] },
    recent: [{ iteration: 1, ms: 60_000, passed: true }],
    log: [{ seq: 1, text: "Iteration 1: …" }],
    wait: null,
    ended: null,
    ...fields,
  };
}

describe("the status file (live.json)", () => {
  it("is written back as it was read, and never over its fixed size, however long the lines the run gives it", () => {
    const plain = status();
    expect(parseLiveStatus(liveStatusText(plain))).toEqual(plain);
    const huge = status({
      lines: Array.from({ length: 1000 }, () => "x".repeat(100_000)),
      log: Array.from({ length: 1000 }, (_, i) => ({ seq: i + 1, text: "é".repeat(50_000) })),
      title: "t".repeat(1_000_000),
      guard_tail: { iteration: 2, lines: Array.from({ length: 100 }, () => "g".repeat(10_000)) },
      ended: { exit_code: 0, reason: "r".repeat(100_000), lines: Array.from({ length: 100 }, () => "s".repeat(10_000)) },
    });
    const text = liveStatusText(huge);
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(LIVE_STATUS_CAP);
    const back = parseLiveStatus(text)!;
    expect(back.run_id).toBe("r1");
    expect(back.log.at(-1)?.seq).toBe(1000); // the newest kept
  });

  it("read back as untrusted input: garbage, wrong types, a huge file, a FIFO and a link are nothing, or only what has the right type", () => {
    expect(parseLiveStatus("not json")).toBeUndefined();
    expect(parseLiveStatus("[]")).toBeUndefined();
    expect(parseLiveStatus('{"version":2,"run_id":"r","pid":1}')).toBeUndefined();
    expect(parseLiveStatus('{"version":1,"run_id":7,"pid":1}')).toBeUndefined();
    const odd = parseLiveStatus(
      JSON.stringify({
        version: 1,
        run_id: "r",
        pid: 1,
        iteration: "3",
        lines: [1, "ok", null],
        usage: { tokens: -5 },
        recent: [{ iteration: 1, ms: "x" }],
        ended: { exit_code: 0 },
      }),
    )!;
    expect(odd.iteration).toBeNull();
    expect(odd.lines).toEqual(["ok"]);
    expect(odd.usage).toBeNull();
    expect(odd.recent).toEqual([]);
    expect(odd.ended).toEqual({ exit_code: 0, reason: "", lines: [] });

    const dir = tempDir("runner-live-");
    const big = path.join(dir, "big.json");
    writeFileSync(big, `${liveStatusText(status())}${" ".repeat(LIVE_STATUS_CAP)}`);
    expect(readLiveStatus(big)).toBeUndefined();
    const fifo = path.join(dir, "fifo.json");
    execFileSync("mkfifo", [fifo]);
    expect(readLiveStatus(fifo)).toBeUndefined();
    const link = path.join(dir, "link.json");
    writeFileSync(path.join(dir, "real.json"), liveStatusText(status()));
    symlinkSync(path.join(dir, "real.json"), link);
    expect(readLiveStatus(link)).toBeUndefined();
    expect(readLiveStatus(path.join(dir, "real.json"))?.run_id).toBe("r1");
  });
});

describe("the journal, followed", () => {
  it("gives the lines completed since the last read; far behind, only the end; a line too long, or the part of one before a skip, dropped; a file cut back, read again", () => {
    const dir = tempDir("runner-tail-");
    const file = path.join(dir, "events.jsonl");
    const tail = new FileTail(file);
    expect(tail.read()).toEqual([]);
    writeFileSync(file, "a\nb\npart");
    expect(tail.read()).toEqual(["a", "b"]);
    appendFileSync(file, "ial\nc\n");
    expect(tail.read()).toEqual(["partial", "c"]);
    appendFileSync(file, `${"z".repeat(5000)}\nd\n`);
    expect(tail.read()).toEqual(["d"]);
    appendFileSync(file, `${"garbage\n".repeat(100_000)}last\n`);
    const read = tail.read();
    expect(read.length).toBeLessThan(40_000);
    expect(read.at(-1)).toBe("last");
    writeFileSync(file, "new\n");
    expect(tail.read()).toEqual(["new"]);
  });

  it("a FIFO or a folder where the journal belongs reads as nothing, at once", () => {
    const dir = tempDir("runner-tail-");
    const folder = path.join(dir, "events.jsonl");
    mkdirSync(folder);
    expect(new FileTail(folder).read()).toEqual([]);
  });
});

describe("the machine's states", () => {
  const line = (iteration: number, from: string, to: string, second: number) =>
    JSON.stringify({ iteration, from, event: "always", to, time: `2026-11-26T10:00:${String(second).padStart(2, "0")}.000Z` });

  it("each state entered with the time spent in the one before; an actor's result (a state to itself) is no visit; a newer iteration starts anew; garbage skipped", () => {
    const { track, steps } = followMachine(undefined, [
      line(1, "(start)", "safetyCheck", 0),
      line(1, "safetyCheck", "safetyCheck", 1),
      line(1, "safetyCheck", "loadTree", 2),
      "not json",
      JSON.stringify({ iteration: "1", from: "a", to: "b", time: "x" }),
      JSON.stringify({ iteration: 1, from: "loadTree", to: "x".repeat(100), time: "2026-11-26T10:00:03.000Z" }),
      line(1, "loadTree", "selectLeaf", 5),
    ]);
    expect(track?.visits.map((visit) => visit.state)).toEqual(["safetyCheck", "loadTree", "selectLeaf"]);
    expect(steps.map((step) => [step.to, step.spentMs])).toEqual([
      ["safetyCheck", undefined],
      ["loadTree", 2000],
      ["selectLeaf", 3000],
    ]);
    const next = followMachine(track, [line(2, "(start)", "safetyCheck", 9), line(1, "selectLeaf", "buildPrompt", 10)]);
    expect(next.track?.iteration).toBe(2);
    expect(next.track?.visits.map((visit) => visit.state)).toEqual(["safetyCheck"]);
    expect(parseTransition(line(0, "a", "b", 1))).toBeUndefined();
  });
});

describe("the time to the end", () => {
  it("open leaves at the recent pace, or what max_iterations allows, whichever is first, capped by the time budget", () => {
    const recent = [
      { ms: 60_000, passed: true },
      { ms: 120_000, passed: false },
    ];
    expect(estimateToEnd({ recent, openLeaves: 3, iterationsLeft: 40, budgetMsLeft: undefined })).toEqual({
      iterations: 6,
      ms: 540_000,
      bound: "work",
    });
    expect(estimateToEnd({ recent, openLeaves: 3, iterationsLeft: 4, budgetMsLeft: undefined })).toEqual({
      iterations: 4,
      ms: 360_000,
      bound: "max_iterations",
    });
    expect(estimateToEnd({ recent, openLeaves: 3, iterationsLeft: 40, budgetMsLeft: 100_000 })).toEqual({
      iterations: 2,
      ms: 100_000,
      bound: "time budget",
    });
    expect(estimateToEnd({ recent: [{ ms: 1, passed: false }], openLeaves: 3, iterationsLeft: undefined, budgetMsLeft: undefined })).toBeUndefined();
    expect(estimateToEnd({ recent: [], openLeaves: 3, iterationsLeft: 10, budgetMsLeft: undefined })).toBeUndefined();
    expect(estimateToEnd({ recent: [], openLeaves: 0, iterationsLeft: 10, budgetMsLeft: undefined })).toEqual({
      iterations: 0,
      ms: 0,
      bound: "work",
    });
  });
});

/** A tree of about `count` nodes: 100 parents of leaves under the root. */
function bigTree(count: number): TaskTree {
  const parents: TaskNode[] = [];
  const perParent = Math.ceil(count / 100);
  for (let p = 0; p < 100; p++) {
    const children = Array.from({ length: perParent }, (_, i) =>
      node(`n${p}-${i}`, { order: i, title: `Leaf ${p}.${i} with a title long enough to be cut`, passes: p < 30 }),
    );
    parents.push(node(`p${p}`, { order: p, passes: p < 30, children }));
  }
  return tree(node("root", { children: parents }));
}

function snapshot(fields: Partial<RunSnapshot> = {}): RunSnapshot {
  return {
    runId: "r1",
    worktree: "/work/project",
    branchExists: true,
    runner: { pid: 42, start: "1", host: hostname(), command: "runner run", since: "2026-11-26T10:00:00.000Z" },
    live: status({ node_id: "n50-3" }),
    tree: bigTree(10_000),
    treeProblem: undefined,
    iterations: 2,
    usage: undefined,
    machine: { iteration: 3, visits: [{ state: "execute", at: Date.parse("2026-11-26T10:00:30.000Z") }] },
    steps: [],
    ...fields,
  };
}

describe("a frame", () => {
  it("of a 10,000-node tree fits 80×24 and 200×60 exactly, the leaf at work in sight and marked", () => {
    const run = snapshot();
    for (const [width, height] of [
      [80, 24],
      [200, 60],
    ] as const) {
      const lines = frameText(
        watchFrame(
          { mode: "one", runs: [run], selected: 0, now: Date.parse("2026-11-26T10:01:00.000Z"), message: undefined, canStop: true },
          width,
          height,
        ),
      );
      expect(lines).toHaveLength(height);
      for (const text of lines) expect(text.length, text).toBeLessThanOrEqual(width);
      expect(lines.find((text) => text.includes("← now"))).toMatch(/○ n50-3 {2}Leaf 50\.3/);
      expect(lines.join("\n")).toContain("guard red in iteration 2:");
      expect(lines.at(-1)).toBe("q quit · o report · s stop after this iteration");
      // Usage of this `runner run` against its budgets; iterations done and left.
      expect(lines.find((text) => text.startsWith("usage"))).toMatch(/^usage: tokens 1\.2k · cost \$0\.0100 of \$5\.00 · time 1m 00s of 1h 00m/);
      expect(lines.find((text) => text.startsWith("leaves"))).toMatch(
        /^leaves 3000\/10000 passed · 2 iterations done, 48 left · ≈ 48m 00s to the end/,
      );
    }
  });
});

describe.skipIf(!HAS_PROC)("a request to stop after the current iteration", () => {
  const record = (self: { pid: number; start: string | null }, asker = self) => ({
    pid: asker.pid,
    start: asker.start,
    host: hostname(),
    command: "runner watch",
    since: "now",
    user: "me",
    run_pid: self.pid,
    run_start: self.start,
  });

  it("is made whole and held open; the run takes a person's and removes it; one withdrawn is nothing", () => {
    const gitDir = tempDir("runner-stop-");
    const self = { pid: process.pid, start: processStart(process.pid) };
    const request = StopRequest.make(gitDir, process.pid, Date.now);
    expect(request.pending).toBe(true);
    expect(takeStopRequest(gitDir, self)).toEqual({ kind: "asked", user: userInfo().username, pid: process.pid });
    expect(request.pending).toBe(false);
    request.withdraw();
    expect(takeStopRequest(gitDir, self)).toBeUndefined();
    const withdrawn = StopRequest.make(gitDir, process.pid, Date.now);
    withdrawn.withdraw();
    expect(takeStopRequest(gitDir, self)).toBeUndefined();
  });

  it("for another runner, garbage, a file no process holds open, or one an agent's process holds: removed, and said why", async () => {
    const gitDir = tempDir("runner-stop-");
    const file = path.join(gitDir, STOP_NAME);
    const self = { pid: process.pid, start: processStart(process.pid) };
    const other = StopRequest.make(gitDir, 1, Date.now);
    expect(takeStopRequest(gitDir, self)).toEqual({ kind: "ignored", why: "it asks another runner" });
    other.withdraw();
    writeFileSync(file, "x".repeat(10_000));
    expect(takeStopRequest(gitDir, self)).toEqual({ kind: "ignored", why: "it is not a request (a small file naming a process)" });
    expect(existsSync(file)).toBe(false);
    // Written as the watch writes it, by a process that let it go (an agent that wrote it and ended).
    writeFileSync(file, JSON.stringify(record(self)));
    expect(takeStopRequest(gitDir, self)).toEqual({ kind: "ignored", why: `its process ${process.pid} does not hold it open (it no longer asks)` });
    // Held open by a process inside an agent's containment (its tag, set by a runner before it started).
    writeFileSync(file, "");
    const agent = spawn("sh", ["-c", `exec 3<"${file}"; sleep 30`], {
      env: { ...process.env, RUNNER_CONTAINMENT: "someonesagent" },
      stdio: "ignore",
    });
    try {
      const until = Date.now() + 30_000;
      while (!existsSync(`/proc/${agent.pid}/fd/3`) && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
      writeFileSync(file, JSON.stringify(record(self, { pid: agent.pid!, start: processStart(agent.pid!) })));
      expect(takeStopRequest(gitDir, self)).toEqual({
        kind: "ignored",
        why: `its process ${agent.pid} runs inside a runner's agent containment (process ${agent.pid})`,
      });
    } finally {
      agent.kill("SIGKILL");
    }
  });
});
