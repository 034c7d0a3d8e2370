// `runner run` through a night: a rate or usage limit is waited out (each agent's real words, through
// fake `codex` and `claude` executables; the wait shortened by RUNNER_TEST_WAIT_SCALE), the run's
// budgets (time, tokens, cost) stop it cleanly, and [hooks] are told of every iteration, a stuck
// leaf and the end, without a failing hook ever stopping the run.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { adapterRepo } from "../helpers/adapter-repo.js";
import { PROJECT_ROOT, node, runEvents, tree } from "../helpers/sandbox.js";
import { scenario } from "../helpers/scenario.js";
import { RESET_MARGIN_SECONDS } from "../../src/core/step/run-policy.js";

const SCHEMA_FILE = path.join(PROJECT_ROOT, "schemas", "agent_output", "v1.agent.json");
const LEAVES = ["a", "b", "c"];
/** Waits at a hundredth of their length: a reset a minute away takes about 0.7 s. */
const FAST_WAITS = { RUNNER_TEST_HOOKS: "1", RUNNER_TEST_WAIT_SCALE: "0.01" };

describe("a rate or usage limit: run waits for the reset and goes on", () => {
  it("Codex: “You’ve hit your usage limit … try again at <time>” — the wait until that minute, shown, then the run completes", async () => {
    const { s, fakes } = await adapterRepo("lim-codex", 'kind = "codex"');
    fakes.expect({
      codex: { sandbox: "workspace-write", overrides: [], extraArgs: [] },
      schemaFile: SCHEMA_FILE,
      leaves: LEAVES,
      limit: { calls: 1, resetInSeconds: 120 },
    });
    s.env = { ...s.env, ...FAST_WAITS };
    const before = Date.now();
    const result = await s.runner(["run", "--json"]);
    const after = Date.now();
    expect(result.stderr).toBe("");
    expect(result.exitCode).toBe(0);
    const events = runEvents(result.stdout);
    const waits = events.filter((event) => event.type === "wait");
    expect(waits).toHaveLength(1);
    expect(waits[0]).toMatchObject({ cause: "limit" });
    // Codex names the reset's minute, rounded down (here the minute of its now + 120 s): the reset is
    // the end of that minute (120–180 s after the fake's now, which lies between before and after),
    // and the wait runs to it, the margin included — bounds the machine's load cannot move.
    const reset = Date.parse((s.meta(1).limit as { resets_at: string }).resets_at);
    expect(reset).toBeGreaterThanOrEqual(before + 120_000);
    expect(reset).toBeLessThanOrEqual(after + 180_000);
    expect(Date.parse(String(waits[0]!.until)) - reset).toBeGreaterThanOrEqual(RESET_MARGIN_SECONDS * 1000);
    expect(Date.parse(String(waits[0]!.until)) - reset).toBeLessThan((RESET_MARGIN_SECONDS + 1) * 1000);
    expect(String(waits[0]!.message)).toMatch(
      /^Waiting (\d+(\.\d)? s|\d+ min \d\d s) for the agent's usage limit \(it resets at \d\d:\d\d:00\); Ctrl-C stops the run\.$/,
    );
    expect(s.meta(1).runner_error).toMatchObject({ kind: "agent_limit" });
    expect(s.meta(1)).toMatchObject({ limit: { kind: "usage" } });
    expect(s.readTree().root.passes).toBe(true);
    expect(fakes.calls()).toHaveLength(5);
  });

  it("Claude: a rejected rate_limit_event with resetsAt and a 429 result — waited out, then the run completes", async () => {
    const { s, fakes } = await adapterRepo("lim-claude", 'kind = "claude"');
    fakes.expect({
      claude: { permissionMode: "acceptEdits", allowedTools: ["Bash(node check.mjs:*)"], extraArgs: [] },
      schemaFile: SCHEMA_FILE,
      leaves: LEAVES,
      limit: { calls: 2, resetInSeconds: 30 },
    });
    s.env = { ...s.env, ...FAST_WAITS };
    const result = await s.runner(["run", "--json"]);
    expect(result.stderr).toBe("");
    expect(result.exitCode).toBe(0);
    const waits = runEvents(result.stdout).filter((event) => event.type === "wait");
    expect(waits.map((event) => event.cause)).toEqual(["limit", "limit"]);
    // Each wait runs to its reset (30 s after the fake's now), the margin included: measured from the
    // reset the run recorded, not from the clock, so however late the runner got to it under load.
    for (const [i, wait] of waits.entries()) {
      const reset = Date.parse((s.meta(i + 1).limit as { resets_at: string }).resets_at);
      expect(Date.parse(String(wait.until)) - reset).toBeGreaterThanOrEqual(RESET_MARGIN_SECONDS * 1000);
      expect(Date.parse(String(wait.until)) - reset).toBeLessThan((RESET_MARGIN_SECONDS + 1) * 1000);
      expect(wait.seconds as number).toBeLessThanOrEqual(30 + RESET_MARGIN_SECONDS + 1);
    }
    expect(s.meta(2).runner_error?.message).toMatch(/Usage limit reached/);
    expect(s.readTree().root.passes).toBe(true);
  });

  it("a reset later than [limits] max_limit_wait_seconds stops the run (exit 3), naming the reset time", async () => {
    const { s, fakes } = await adapterRepo("lim-far", 'kind = "claude"', { limits: "max_limit_wait_seconds = 600" });
    fakes.expect({
      claude: { permissionMode: "acceptEdits", allowedTools: ["Bash(node check.mjs:*)"], extraArgs: [] },
      schemaFile: SCHEMA_FILE,
      leaves: LEAVES,
      limit: { calls: 1, resetInSeconds: 3 * 3600 },
    });
    s.env = { ...s.env, ...FAST_WAITS };
    const result = await s.runner(["run"]);
    expect(result.exitCode).toBe(3);
    expect(result.stdout).toMatch(
      /^Stopped early: the agent's usage limit resets at \d{4}-\d\d-\d\dT[\d:.]+Z, beyond \[limits\] max_limit_wait_seconds \(600\); run `runner run` again once it has reset, or raise the limit\.$/m,
    );
    expect(fakes.calls()).toHaveLength(1);
  });
});

