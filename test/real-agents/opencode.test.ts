// The runner with the real OpenCode (opencode-ai, pinned in versions.json, installed outside
// node_modules by scripts/install-test-agents.mjs) against the scripted Chat Completions server
// (test/helpers/mock-opencode.ts), in real git repositories, through the built binary: `opencode` on
// PATH as a user's install puts it, an empty HOME whose OpenCode config folder is pre-seeded (so
// OpenCode does not `npm install @opencode-ai/plugin` into it in the background), and the mock as a
// custom provider in OPENCODE_CONFIG_CONTENT. OpenCode has no output-schema mode: the scripted
// model writes the answer with OpenCode's `write` tool to the file the prompt names.
// The repository, its guard and the three-leaf model are the other real-agent tests' own
// (test/helpers/real-agent-repo.ts).
import { execa } from "execa";
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { ErrorTurn, MockServerHandle } from "../helpers/mock-model-script.js";
import { opencodeMockConfig, startMockOpenCode } from "../helpers/mock-opencode.js";
import {
  answerFileLimitModel,
  answerFileOneLeafModel,
  answerFileSession,
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

const opencode = realAgent("opencode", startMockOpenCode);
const KEY = "sk-mock-opencode-key-123";

/** A rate limit OpenCode retries by itself (it honours retry-after). */
const RATE_LIMITED: ErrorTurn = { kind: "error", status: 429, headers: { "retry-after": "1" } };

/** A HOME whose OpenCode config folder already "has" its plugin dependency: no background `npm install` into it. */
function opencodeHome(): string {
  const home = tempDir("runner-opencode-home-");
  const config = path.join(home, ".config", "opencode");
  mkdirSync(path.join(config, "node_modules"), { recursive: true });
  const dependencies = { "@opencode-ai/plugin": "1.18.33" };
  writeFileSync(path.join(config, "package.json"), JSON.stringify({ dependencies }));
  writeFileSync(path.join(config, "package-lock.json"), JSON.stringify({ lockfileVersion: 3, packages: { "": { dependencies } } }));
  return home;
}

/** A repository on run branch `runId` whose executor is the real OpenCode, pointed at `mock`. */
async function opencodeRepo(
  runId: string,
  mock: MockServerHandle,
  options: { timeoutSeconds?: number; env?: Record<string, string>; config?: Record<string, unknown>; executor?: string[] } = {},
): Promise<{ s: Scenario; checkLog: string }> {
  const home = opencodeHome();
  const checkLog = checkLogFile();
  const env: Record<string, string> = {
    PATH: opencode.path(),
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, ".config"),
    XDG_DATA_HOME: path.join(home, ".local", "share"),
    XDG_CACHE_HOME: path.join(home, ".cache"),
    XDG_STATE_HOME: path.join(home, ".local", "state"),
    CHECK_LOG: checkLog,
    MOCK_OPENAI_API_KEY: KEY,
    OPENCODE_CONFIG_CONTENT: JSON.stringify(opencodeMockConfig(mock.url, options.config)),
    // No models.dev fetch and no update check from a test (the mock is a custom provider).
    OPENCODE_DISABLE_MODELS_FETCH: "1",
    OPENCODE_DISABLE_AUTOUPDATE: "1",
    ...options.env,
  };
  const s = await realAgentScenario(runId, { env, executor: options.executor ?? ['kind = "opencode"'], timeoutSeconds: options.timeoutSeconds });
  for (const name of ["OPENCODE_PERMISSION", "OPENCODE_CONFIG", "OPENCODE_CONFIG_DIR"]) delete s.env[name];
  return { s, checkLog };
}

const chatRequests = (mock: MockServerHandle) => mock.requests.filter((request) => request.path === "/v1/chat/completions");

