// The runner with the real Gemini CLI (pinned in versions.json, installed outside node_modules by
// scripts/install-test-agents.mjs) against the scripted Gemini API (test/helpers/mock-gemini.ts), in
// real git repositories, through the built binary: `gemini` on PATH as `npm i -g` puts it, the
// runner's default approval settings, and an empty GEMINI_CLI_HOME whose settings.json says what a
// user's would (auth type "gemini-api-key"; Gemini's own retries per request; usage statistics off,
// so nothing is sent elsewhere). The key and GOOGLE_GEMINI_BASE_URL are in the environment, and
// GEMINI_CLI_NO_RELAUNCH=true: Gemini's bundle otherwise starts Node twice (it relaunches itself with
// a larger heap), 1.5–2 s more per session on the loaded 2-core CI machine. The
// repository, its guard and the scripted model's hands: test/helpers/real-agent-repo.ts.
import { execa } from "execa";
import { mkdirSync, readdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { documentedFlags } from "../helpers/fake-agents.js";
import { geminiDailyQuotaBody, geminiErrorBody, startMockGemini } from "../helpers/mock-gemini.js";
import type { MockServerHandle, ModelTurn } from "../helpers/mock-model-script.js";
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
import { subject, type Scenario } from "../helpers/scenario.js";
import { PROJECT_ROOT, runEvents, tempDir } from "../helpers/sandbox.js";

const KEY = "mock-gemini-key-123";
const gemini = realAgent("gemini", startMockGemini);
const mock = gemini.mock;

/** A repository whose executor is the real Gemini CLI, pointed at `server`; `maxAttempts` is Gemini's own per-request retry count. */
async function geminiRepo(
  runId: string,
  server: MockServerHandle,
  options: { maxAttempts?: number; timeoutSeconds?: number; env?: Record<string, string>; executor?: string[] } = {},
): Promise<{ s: Scenario; checkLog: string }> {
  const home = tempDir("runner-gemini-home-");
  mkdirSync(path.join(home, ".gemini"));
  writeFileSync(
    path.join(home, ".gemini", "settings.json"),
    JSON.stringify({
      security: { auth: { selectedType: "gemini-api-key" } },
      general: { maxAttempts: options.maxAttempts ?? 2 },
      privacy: { usageStatisticsEnabled: false },
    }),
  );
  const checkLog = checkLogFile();
  const env = {
    PATH: gemini.path(),
    HOME: home,
    GEMINI_CLI_HOME: home,
    CHECK_LOG: checkLog,
    GEMINI_API_KEY: KEY,
    GOOGLE_GEMINI_BASE_URL: server.url,
    GEMINI_CLI_NO_RELAUNCH: "true",
    ...options.env,
  };
  // The guard is the default, `just ci` (always allowed); the scripted model also runs the project's act.mjs (the user's own rule).
  const executor = options.executor ?? ['kind = "gemini"', 'allowed_tools = ["run_shell_command(node act.mjs)"]'];
  const s = await realAgentScenario(runId, { env, executor, timeoutSeconds: options.timeoutSeconds });
  return { s, checkLog };
}

const modelRequests = (server: MockServerHandle) => server.requests.filter((request) => request.path.endsWith(":streamGenerateContent"));

describe("runner with the real gemini", { timeout: REAL_AGENT_TEST_TIMEOUT }, () => {
  it("`runner run` drives a three-leaf tree to passes=true: a decomposition that edits the tree, `just ci` run by the agent and by the guard, one guard failure and a retry, usage recorded", async () => {
    const server = await mock(threeLeafModel());
    const { s, checkLog } = await geminiRepo("gemini-run", server);
    const started = Date.now();
    const run = await s.runner(["run"]);
    console.log(`gemini: runner run of 5 iterations in ${Date.now() - started} ms`);
    expect(run.stderr).toBe("");
    expect(run.exitCode).toBe(0);
    // Five sessions (b fails its guard once); `just ci` ran inside Gemini's session, then as the guard.
    await expectLeafRun(s, checkLog);

    // The runner's default flags reached Gemini; usage per iteration in meta.json, summed in the summary.
    for (let iteration = 1; iteration <= 5; iteration++) {
      const meta = s.meta(iteration);
      expect((meta.executor as { argv: string[] }).argv.slice(0, 8)).toEqual([
        "gemini",
        "--output-format",
        "stream-json",
        "--skip-trust",
        "--approval-mode",
        "auto_edit",
        "--allowed-tools",
        "run_shell_command(just ci)",
      ]);
      expect(meta.executor).toMatchObject({ exit_code: 0, error: null, session_id: expect.any(String), isolation: "user" });
      expect(meta.usage, `iteration ${iteration}`).toMatchObject({
        input_tokens: expect.any(Number),
        cached_input_tokens: expect.any(Number),
        output_tokens: expect.any(Number),
        reasoning_tokens: expect.any(Number),
        cost_usd: null,
        gemini: { stats: { models: expect.any(Object) } },
      });
      expect((meta.usage as { input_tokens: number }).input_tokens).toBeGreaterThan(1000);
    }
    expect(run.stdout).toMatch(/\nusage: tokens [\d,]+ in \([\d,]+ cached\), [\d,]+ out \([\d,]+ reasoning\)/);
    // The key never reaches what the runner writes.
    for (let iteration = 1; iteration <= 5; iteration++) {
      for (const file of readdirSync(path.join(s.dir, s.iterFile(iteration, "")))) {
        expect(readFileSync(path.join(s.dir, s.iterFile(iteration, file)), "utf8"), file).not.toContain(KEY);
      }
    }
  });

  it("an answer Gemini writes to the output file, as the prompt asks, with prose as its last message, is the answer", async () => {
    // The prompt names the file (`Write your answer as JSON to the file `<path>``); Gemini's write_file
    // writes it although .runner/logs/ is ignored by git.
    const server = await mock((conversation) => {
      const file = /Write your answer as JSON to the file `([^`]+)`/.exec(conversation)?.[1] ?? "missing-output-file";
      return [
        { kind: "shell", command: "node act.mjs write root ok" },
        { kind: "write", path: file, content: `${JSON.stringify({ status: "done", summary: "Wrote src/root.txt; answer in the file" })}\n` },
        { kind: "final", answer: "I wrote src/root.txt and put my answer in the output file." },
      ];
    });
    const { s } = await geminiRepo("gemini-file", server);
    const step = await s.step();
    expect(step.exitCode, step.stderr).toBe(0);
    expect(await s.subjects()).toEqual([subject(s.runId, 1, "root", "execute", "pass")]);
    expect(s.meta(1)).toMatchObject({ agent_status: "done" });
  });

  it("a 401 from the model API is reported within seconds of Gemini's exit, in its own words", async () => {
    const server = await mock([{ kind: "error", status: 401 }]);
    const { s } = await geminiRepo("gemini-401", server);
    const step = await s.step();
    expect(step.exitCode).toBe(1);
    // Gemini exits with the HTTP status modulo 256 (401 → 145).
    const own =
      "gemini failed (exit code 145): Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. (API status 401 UNAUTHENTICATED)";
    expect(step.stderr).toContain(`Iteration 1 ended in a runner error: ${own}`);
    expect(step.stderr).not.toMatch(/output file|not valid JSON/);
    const meta = s.meta(1);
    expect(meta.executor).toMatchObject({ exit_code: 145, error: expect.stringContaining(own) });
    expect(meta.limit ?? null).toBeNull();
    expect((await s.runner(["log", "--iteration", "1"])).stdout).toContain(`runner_error: agent_failed: ${own}`);
    expect(modelRequests(server)).toHaveLength(1);
    expect(meta.durations.total_ms - meta.durations.agent_ms).toBeLessThan(5_000);
    console.log(`gemini: 401 reported, agent ${meta.durations.agent_ms} ms, step ${meta.durations.total_ms} ms`);
  });

  it("a model that hangs: Gemini is killed at the deadline, nothing of it is left, the timeout is a runner error", async () => {
    const server = await mock([{ kind: "hang", mode: "mid-stream" }]);
    // A budget the agent reaches its model within on a loaded machine (real agents took 20–30 s to start there).
    const { s } = await geminiRepo("gemini-hang", server, { timeoutSeconds: HANG_BUDGET_SECONDS });
    const step = await s.step();
    expect(step.exitCode).toBe(1);
    expect(step.stderr).toContain(
      `Iteration 1 ended in a runner error: the agent did not finish within the iteration budget of ${HANG_BUDGET_SECONDS} s and was killed`,
    );
    expect(modelRequests(server).length).toBeGreaterThan(0);
    expect(s.meta(1).executor).toMatchObject({ timed_out: true });
    expect(processesOf(realpathSync(s.dir))).toEqual([]);
  });

  it("a daily quota is recorded as a usage limit in meta.json, in Gemini's words (isolation = clean)", async () => {
    const server = await mock([{ kind: "error", status: 429, body: geminiDailyQuotaBody() }]);
    const { s } = await geminiRepo("gemini-daily", server, { executor: ['kind = "gemini"', 'isolation = "clean"'] });
    const step = await s.step();
    expect(step.exitCode).toBe(1);
    expect(s.meta(1).executor).toMatchObject({ isolation: "clean", argv: expect.arrayContaining(["-e", "none"]) });
    expect(s.meta(1).limit).toEqual({
      kind: "usage",
      resets_at: null,
      message: expect.stringMatching(/^You have exhausted your daily quota on this model\./),
    });
    expect((await s.runner(["log", "--iteration", "1"])).stdout).toMatch(/\nlimit: usage limit: You have exhausted your daily quota/);
  });

  it("`runner run` waits out the rate limit Gemini gave up on, until the retry delay the API named, and goes on: the leaf passes on the next session", async () => {
    // A per-minute quota with RetryInfo 30s: Gemini (maxAttempts 1) gives up at once and says
    // "Suggested retry after 30s."; the runner waits until then (and a margin), at a hundredth.
    const body = geminiErrorBody(429) as { error: { details: Array<Record<string, unknown>> } };
    body.error.details = body.error.details.map((detail) => (detail.retryDelay ? { ...detail, retryDelay: "30s" } : detail));
    const limited: ModelTurn = { kind: "error", status: 429, body };
    const server = await mock([
      { kind: "shell", command: "node act.mjs write root ok", errorsBefore: [limited] },
      { kind: "final", answer: { status: "done", summary: "Wrote src/root.txt" } },
    ]);
    const { s } = await geminiRepo("gemini-limit-wait", server, { maxAttempts: 1, env: { RUNNER_TEST_HOOKS: "1", RUNNER_TEST_WAIT_SCALE: "0.01" } });
    const started = Date.now();
    const run = await s.runner(["run", "--json"]);
    expect(run.exitCode, run.stderr).toBe(0);
    const waits = runEvents(run.stdout).filter((event) => event.type === "wait");
    expect(waits).toHaveLength(1);
    expect(waits[0]).toMatchObject({ cause: "limit" });
    // Until the retry delay after Gemini's failure (30 s and the runner's 5 s margin), not a 60 s guess:
    // measured from the reset the run recorded, so however late the runner got to it under load.
    expect(waits[0]!.seconds).toBeLessThanOrEqual(36);
    expect(Date.parse(String(waits[0]!.until))).toBeGreaterThanOrEqual(started + 30_000);
    const limit = s.meta(1).limit as { kind: string; resets_at: string; message: string };
    expect(Date.parse(String(waits[0]!.until)) - Date.parse(limit.resets_at)).toBeGreaterThanOrEqual(5_000);
    expect(Date.parse(String(waits[0]!.until)) - Date.parse(limit.resets_at)).toBeLessThan(6_000);
    expect(limit).toMatchObject({ kind: "rate", message: expect.stringMatching(/^You exceeded your current quota.*Suggested retry after 30s\./) });
    expect(Date.parse(limit.resets_at)).toBeGreaterThanOrEqual(started + 30_000);
    expect(await s.subjects()).toEqual([subject(s.runId, 1, "root", "decompose", "skipped"), subject(s.runId, 2, "root", "execute", "pass")]);
    expect(s.readTree().root).toMatchObject({ passes: true, attempts: 0 });
  });
});

// The flags the module documents in its header comment are the ones the pinned binary knows.
describe("the pinned Gemini CLI's --help lists every flag the module passes", () => {
  it("gemini --help", async () => {
    const home = tempDir("runner-cli-home-");
    const help = await execa(gemini.program(), ["--help"], {
      reject: false,
      timeout: 30_000,
      env: { ...process.env, HOME: home, GEMINI_CLI_HOME: home, NO_COLOR: "1" },
      stdin: "ignore",
    });
    const text = `${String(help.stdout)}\n${String(help.stderr)}`;
    const flags = documentedFlags(readFileSync(path.join(PROJECT_ROOT, "src/agents/gemini.ts"), "utf8"), "gemini");
    const listed = (flag: string) => new RegExp(`(^|[\\s,])${flag.replace(/-/g, "\\-")}([\\s,=<]|$)`, "m").test(text);
    expect(flags.length).toBeGreaterThan(4);
    expect(flags.filter((flag) => !listed(flag))).toEqual([]);
    expect(text).toMatch(/default.*auto_edit.*yolo.*plan/s);
  });
});