describe("budgets of one run", () => {
  it("tokens: the run stops cleanly (exit 3) once the agents' reported tokens reach [limits] max_run_tokens, and says which budget", async () => {
    const { s, fakes } = await adapterRepo("bud-tokens", 'kind = "codex"', { limits: "max_run_tokens = 5000" });
    fakes.expect({ codex: { sandbox: "workspace-write", overrides: [], extraArgs: [] }, schemaFile: SCHEMA_FILE, leaves: LEAVES });
    const result = await s.runner(["run"]);
    expect(result.exitCode).toBe(3);
    // Each fake Codex turn reports 2,410 in + 96 out: two turns reach 5,000.
    expect(result.stdout).toMatch(
      /^Stopped early: the run reached its token budget \(\[limits\] max_run_tokens = 5000\) with 5012 tokens used; raise it in \.runner\/state\/config\.toml, or run `runner run` again to go on with a fresh budget\.$/m,
    );
    expect(fakes.calls()).toHaveLength(2);
    expect(await s.git(["status", "--porcelain"])).toBe("");
  });

  it("cost: Claude gets what is left as --max-budget-usd; the run stops when the cost reaches [limits] max_run_cost_usd", async () => {
    const { s, fakes } = await adapterRepo("bud-cost", 'kind = "claude"', { limits: "max_run_cost_usd = 0.025" });
    fakes.expect({
      claude: { permissionMode: "acceptEdits", allowedTools: ["Bash(node check.mjs:*)"], extraArgs: [], anyBudget: true },
      schemaFile: SCHEMA_FILE,
      leaves: LEAVES,
    });
    const result = await s.runner(["run"]);
    expect(result.exitCode).toBe(3);
    expect(result.stdout).toMatch(/Stopped early: the run reached its cost budget \(\[limits\] max_run_cost_usd = 0\.025\) with \$0\.03 spent/);
    // Each fake Claude session costs $0.01.
    const budgets = fakes.calls().map((call) => call.argv[call.argv.indexOf("--max-budget-usd") + 1]);
    expect(budgets).toEqual(["0.02", "0.01", "0.01"]);
  });

  it("time: the run stops between iterations once [limits] max_run_seconds has passed", async () => {
    const s = await scenario({
      runId: "bud-time",
      tree: tree(node("root", { children: [node("a"), node("b", { order: 1 })] })),
      limits: "max_run_seconds = 1",
    });
    s.script({ 1: { write: { "src/a.txt": "a\n" }, status: "done", sleep: 1.2 }, 2: { write: { "src/b.txt": "b\n" }, status: "done" } });
    const result = await s.runner(["run"]);
    expect(result.exitCode).toBe(3);
    expect(result.stdout).toMatch(/^Stopped early: the run reached its time budget \(\[limits\] max_run_seconds = 1\) after \d+(\.\d)? s;/m);
    expect(s.agentRan(2)).toBe(false);
  });
});