describe("runner with the real opencode", { timeout: REAL_AGENT_TEST_TIMEOUT }, () => {
  it("`runner run` drives a tree to passes=true: a decomposition into one leaf, `just ci` run by the agent and by the guard, one guard failure and a retry, two 429s OpenCode waits out itself, usage and cost recorded", async () => {
    // b's first request meets two 429s, which OpenCode waits out itself.
    const mock = await opencode.mock(answerFileOneLeafModel([RATE_LIMITED, RATE_LIMITED]));
    const { s, checkLog } = await opencodeRepo("opencode-run", mock);
    const run = await runOneLeafTree(s, checkLog, "opencode");

    // The 429s were OpenCode's to wait out: served, retried, not a limit of the run.
    expect(chatRequests(mock).filter((request) => request.answeredWith === "error")).toHaveLength(2);
    expect(s.meta(2).limit ?? null).toBeNull();

    // Usage per iteration: every step's tokens and cost summed (the mock: 1200 in, 300 cached, 80 out, 16 reasoning per response).
    for (let iteration = 1; iteration <= 3; iteration++) {
      const meta = s.meta(iteration);
      const steps = iteration === 1 ? 3 : 4;
      expect(meta.usage, `iteration ${iteration}`).toMatchObject({
        input_tokens: 1200 * steps,
        cached_input_tokens: 300 * steps,
        output_tokens: 80 * steps,
        reasoning_tokens: 16 * steps,
        opencode: { steps },
      });
      expect((meta.usage as { cost_usd: number }).cost_usd).toBeCloseTo(0.00106 * steps, 8);
      expect(meta.executor).toMatchObject({ exit_code: 0, error: null, session_id: expect.stringMatching(/^ses_/), isolation: "user" });
    }
    expect(run.stdout).toMatch(/\nusage: tokens [\d,]+ in \([\d,]+ cached\), [\d,]+ out/);
    expect(run.stdout).toMatch(/; cost \$\d+\.\d{4}$/m);
    for (let iteration = 1; iteration <= 3; iteration++) {
      for (const file of readdirSync(path.join(s.dir, s.iterFile(iteration, "")))) {
        expect(readFileSync(path.join(s.dir, s.iterFile(iteration, file)), "utf8"), file).not.toContain(KEY);
      }
    }
  });

  it("a 401 from the model API is reported within seconds of the agent's exit, in OpenCode's own words (isolation = clean)", async () => {
    const mock = await opencode.mock([{ kind: "error", status: 401 }]);
    const { s } = await opencodeRepo("opencode-401", mock, { executor: ['kind = "opencode"', 'isolation = "clean"'] });
    const step = await s.step();
    expect(step.exitCode).toBe(1);
    const own =
      "opencode failed (exit code 1): Incorrect API key provided: sk-mock***. You can find your API key at https://platform.openai.com/account/api-keys. (API status 401)";
    expect(step.stderr).toContain(`Iteration 1 ended in a runner error: ${own}`);
    const meta = s.meta(1);
    expect(meta.executor).toMatchObject({ exit_code: 1, error: expect.stringContaining(own), isolation: "clean" });
    expect((meta.executor as { argv: string[] }).argv).toContain("--pure");
    expect((await s.runner(["log", "--iteration", "1"])).stdout).toContain(`runner_error: agent_failed: ${own}`);
    expect(meta.durations.total_ms - meta.durations.agent_ms).toBeLessThan(5_000);
    // OpenCode does not retry a 401: one model request (after the session-title request).
    expect(chatRequests(mock).filter((request) => request.answeredWith === "error")).toHaveLength(1);
    console.log(`opencode: 401 reported, agent ${meta.durations.agent_ms} ms, step ${meta.durations.total_ms} ms`);
  });

  it("a permission set to ask in the user's config is rejected by `opencode run` (exit 0): a runner error in OpenCode's words", async () => {
    const mock = await opencode.mock((conversation) =>
      answerFileSession(conversation, [{ kind: "shell", command: "just ci" }], { status: "done", summary: "never reached" }),
    );
    const { s } = await opencodeRepo("opencode-ask", mock, { config: { permission: { bash: "ask" } } });
    const step = await s.step();
    expect(step.exitCode).toBe(1);
    expect(step.stderr).toContain(
      "Iteration 1 ended in a runner error: opencode failed (exit code 0): bash needs a permission OpenCode would ask for, and `opencode run` cannot ask: The user rejected permission to use this specific tool call",
    );
  });

  it("a model that hangs: OpenCode is killed at the deadline, nothing of it is left, the timeout is a runner error", async () => {
    const mock = await opencode.mock([{ kind: "hang", mode: "mid-stream" }]);
    const { s } = await opencodeRepo("opencode-hang", mock, { timeoutSeconds: HANG_BUDGET_SECONDS });
    await expectKilledAtDeadline(s, mock, HANG_BUDGET_SECONDS);
  });

  it("a rate limit OpenCode gives up on (six 429s) is recorded with its reset, `runner run` waits it out and the leaf passes on the next session", async () => {
    // The first session's first request meets 429 six times (OpenCode's request and its five retries).
    const mock = await opencode.mock(answerFileLimitModel(Array.from({ length: 6 }, () => RATE_LIMITED)));
    const { s } = await opencodeRepo("opencode-limit", mock, { env: { RUNNER_TEST_HOOKS: "1", RUNNER_TEST_WAIT_SCALE: "0.01" } });
    const run = await s.runner(["run", "--json"]);
    expect(run.exitCode, run.stderr).toBe(0);
    const limit = s.meta(1).limit as { kind: string; resets_at: string | null; message: string };
    expect(limit).toMatchObject({ kind: "rate", message: expect.stringMatching(/^Rate limit reached for /) });
    expect(limit.resets_at).not.toBeNull();
    await expectLimitWaitedOut(s, run);
  });

  it("opencode run --help lists every flag the module passes", async () => {
    const help = await execa(opencode.program(), ["run", "--help"], {
      reject: false,
      timeout: 30_000,
      env: { ...process.env, HOME: opencodeHome(), NO_COLOR: "1" },
      stdin: "ignore",
    });
    const text = `${String(help.stdout)}\n${String(help.stderr)}`;
    const { flags, missing } = flagsMissingFromHelp("opencode", text);
    expect(missing).toEqual([]);
    expect(flags).toEqual(expect.arrayContaining(["--format", "--print-logs", "--log-level", "--dir", "--pure", "-m"]));
  });
});
