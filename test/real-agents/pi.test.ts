// The runner with the real pi (@mariozechner/pi-coding-agent, pinned in versions.json, installed
// outside node_modules by scripts/install-test-agents.mjs) against the scripted Chat Completions
// server (test/helpers/mock-pi.ts), in real git repositories, through the built binary: `pi` on PATH
// as a user's install puts it, an empty HOME whose ~/.pi/agent/models.json names the mock as a
// custom provider (pi's documented way to a local server) and whose settings.json makes it the
// default model. pi has no output-schema mode: the scripted model writes the answer with pi's `write`
// tool to the file the prompt names. The repository, its guard and the three-leaf model are the
// other real-agent tests' own (test/helpers/real-agent-repo.ts).
import { execa } from "execa";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { ErrorTurn, MockServerHandle } from "../helpers/mock-model-script.js";
import { PI_MOCK_KEY_ENV, piHome, startMockPi } from "../helpers/mock-pi.js";
import {
  answerFileLimitModel,
  answerFileOneLeafModel,
  checkLogFile,
  expectKilledAtDeadline,
  expectLimitWaitedOut,
  flagsMissingFromHelp,
  realAgent,
  realAgentScenario,
  runOneLeafTree,
  HANG_BUDGET_SECONDS,
  REAL_AGENT_TEST_TIMEOUT,
} from "../helpers/real-agent-repo.js";
import type { Scenario } from "../helpers/scenario.js";
import { tempDir } from "../helpers/sandbox.js";

const pi = realAgent("pi", startMockPi);
const KEY = "sk-mock-pi-key-123";

/** A rate limit (OpenAI's 429 body says "Please try again in 2.4s."), with the retry-after the OpenAI SDK inside pi honours. */
const RATE_LIMITED: ErrorTurn = { kind: "error", status: 429, headers: { "retry-after": "1" } };

/** A repository on run branch `runId` whose executor is the real pi, pointed at `mock`. */
async function piRepo(
  runId: string,
  mock: MockServerHandle,
  options: { timeoutSeconds?: number; env?: Record<string, string>; executor?: string[] } = {},
): Promise<{ s: Scenario; checkLog: string; home: string }> {
  const checkLog = checkLogFile();
  const home = piHome(mock.url);
  const env: Record<string, string> = {
    PATH: pi.path(),
    HOME: home,
    CHECK_LOG: checkLog,
    [PI_MOCK_KEY_ENV]: KEY,
    ...options.env,
  };
  const s = await realAgentScenario(runId, { env, executor: options.executor ?? ['kind = "pi"'], timeoutSeconds: options.timeoutSeconds });
  for (const name of ["PI_CODING_AGENT_DIR", "PI_CODING_AGENT_SESSION_DIR", "PI_OFFLINE", "ANTHROPIC_API_KEY", "ANTHROPIC_OAUTH_TOKEN"]) {
    if (!(name in env)) delete s.env[name];
  }
  return { s, checkLog, home };
}

const chatRequests = (mock: MockServerHandle) => mock.requests.filter((request) => request.path === "/v1/chat/completions");

