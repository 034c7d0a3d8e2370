// `runner run` through the built binary: to completion, the stop conditions (max iterations, a stuck
// leaf, a runner error), the non-TTY and --json output, and Ctrl-C (SIGINT) mid-agent.
import { execa } from "execa";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { DONE_WHEN_SCRIPT, isAlive, scenario, subject } from "../helpers/scenario.js";
import { hasScript, node, RUNNER_BIN, tree } from "../helpers/sandbox.js";
import { PID_RECORDING_AGENT } from "../helpers/fake-agents.js";

const SUMMARY =
  /^(\d+) iterations?, (\d+) passed, (\d+) failed(?: \([^)]*\))?; time: agent (\d+\.\d)s, guard (\d+\.\d)s, runner (\d+\.\d)s \(total (\d+\.\d)s\)$/;
const ITERATION_LINE = /^Iteration (\d+): node (\S+) (decompose|execute), agent said (\w+), guard=(pass|fail|skipped); .* \(commit [0-9a-f]{7}\)/;

function lines(text: string): string[] {
  return text.split("\n").filter((line) => line.length > 0);
}

async function waitFor(file: string, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!existsSync(file)) {
    if (Date.now() > until) throw new Error(`${file} did not appear within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("runner run", () => {
  it("drives a scenario to completion: exit 0, one plain line per iteration, then the summary", async () => {
    const s = await scenario({ runId: "run-1" });
    s.script(DONE_WHEN_SCRIPT);
    const result = await s.runner(["run"]);
    expect(result.stderr).toBe("");
    expect(result.exitCode).toBe(0);
    expect(result.stdout).not.toContain("\x1b");
    const out = lines(result.stdout);
    expect(out).toHaveLength(6);
    expect(out.slice(0, 3).map((line) => ITERATION_LINE.exec(line)?.slice(1, 6))).toEqual([
      ["1", "root", "decompose", "decomposed", "skipped"],
      ["2", "a", "execute", "done", "pass"],
      ["3", "b", "execute", "done", "pass"],
    ]);
    expect(out[3]).toBe("Done: the root passes (run run-1).");
    const summary = SUMMARY.exec(out[4]!);
    expect(summary, out[4]).not.toBeNull();
    const [iterations, passed, failed, agent, guard, runnerTime, total] = summary!.slice(1).map(Number);
    expect([iterations, passed, failed]).toEqual([3, 2, 0]);
    expect(agent).toBeGreaterThan(0);
    expect(guard).toBeGreaterThan(0);
    expect(runnerTime).toBeGreaterThan(0);
    expect(Math.abs(agent! + guard! + runnerTime! - total!)).toBeLessThanOrEqual(0.2);
    expect(out[5]).toBe("Report: runner report (writes .runner/iterations/run-1/report.html)");
    expect(await s.subjects()).toEqual([
      subject("run-1", 1, "root", "decompose", "skipped"),
      subject("run-1", 2, "a", "execute", "pass"),
      subject("run-1", 3, "b", "execute", "pass"),
    ]);
    expect(s.readTree().root.passes).toBe(true);
    expect(await s.git(["status", "--porcelain"])).toBe("");
  });

  it("--max-iterations 2 stops with exit 3 and says so; `run --json` then streams only JSON lines to the end", async () => {
    const s = await scenario({ runId: "run-2" });
    s.script(DONE_WHEN_SCRIPT);
    const first = await s.runner(["run", "--max-iterations", "2"]);
    expect(first.exitCode).toBe(3);
    expect(first.stdout).toContain("Stopped early: reached max_iterations (2)");
    // Stopping early is how the run ended, not an error: said on stdout only.
    expect(first.stderr).toBe("");
    expect(lines(first.stdout).filter((line) => line.startsWith("Iteration "))).toHaveLength(2);
    expect(SUMMARY.exec(lines(first.stdout).at(-2)!)?.slice(1, 4)).toEqual(["2", "1", "0"]);
    expect(lines(first.stdout).at(-1)).toBe("Report: runner report (writes .runner/iterations/run-2/report.html)");
    expect(await s.subjects()).toHaveLength(2);
    expect(s.agentRan(3)).toBe(false);

    const second = await s.runner(["run", "--json"]);
    expect(second.stderr).toBe("");
    expect(second.exitCode).toBe(0);
    const events = lines(second.stdout).map((line) => {
      expect(() => JSON.parse(line), line).not.toThrow();
      return JSON.parse(line) as Record<string, unknown>;
    });
    for (const event of events) {
      expect(typeof event.type).toBe("string");
      expect(Number.isNaN(Date.parse(String(event.time)))).toBe(false);
    }
    const phases = events.filter((event) => event.type === "phase");
    expect(phases.map((event) => event.phase)).toEqual(["prompt", "agent", "guard", "commit"]);
    expect(phases.every((event) => event.iteration === 3 && event.node_id === "b")).toBe(true);
    const iterations = events.filter((event) => event.type === "iteration");
    expect(iterations[0]).toMatchObject({
      outcome: "committed",
      iteration: 3,
      node_id: "b",
      kind: "execute",
      agent_status: "done",
      guard_outcome: "pass",
      passes_after: true,
    });
    // The iteration that made the root pass ends the run: no step after it.
    expect(iterations).toHaveLength(1);
    expect(events.at(-1)).toMatchObject({ type: "summary", exit_code: 0, run_id: "run-2", iterations: 1, passes: 1, failures: 0 });
    const summary = events.at(-1)!;
    for (const key of ["agent_ms", "guard_ms", "runner_ms", "total_ms"]) expect(typeof summary[key], key).toBe("number");
    expect(s.readTree().root.passes).toBe(true);
  });

  it("--halt-on-stuck stops with exit 3 naming the stuck leaf, before any agent runs on it", async () => {
    const s = await scenario({
      runId: "run-3",
      tree: tree(node("root", { children: [node("a", { order: 0, max_attempts: 2 }), node("b", { order: 1 })] })),
    });
    s.script({
      1: { status: "retry", summary: "not yet" },
      2: { status: "retry", summary: "still not" },
      3: { write: { "src/a.txt": "a\n" }, status: "done" },
    });
    const result = await s.runner(["run", "--halt-on-stuck"]);
    expect(result.exitCode).toBe(3);
    expect(result.stdout).toContain("Stopped early: leaf a is stuck (2/2 attempts)");
    expect(result.stderr).toBe("");
    expect(await s.subjects()).toEqual([subject("run-3", 1, "a", "decompose", "skipped"), subject("run-3", 2, "a", "decompose", "skipped")]);
    expect(s.node("a").attempts).toBe(2);
    expect(s.agentRan(3)).toBe(false);

    // Met at the start of a run: no iteration at all.
    const head = await s.head();
    const again = await s.runner(["run", "--halt-on-stuck"]);
    expect(again.exitCode).toBe(3);
    expect(again.stdout).toMatch(/^0 iterations, 0 passed, 0 failed/m);
    expect(await s.head()).toBe(head);
    expect(s.agentRan(3)).toBe(false);
  });

  it("a runner error (an executor timeout) stops the whole run with exit 1 after its iteration was committed", async () => {
    const s = await scenario({ runId: "run-4", timeoutSeconds: 1 });
    s.script({
      // (an agent that would sleep past the test's own time limit: the run ends only because the runner killed it at its budget)
      1: { write: { "src/slow.txt": "started\n" }, status: "done", sleep: 600 },
      2: { write: { "src/a.txt": "a\n" }, status: "done" },
    });
    const result = await s.runner(["run"]);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain("did not finish within the iteration budget of 1 s");
    expect(await s.subjects()).toEqual([subject("run-4", 1, "root", "execute", "skipped")]);
    expect(s.meta(1).runner_error?.kind).toBe("executor_timeout");
    expect(s.agentRan(2)).toBe(false);
    expect(SUMMARY.exec(lines(result.stdout).at(-2)!)?.slice(1, 4)).toEqual(["1", "0", "1"]);
    expect(lines(result.stdout).at(-1)).toMatch(/^Report: runner report \(writes \.runner\/iterations\/\S+\/report\.html\)$/);
    expect(await s.git(["status", "--porcelain"])).toBe("");
    expect(await s.git(["show", "--name-only", "--format=", "HEAD"])).toContain("src/slow.txt");
  });

  it("SIGINT mid-agent kills the agent's process group, commits the iteration as a runner error, exits 1; the next run carries on", async () => {
    const s = await scenario({ runId: "run-5", executor: ["node", "wrapper.mjs"], files: { "wrapper.mjs": PID_RECORDING_AGENT } });
    s.script({
      1: {
        decompose: [
          { id: "a", order: 0 },
          { id: "b", order: 1 },
        ],
        status: "decomposed",
      },
      2: { write: { "src/a-draft.txt": "draft\n" }, status: "retry", summary: "first try" },
      3: {
        write: { "src/a-partial.txt": "half\n" },
        append: { ".runner/state/assumptions.md": "- interrupted\n" },
        spawnChild: true,
        sleep: 60,
        status: "done",
      },
      4: { write: { "src/a.txt": "a\n" }, status: "done" },
      5: { write: { "src/b.txt": "b\n" }, status: "done" },
    });
    const child = execa("node", [RUNNER_BIN, "run"], { cwd: s.dir, env: s.env, extendEnv: false, reject: false, timeout: 60_000 });
    await waitFor(path.join(s.scriptDir, "agent-child-3.pid"), 30_000);
    const agentPid = Number(readFileSync(path.join(s.scriptDir, "agent-pid-3"), "utf8"));
    const grandchildPid = s.childPid("agent", 3);
    expect(isAlive(agentPid)).toBe(true);
    expect(isAlive(grandchildPid)).toBe(true);

    child.kill("SIGINT");
    const result = await child;
    expect(result.exitCode).toBe(1);
    expect(String(result.stderr)).toContain("Stopping");
    expect(String(result.stderr)).toMatch(
      /^Iteration 3 was interrupted: the run was stopped while the agent ran; it was recorded and committed as a retry without using an attempt \(its logs: \.runner\/iterations\/run-5\/0003\/\)\. Run `runner run` or `runner step` to go on\.$/m,
    );
    expect(String(result.stderr)).not.toMatch(/fix the cause/);
    // The agent and the background child it spawned are gone.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(isAlive(agentPid)).toBe(false);
    expect(isAlive(grandchildPid)).toBe(false);

    // The interrupted iteration is committed: guard skipped, attempts unchanged, the agent's work kept.
    expect(await s.subjects()).toEqual([
      subject("run-5", 1, "root", "decompose", "skipped"),
      subject("run-5", 2, "a", "execute", "skipped"),
      subject("run-5", 3, "a", "interrupted", "skipped"),
    ]);
    const meta = s.meta(3);
    expect(meta.runner_error?.kind).toBe("interrupted");
    expect(meta.runner_error?.message).toBe("the run was stopped while the agent ran");
    expect(meta).toMatchObject({ guard_outcome: "skipped", attempts_before: 1, attempts_after: 1 });
    expect(s.node("a").attempts).toBe(1);
    expect(s.guardRuns()).toEqual([]);
    expect(await s.git(["show", "--name-only", "--format=", "HEAD"])).toContain("src/a-partial.txt");
    expect(await s.git(["status", "--porcelain"])).toBe("");
    const validate = await s.runner(["validate"]);
    expect(validate.stderr).toBe("");
    expect(validate.exitCode).toBe(0);

    const next = await s.runner(["run"]);
    expect(next.stderr).toBe("");
    expect(next.exitCode).toBe(0);
    expect((await s.subjects()).slice(3)).toEqual([subject("run-5", 4, "a", "execute", "pass"), subject("run-5", 5, "b", "execute", "pass")]);
    expect(s.readTree().root.passes).toBe(true);
    expect(await s.git(["status", "--porcelain"])).toBe("");
  });

  // Needs util-linux `script` for a pseudo-terminal; skipped where it is missing.
  it.skipIf(!hasScript())("on a terminal: a live block with run id, iteration, phase, elapsed time, node and the agent's last lines", async () => {
    const s = await scenario({ runId: "tty-1" });
    s.script({
      1: { decompose: [{ id: "a", order: 0, title: "First" }], status: "decomposed" },
      2: { write: { "src/a.txt": "a\n" }, print: "agent line one\nagent line two", status: "done", sleep: 0.6 },
    });
    const command = `stty cols 120 rows 40; exec node ${JSON.stringify(RUNNER_BIN)} run`;
    const result = await execa("script", ["-qec", command, "/dev/null"], {
      cwd: s.dir,
      env: s.env,
      extendEnv: false,
      reject: false,
      timeout: 60_000,
    });
    expect(result.exitCode).toBe(0);
    const out = String(result.stdout).replace(/\r/g, "");
    expect(out).toMatch(/▶ run tty-1 · iteration 2 · agent · \d+\.\ds · a “First”/);
    expect(out).toMatch(/▶ run tty-1 · iteration 2 · guard · /);
    expect(out).toContain("  │ agent line two");
    expect(out).toContain("\x1b[J");
    // With the cursor movements and colours removed, the finished iteration stays as one plain line.
    const withoutEscapes = out
      .split(String.fromCharCode(27))
      .map((segment, i) => (i === 0 ? segment : segment.replace(/^\[[\d;]*[AJm]/, "")))
      .join("");
    expect(withoutEscapes).toMatch(/^Iteration 2: node a execute, agent said done, guard=pass/m);
    expect(out).toMatch(/2 iterations, 1 passed, 0 failed; time: agent/);
    expect(s.readTree().root.passes).toBe(true);
  });
});
