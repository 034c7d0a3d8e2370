// The runner with the real Qwen Code (pinned in versions.json, installed outside node_modules by
// scripts/install-test-agents.mjs) against the scripted OpenAI Chat Completions API
// (test/helpers/mock-openai-chat.ts), in real git repositories, through the built binary: `qwen` on
// PATH as `npm i -g` puts it, the runner's default approval settings, an empty HOME whose
// ~/.qwen/settings.json says what a user's may (no retries of its own on a rate limit), and
// OPENAI_BASE_URL / OPENAI_API_KEY / OPENAI_MODEL in the environment (QWEN_CODE_NO_RELAUNCH=1 skips
// its second Node start-up). The repository, its guard and the scripted model's hands:
// test/helpers/real-agent-repo.ts.
import { execa } from "execa";
import { mkdirSync, readdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { documentedFlags } from "../helpers/fake-agents.js";
import type { MockServerHandle, ModelTurn } from "../helpers/mock-model-script.js";
import { startMockOpenAIChat } from "../helpers/mock-openai-chat.js";
import {
  checkLogFile,
  expectLeafRun,
  processesOf,
  realAgent,
  HANG_BUDGET_SECONDS,
  realAgentScenario,
  REAL_AGENT_TEST_TIMEOUT,
  threeLeafModel,
} from "../helpers/real-agent-repo.js";
import type { Scenario } from "../helpers/scenario.js";
import { PROJECT_ROOT, runEvents, tempDir } from "../helpers/sandbox.js";

const KEY = "sk-mock-qwen-key-123";
const qwen = realAgent("qwen", startMockOpenAIChat);
const mock = qwen.mock;

/** A repository whose executor is the real Qwen Code, pointed at `server`. */
async function qwenRepo(
  runId: string,
  server: MockServerHandle,
  options: { timeoutSeconds?: number; env?: Record<string, string>; executor?: string[] } = {},
): Promise<{ s: Scenario; checkLog: string }> {
  const home = tempDir("runner-qwen-home-");
  mkdirSync(path.join(home, ".qwen"));
  writeFileSync(path.join(home, ".qwen", "settings.json"), JSON.stringify({ model: { generationConfig: { maxRetries: 0 } } }));
  const checkLog = checkLogFile();
  const env = {
    PATH: qwen.path(),
    HOME: home,
    CHECK_LOG: checkLog,
    OPENAI_BASE_URL: `${server.url}/v1`,
    OPENAI_API_KEY: KEY,
    OPENAI_MODEL: "mock-model",
    QWEN_CODE_NO_RELAUNCH: "1",
    ...options.env,
  };
  const executor = options.executor ?? ['kind = "qwen"', 'allowed_tools = ["run_shell_command(node act.mjs)"]'];
  const s = await realAgentScenario(runId, { env, executor, timeoutSeconds: options.timeoutSeconds });
  return { s, checkLog };
}

const modelRequests = (server: MockServerHandle) => server.requests.filter((request) => request.path.endsWith("/chat/completions"));

describe("runner with the real qwen", { timeout: REAL_AGENT_TEST_TIMEOUT }, () => {
  // One leaf (b) instead of Codex's and Claude's three: the same path (decompose, execute, guard
  // failure, retry, pass) in 3 sessions instead of 5; a Qwen session takes 4–6 s to start here.
  it(
    "`runner run` drives a one-leaf tree to passes=true: a decomposition that edits the tree, `just ci` run by the agent and by the guard, one guard failure and a retry, usage recorded",
    async () => {
      const server = await mock(threeLeafModel(["b"]));
      const { s, checkLog } = await qwenRepo("qwen-run", server);
      const started = Date.now();
      const run = await s.runner(["run"]);
      console.log(`qwen: runner run of 3 iterations in ${Date.now() - started} ms`);
      expect(run.stderr).toBe("");
      expect(run.exitCode).toBe(0);
      await expectLeafRun(s, checkLog, ["b"]);
      // The answer came through --json-schema's structured_output tool.
      expect(modelRequests(server).some((request) => JSON.stringify(request.body).includes('"name":"structured_output"'))).toBe(true);
      for (let iteration = 1; iteration <= 3; iteration++) {
        const meta = s.meta(iteration);
        expect((meta.executor as { argv: string[] }).argv.slice(5, 9)).toEqual([
          "--approval-mode",
          "auto-edit",
          "--allowed-tools",
          "run_shell_command(just ci)",
        ]);
        expect(meta.executor).toMatchObject({ exit_code: 0, error: null, session_id: expect.any(String), isolation: "user" });
        expect(meta.usage, `iteration ${iteration}`).toMatchObject({
          input_tokens: expect.any(Number),
          cached_input_tokens: expect.any(Number),
          output_tokens: expect.any(Number),
          cost_usd: null,
          qwen: { usage: expect.any(Object) },
        });
        expect((meta.usage as { input_tokens: number }).input_tokens).toBeGreaterThan(1000);
      }
      expect(run.stdout).toMatch(/\nusage: tokens [\d,]+ in \([\d,]+ cached\), [\d,]+ out/);
      for (let iteration = 1; iteration <= 3; iteration++) {
        for (const file of readdirSync(path.join(s.dir, s.iterFile(iteration, "")))) {
          expect(readFileSync(path.join(s.dir, s.iterFile(iteration, file)), "utf8"), file).not.toContain(KEY);
        }
      }
    },
    REAL_AGENT_TEST_TIMEOUT,
  );

  it("a 401 from the model API is reported within seconds of Qwen's exit, in its own words (isolation = clean)", async () => {
    const server = await mock([{ kind: "error", status: 401 }]);
    const { s } = await qwenRepo("qwen-401", server, { executor: ['kind = "qwen"', 'isolation = "clean"'] });
    const step = await s.step();
    expect(step.exitCode).toBe(1);
    const own = "qwen failed (exit code 1): 401 Incorrect API key provided: sk-mock***";
    expect(step.stderr).toContain(`Iteration 1 ended in a runner error: ${own}`);
    expect(step.stderr).not.toMatch(/output file|not valid JSON/);
    const meta = s.meta(1);
    expect(meta.executor).toMatchObject({ exit_code: 1, error: expect.stringContaining(own), isolation: "clean" });
    expect((meta.executor as { argv: string[] }).argv).toEqual(expect.arrayContaining(["--chat-recording", "false", "-e", "none"]));
    expect(meta.limit ?? null).toBeNull();
    expect((await s.runner(["log", "--iteration", "1"])).stdout).toContain(`runner_error: agent_failed: ${own}`);
    expect(modelRequests(server)).toHaveLength(1);
    expect(meta.durations.total_ms - meta.durations.agent_ms).toBeLessThan(5_000);
    console.log(`qwen: 401 reported, agent ${meta.durations.agent_ms} ms, step ${meta.durations.total_ms} ms`);
  });

  it("a model that hangs: Qwen is killed at the deadline, nothing of it is left, the timeout is a runner error", async () => {
    const server = await mock([{ kind: "hang", mode: "mid-stream" }]);
    // Qwen Code takes 4–6 s to start on a quiet 2-core machine, far more beside other test runs: the deadline leaves it time to ask.
    const { s } = await qwenRepo("qwen-hang", server, { timeoutSeconds: HANG_BUDGET_SECONDS });
    const step = await s.step();
    expect(step.exitCode).toBe(1);
    expect(step.stderr).toContain(
      `Iteration 1 ended in a runner error: the agent did not finish within the iteration budget of ${HANG_BUDGET_SECONDS} s and was killed`,
    );
    expect(modelRequests(server).length).toBeGreaterThan(0);
    expect(s.meta(1).executor).toMatchObject({ timed_out: true });
    expect(processesOf(realpathSync(s.dir))).toEqual([]);
  });

  it("`runner run` waits out the rate limit Qwen gave up on and goes on: the leaf passes on the next session", async () => {
    // Qwen states no reset time: the runner's first guess for a rate limit, 60 s, at a hundredth.
    // retry-after-ms keeps Qwen's own retries inside the session short (2 s instead of 6.5 s).
    const limited: ModelTurn = { kind: "error", status: 429, headers: { "retry-after-ms": "20", "retry-after": "0" } };
    const server = await mock([
      // Qwen retries within the session even with maxRetries 0 (7 requests observed): serve the limit to all of them.
      { kind: "shell", command: "node act.mjs write root ok", errorsBefore: Array.from({ length: 12 }, () => limited) },
      { kind: "final", answer: { status: "done", summary: "Wrote src/root.txt" } },
    ]);
    const { s } = await qwenRepo("qwen-limit-wait", server, { env: { RUNNER_TEST_HOOKS: "1", RUNNER_TEST_WAIT_SCALE: "0.01" } });
    const run = await s.runner(["run", "--json"]);
    expect(run.exitCode, run.stderr).toBe(0);
    const waits = runEvents(run.stdout).filter((event) => event.type === "wait");
    expect(waits.length).toBeGreaterThanOrEqual(1);
    expect(waits[0]).toMatchObject({ cause: "limit", seconds: 60 });
    expect(s.meta(1).limit).toEqual({ kind: "rate", resets_at: null, message: expect.stringMatching(/^429 Rate limit reached for/) });
    expect(s.readTree().root).toMatchObject({ passes: true, attempts: 0 });
  });
});

describe("runner with the real qwen: its own limits", { timeout: REAL_AGENT_TEST_TIMEOUT }, () => {
  it("max_turns is --max-session-turns; reaching it is a failure in Qwen's words (exit 53, said on stderr: no result event)", async () => {
    const server = await mock([
      { kind: "shell", command: "just ci" },
      { kind: "shell", command: "just ci" },
      { kind: "final", answer: { status: "done", summary: "never" } },
    ]);
    const { s } = await qwenRepo("qwen-turns", server, { executor: ['kind = "qwen"', "max_turns = 1"] });
    const step = await s.step();
    expect(step.exitCode).toBe(1);
    expect(step.stderr).toContain("Iteration 1 ended in a runner error: qwen exited with code 53: ");
    expect(step.stderr).toContain(
      "Reached max session turns for this session. Increase the number of turns by specifying maxSessionTurns in settings.json",
    );
    expect((s.meta(1).executor as { argv: string[] }).argv).toEqual(expect.arrayContaining(["--max-session-turns", "1"]));
  });
});

describe("the pinned Qwen Code's --help lists every flag the module passes", () => {
  it("qwen --help", async () => {
    const home = tempDir("runner-cli-home-");
    const help = await execa(qwen.program(), ["--help"], {
      reject: false,
      timeout: 30_000,
      env: { ...process.env, HOME: home, NO_COLOR: "1" },
      stdin: "ignore",
    });
    const text = `${String(help.stdout)}\n${String(help.stderr)}`;
    const flags = documentedFlags(readFileSync(path.join(PROJECT_ROOT, "src/agents/qwen.ts"), "utf8"), "qwen");
    const listed = (flag: string) => new RegExp(`(^|[\\s,])${flag.replace(/-/g, "\\-")}([\\s,=<]|$)`, "m").test(text);
    expect(flags.length).toBeGreaterThan(5);
    expect(flags.filter((flag) => !listed(flag))).toEqual([]);
    expect(text).toMatch(/plan.*default.*auto-edit.*auto.*yolo/s);
  });
});