describe("runner with the real pi", { timeout: REAL_AGENT_TEST_TIMEOUT }, () => {
  it("`runner run` drives a tree to passes=true: a decomposition into one leaf, `just ci` run by the agent and by the guard, one guard failure and a retry, two 429s pi waits out itself, usage and cost recorded", async () => {
    // b's first request meets two 429s, which pi (its OpenAI SDK) waits out itself.
    const mock = await pi.mock(answerFileOneLeafModel([RATE_LIMITED, RATE_LIMITED]));
    const { s, checkLog, home } = await piRepo("pi-run", mock);
    const run = await runOneLeafTree(s, checkLog, "pi");

    // The 429s were pi's to wait out: served, retried, not a limit of the run.
    expect(chatRequests(mock).filter((request) => request.answeredWith === "error")).toHaveLength(2);
    expect(s.meta(2).limit ?? null).toBeNull();

    // Usage per iteration: every response's tokens and cost summed (the mock: 1200 in, 300 cached, 80 out per response; pi's price 0.00121 each).
    for (let iteration = 1; iteration <= 3; iteration++) {
      const meta = s.meta(iteration);
      const responses = iteration === 1 ? 3 : 4;
      expect(meta.usage, `iteration ${iteration}`).toMatchObject({
        input_tokens: 1200 * responses,
        cached_input_tokens: 300 * responses,
        output_tokens: 80 * responses,
        reasoning_tokens: null,
        pi: { responses, cache_write_tokens: 0 },
      });
      expect((meta.usage as { cost_usd: number }).cost_usd).toBeCloseTo(0.00121 * responses, 8);
      expect(meta.executor).toMatchObject({ exit_code: 0, error: null, session_id: expect.stringMatching(/^[0-9a-f-]{36}$/), isolation: "user" });
      expect((meta.executor as { argv: string[] }).argv).toEqual(["pi", "--mode", "json"]);
    }
    expect(run.stdout).toMatch(/\nusage: tokens [\d,]+ in \([\d,]+ cached\), [\d,]+ out/);
    expect(run.stdout).toMatch(/; cost \$\d+\.\d{4}$/m);
    // isolation = "user": pi saved its sessions where a user's go.
    expect(readdirSync(path.join(home, ".pi", "agent", "sessions"))).toHaveLength(1);
    for (let iteration = 1; iteration <= 3; iteration++) {
      for (const file of readdirSync(path.join(s.dir, s.iterFile(iteration, "")))) {
        expect(readFileSync(path.join(s.dir, s.iterFile(iteration, file)), "utf8"), file).not.toContain(KEY);
      }
    }
  }, 180_000);

  it("a 401 from the model API (pi exits 0) is reported within seconds of the agent's exit, in pi's own words (isolation = clean, the model from the config)", async () => {
    const mock = await pi.mock([{ kind: "error", status: 401 }]);
    const executor = ['kind = "pi"', 'isolation = "clean"', 'model = "runner_mock/mock-model"'];
    const { s, home } = await piRepo("pi-401", mock, { executor });
    const step = await s.step();
    expect(step.exitCode).toBe(1);
    const own =
      "pi failed (exit code 0): Incorrect API key provided: sk-mock***. You can find your API key at https://platform.openai.com/account/api-keys. (API status 401)";
    expect(step.stderr).toContain(`Iteration 1 ended in a runner error: ${own}`);
    const meta = s.meta(1);
    expect(meta.executor).toMatchObject({ exit_code: 0, error: expect.stringContaining(own), isolation: "clean" });
    const argv = (meta.executor as { argv: string[] }).argv;
    expect(argv).toEqual(expect.arrayContaining(["--no-session", "--no-extensions", "--offline"]));
    expect(argv.slice(-2)).toEqual(["--model", "runner_mock/mock-model"]);
    expect((await s.runner(["log", "--iteration", "1"])).stdout).toContain(`runner_error: agent_failed: ${own}`);
    expect(meta.durations.total_ms - meta.durations.agent_ms).toBeLessThan(5_000);
    // pi retries no 401: one model request.
    expect(chatRequests(mock)).toHaveLength(1);
    // --no-session: nothing saved.
    expect(existsSync(path.join(home, ".pi", "agent", "sessions"))).toBe(false);
    console.log(`pi: 401 reported, agent ${meta.durations.agent_ms} ms, step ${meta.durations.total_ms} ms`);
  });

  it("no API key for the chosen provider: pi stops at once (exit code 1), and its own sentence from stderr is the error", async () => {
    const mock = await pi.mock([]);
    const { s } = await piRepo("pi-nokey", mock, { executor: ['kind = "pi"', 'model = "anthropic/claude-opus-4-7"'] });
    const step = await s.step();
    expect(step.exitCode).toBe(1);
    expect(step.stderr).toContain("Iteration 1 ended in a runner error: pi failed (exit code 1): No API key found for anthropic");
    expect(s.meta(1).executor).toMatchObject({ exit_code: 1, error: expect.stringContaining("No API key found for anthropic") });
    expect(mock.requests).toEqual([]);
  });

  it("a model that hangs: pi is killed at the deadline, nothing of it is left, the timeout is a runner error", async () => {
    const mock = await pi.mock([{ kind: "hang", mode: "mid-stream" }]);
    const { s } = await piRepo("pi-hang", mock, { timeoutSeconds: HANG_BUDGET_SECONDS });
    await expectKilledAtDeadline(s, mock, HANG_BUDGET_SECONDS);
  });

  it("a rate limit pi gives up on (its SDK's 3 requests, 4 times) is recorded with its reset, `runner run` waits it out and the leaf passes on the next session", async () => {
    // The first session's first request meets 429 twelve times (pi's SDK's 3 requests, 4 times).
    const mock = await pi.mock(answerFileLimitModel(Array.from({ length: 12 }, () => RATE_LIMITED)));
    const { s } = await piRepo("pi-limit", mock, { env: { RUNNER_TEST_HOOKS: "1", RUNNER_TEST_WAIT_SCALE: "0.01" } });
    const run = await s.runner(["run", "--json"]);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(chatRequests(mock).filter((request) => request.answeredWith === "error")).toHaveLength(12);
    const limit = s.meta(1).limit as { kind: string; resets_at: string | null; message: string };
    expect(limit).toMatchObject({
      kind: "rate",
      message: expect.stringMatching(/^Rate limit reached for .* Please try again in 2\.4s\. \(API status 429\)$/),
    });
    expect(limit.resets_at).not.toBeNull();
    await expectLimitWaitedOut(s, run);
  }, 180_000);

  it("pi --help lists every flag the module passes", async () => {
    // With stdin no terminal, pi prints its help (and version) on stderr.
    const help = await execa(pi.program(), ["--help"], {
      reject: false,
      timeout: 60_000,
      env: { ...process.env, HOME: tempDir("runner-pi-help-"), NO_COLOR: "1", PI_OFFLINE: "1" },
      stdin: "ignore",
    });
    const text = `${String(help.stdout)}\n${String(help.stderr)}`;
    const { flags, missing } = flagsMissingFromHelp("pi", text);
    expect(missing).toEqual([]);
    expect(flags).toEqual(["--mode", "--no-session", "--no-extensions", "--no-skills", "--no-prompt-templates", "--offline", "--model"]);
  });
});