describe("[hooks]", () => {
  const HOOK = String.raw`import { appendFileSync, readFileSync } from "node:fs";
const event = readFileSync(0, "utf8");
appendFileSync(process.env.HOOK_OUT, JSON.stringify({ hook: process.env.RUNNER_HOOK, event: JSON.parse(event) }) + "\n");
if (process.argv[2] === "fail") { process.stderr.write("the webhook said no\n"); process.exit(7); }
if (process.argv[2] === "hang") await new Promise((resolve) => setTimeout(resolve, 60_000));
`;

  it("on_iteration, on_stuck and on_run_end get the run's events as one JSON line on stdin (the shape of run --json); a failing or hanging hook is logged, warned once, never fatal, never committed", async () => {
    const s = await scenario({
      runId: "hk-1",
      tree: tree(node("root", { children: [node("a", { max_attempts: 1 }), node("b", { order: 1 })] })),
      files: { "hook.mjs": HOOK },
    });
    const out = path.join(s.scriptDir, "hooks.jsonl");
    s.env = { ...s.env, HOOK_OUT: out };
    // (the config is the user's: committed, as the run needs a clean working tree)
    const config = `${s.read(".runner/state/config.toml")}\n[hooks]\non_iteration = ["node", "hook.mjs", "fail"]\non_stuck = ["node", "hook.mjs", "hang"]\non_run_end = ["node", "hook.mjs"]\ntimeout_seconds = 1\n`;
    const { writeFileSync } = await import("node:fs");
    writeFileSync(path.join(s.dir, ".runner/state/config.toml"), config);
    await s.git(["commit", "-q", "-am", "hooks"]);
    s.script({
      1: { status: "retry", summary: "not yet" },
      2: { decompose: [{ id: "a1" }], status: "decomposed" },
      3: { write: { "src/a1.txt": "a1\n" }, status: "done" },
      4: { write: { "src/b.txt": "b\n" }, status: "done" },
    });
    const json = await s.runner(["run", "--json"]);
    expect(json.exitCode, json.stderr).toBe(0);
    const stderr = json.stderr.trim().split("\n");
    expect(stderr).toEqual([
      "The on_iteration hook exited with code 7; the run goes on (see .runner/iterations/hk-1/hooks.log).",
      "The on_stuck hook did not finish within 1 s and was killed; the run goes on (see .runner/iterations/hk-1/hooks.log).",
    ]);
    const calls = readFileSync(out, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { hook: string; event: Record<string, unknown> });
    expect(calls.map((call) => call.hook)).toEqual(["on_iteration", "on_stuck", "on_iteration", "on_iteration", "on_iteration", "on_run_end"]);
    // The same objects as run --json's lines (the time apart).
    const lines = runEvents(json.stdout).filter((event) => event.type !== "phase");
    const strip = (event: Record<string, unknown>) => ({ ...event, time: undefined });
    expect(calls.map((call) => strip(call.event))).toEqual(lines.map(strip));
    expect(calls[1]!.event).toMatchObject({ type: "stuck", node_id: "a", cause: "attempts", attempts: 1, max_attempts: 1 });
    expect(calls.at(-1)!.event).toMatchObject({ type: "summary", exit_code: 0, run_id: "hk-1", iterations: 4 });
    const log = s.read(".runner/iterations/hk-1/hooks.log");
    expect(log).toMatch(/ on_iteration \["node","hook\.mjs","fail"\] exited with code 7 \(\d+ ms\): the webhook said no$/m);
    expect(log).toMatch(/ on_run_end \["node","hook\.mjs"\] ok /);
    expect(await s.git(["status", "--porcelain"])).toBe("");
    expect(await s.git(["log", "--all", "--name-only", "--format="])).not.toContain("hooks");
    expect(existsSync(path.join(s.dir, ".runner/iterations/hk-1/hooks/on_stuck.log"))).toBe(true);
  });
});
