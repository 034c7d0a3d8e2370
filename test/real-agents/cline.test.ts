// The runner with the real Cline CLI (npm `cline`, pinned in versions.json, installed outside
// node_modules by scripts/install-test-agents.mjs) against the scripted Chat Completions server
// (test/helpers/mock-cline.ts), in real git repositories, through the built binary: `cline` on PATH
// as a user's install puts it (the Node wrapper, which starts the platform binary as its child), an
// empty HOME whose ~/.cline holds what `cline auth --provider openai-compatible … --baseurl <mock>`
// saves (the last test checks that it is exactly that). Cline has no output-schema mode: the
// scripted model writes the answer with Cline's `editor` tool to the file the prompt names.
// The repository, its guard and the one-leaf model are the other real-agent tests' own
// (test/helpers/real-agent-repo.ts).
import { execa } from "execa";
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { documentedFlags } from "../helpers/fake-agents.js";
import { CLINE_MOCK_MODEL, clineProviderSettings, startMockCline } from "../helpers/mock-cline.js";
import type { ErrorTurn, MockServerHandle } from "../helpers/mock-model-script.js";
import {
  answerFileLimitModel,
  answerFileOneLeafModel,
  checkLogFile,
  expectLeafRun,
  processesOf,
  realAgent,
  realAgentScenario,
  HANG_BUDGET_SECONDS,
  REAL_AGENT_TEST_TIMEOUT,
} from "../helpers/real-agent-repo.js";
import { subject, type Scenario } from "../helpers/scenario.js";
import { PROJECT_ROOT, runEvents, runner, tempDir } from "../helpers/sandbox.js";

const clineAgent = realAgent("cline", startMockCline);
const KEY = "sk-mock-cline-key-123";

/** A rate limit Cline retries by itself (the AI SDK under it honours retry-after). */
const RATE_LIMITED: ErrorTurn = { kind: "error", status: 429, headers: { "retry-after": "1" } };

/** Cline's variables of the test process that would point it elsewhere. */
const CLINE_ENV = ["CLINE_DIR", "CLINE_DATA_DIR", "CLINE_PROVIDER_SETTINGS_PATH", "CLINE_API_KEY", "CLINE_SESSION_BACKEND_MODE", "CLINE_SANDBOX"];

/** The providers file `cline auth` writes for the mock, in a folder of its own. */
function providersFile(mock: MockServerHandle): string {
  const file = path.join(tempDir("runner-cline-providers-"), "providers.json");
  writeFileSync(file, `${JSON.stringify(clineProviderSettings(mock.url, KEY), null, 2)}\n`);
  return file;
}

/** A HOME whose ~/.cline has the mock as its provider (what `cline auth` saves there). */
function clineHome(mock: MockServerHandle): string {
  const home = tempDir("runner-cline-home-");
  mkdirSync(path.join(home, ".cline", "data", "settings"), { recursive: true });
  writeFileSync(path.join(home, ".cline", "data", "settings", "providers.json"), readFileSync(providersFile(mock)));
  return home;
}

/** A repository on run branch `runId` whose executor is the real Cline, pointed at `mock`. */
async function clineRepo(
  runId: string,
  mock: MockServerHandle,
  options: { timeoutSeconds?: number; env?: Record<string, string>; executor?: string[] } = {},
): Promise<{ s: Scenario; checkLog: string; home: string }> {
  const home = clineHome(mock);
  const checkLog = checkLogFile();
  const env: Record<string, string> = { PATH: clineAgent.path(), HOME: home, CHECK_LOG: checkLog, ...options.env };
  const s = await realAgentScenario(runId, { env, executor: options.executor ?? ['kind = "cline"'], timeoutSeconds: options.timeoutSeconds });
  for (const name of CLINE_ENV) if (!(name in env)) delete s.env[name];
  return { s, checkLog, home };
}

/**
 * A Cline session costs about 4.5 s of CPU before its first model request (the 150 MB Bun binary
 * starting); on the shared 2-core machine that is 10–20 s of wall time, hence the tests' budgets.
 */
const SESSIONS_BUDGET_MS = 6 * 60_000;
const SESSION_BUDGET_MS = 3 * 60_000;

/** `runner <args>` in the scenario's repository, given as long as the sessions may take (Scenario.runner's default is 60 s). */
const drive = (s: Scenario, args: string[]) => runner(s.dir, args, { env: s.env, timeout: SESSIONS_BUDGET_MS - 30_000 });

const chatRequests = (mock: MockServerHandle) => mock.requests.filter((request) => request.path === "/v1/chat/completions");

describe("runner with the real cline", { timeout: REAL_AGENT_TEST_TIMEOUT }, () => {
  it(
    "`runner run` drives a tree to passes=true: a decomposition into one leaf, `just ci` run by the agent and by the guard, one guard failure and a retry, two 429s Cline waits out itself, usage recorded",
    async () => {
      const mock = await clineAgent.mock(answerFileOneLeafModel([RATE_LIMITED, RATE_LIMITED]));
      const { s, checkLog, home } = await clineRepo("cline-run", mock);
      const started = Date.now();
      const run = await drive(s, ["run"]);
      console.log(`cline: runner run of 3 iterations in ${Date.now() - started} ms`);
      expect(run.stderr).toBe("");
      expect(run.exitCode).toBe(0);
      await expectLeafRun(s, checkLog, ["b"]);

      // The 429s were Cline's to wait out: served, retried, not a limit of the run.
      expect(chatRequests(mock).filter((request) => request.answeredWith === "error")).toHaveLength(2);
      expect(s.meta(2).limit ?? null).toBeNull();

      // Usage per iteration: the session's totals (the mock: 1200 in, 300 cached, 80 out per response);
      // Cline reports cost 0 for a model without a price, and no reasoning tokens apart.
      for (let iteration = 1; iteration <= 3; iteration++) {
        const meta = s.meta(iteration);
        const steps = iteration === 1 ? 3 : 4;
        expect(meta.usage, `iteration ${iteration}`).toEqual({
          input_tokens: 1200 * steps,
          cached_input_tokens: 300 * steps,
          output_tokens: 80 * steps,
          reasoning_tokens: null,
          cost_usd: 0,
          cline: expect.objectContaining({ iterations: steps, finish_reason: "completed", model: `openai-compatible/${CLINE_MOCK_MODEL}` }),
        });
        expect(meta.executor).toMatchObject({ exit_code: 0, error: null, isolation: "user" });
        expect((meta.executor as { argv: string[] }).argv).toEqual(["cline", "--json", "--auto-approve", "true", "Your task follows."]);
      }
      expect(run.stdout).toMatch(/\nusage: tokens [\d,]+ in \([\d,]+ cached\), [\d,]+ out/);
      // The prompt reached the model whole: the lead argument, a blank line, then stdin.
      expect(JSON.stringify(chatRequests(mock)[0]!.body)).toContain("Your task follows.\\n\\n# Runner contract");
      // Isolation "user": the sessions are in the user's ~/.cline; no hub daemon was started (the session ran in Cline's own process).
      expect(existsSync(path.join(home, ".cline", "data", "sessions"))).toBe(true);
      expect(existsSync(path.join(home, ".cline", "data", "logs", "hub-daemon.log"))).toBe(false);
      expect(processesOf(realpathSync(s.dir))).toEqual([]);
      // `runner doctor` reads the real `cline --version`.
      const doctor = JSON.parse((await runner(s.dir, ["doctor", "--json"], { env: s.env })).stdout) as { agents: Record<string, unknown>[] };
      expect(doctor.agents.find((agent) => agent.kind === "cline")).toMatchObject({
        version: "3.0.65",
        tested: true,
        configured: true,
        problem: null,
      });
    },
    SESSIONS_BUDGET_MS,
  );

  it(
    "a 401 from the model API is reported within seconds of the agent's exit, in Cline's own words (isolation = clean: a fresh configuration folder, the provider from CLINE_PROVIDER_SETTINGS_PATH)",
    async () => {
      const mock = await clineAgent.mock([{ kind: "error", status: 401 }]);
      const { s, home } = await clineRepo("cline-401", mock, {
        executor: ['kind = "cline"', 'isolation = "clean"'],
        env: { CLINE_PROVIDER_SETTINGS_PATH: providersFile(mock) },
      });
      const step = await drive(s, ["step"]);
      expect(step.exitCode).toBe(1);
      const own =
        "cline failed (exit code 1): Incorrect API key provided: sk-mock***. You can find your API key at https://platform.openai.com/account/api-keys";
      expect(step.stderr).toContain(`Iteration 1 ended in a runner error: ${own}`);
      const meta = s.meta(1);
      expect(meta.executor).toMatchObject({ exit_code: 1, error: expect.stringContaining(own), isolation: "clean" });
      expect((meta.executor as { argv: string[] }).argv).toEqual([
        "cline",
        "--json",
        "--auto-approve",
        "true",
        "--config",
        path.join(realpathSync(s.dir), s.iterFile(1, "cline")),
        "Your task follows.",
      ]);
      expect((await s.runner(["log", "--iteration", "1"])).stdout).toContain(`runner_error: agent_failed: ${own}`);
      expect(meta.durations.total_ms - meta.durations.agent_ms).toBeLessThan(5_000);
      // Cline does not retry a 401: one model request.
      expect(chatRequests(mock)).toHaveLength(1);
      // Clean: Cline's state went to the iteration's folder, nothing to the user's ~/.cline.
      expect(existsSync(path.join(s.dir, s.iterFile(1, "cline/data/logs/cline.log")))).toBe(true);
      expect(existsSync(path.join(home, ".cline", "data", "sessions"))).toBe(false);
      console.log(`cline: 401 reported, agent ${meta.durations.agent_ms} ms, step ${meta.durations.total_ms} ms`);
    },
    SESSION_BUDGET_MS,
  );

  it(
    "a model that hangs: Cline is killed at the deadline, nothing of it is left, the timeout is a runner error",
    async () => {
      const mock = await clineAgent.mock([{ kind: "hang", mode: "mid-stream" }]);
      const { s } = await clineRepo("cline-hang", mock, { timeoutSeconds: HANG_BUDGET_SECONDS });
      const step = await drive(s, ["step"]);
      expect(step.exitCode).toBe(1);
      expect(step.stderr).toContain(
        `Iteration 1 ended in a runner error: the agent did not finish within the iteration budget of ${HANG_BUDGET_SECONDS} s and was killed`,
      );
      expect(mock.requests.some((request) => request.answeredWith === "hang")).toBe(true);
      expect(s.meta(1).executor).toMatchObject({ timed_out: true });
      expect(processesOf(realpathSync(s.dir))).toEqual([]);
    },
    SESSION_BUDGET_MS,
  );

  it(
    "a rate limit Cline gives up on (six 429s) is recorded with its reset, `runner run` waits it out and the leaf passes on the next session",
    async () => {
      // The first session's first request meets 429 six times (the request and the AI SDK's five retries under Cline).
      const mock = await clineAgent.mock(answerFileLimitModel(Array.from({ length: 6 }, () => RATE_LIMITED)));
      const { s } = await clineRepo("cline-limit", mock, { env: { RUNNER_TEST_HOOKS: "1", RUNNER_TEST_WAIT_SCALE: "0.01" } });
      const run = await drive(s, ["run", "--json"]);
      expect(run.exitCode, run.stderr).toBe(0);
      const limit = s.meta(1).limit as { kind: string; resets_at: string | null; message: string };
      // The provider's "Please try again in 2.4s." is the reset, counted from the time of Cline's error event.
      expect(limit).toMatchObject({ kind: "rate", message: expect.stringMatching(/^Rate limit reached for .* Please try again in 2\.4s\.$/) });
      expect(limit.resets_at).not.toBeNull();
      expect(chatRequests(mock).filter((request) => request.answeredWith === "error")).toHaveLength(6);
      const waits = runEvents(run.stdout).filter((event) => event.type === "wait");
      expect(waits).toHaveLength(1);
      expect(waits[0]).toMatchObject({ cause: "limit" });
      expect(await s.subjects()).toEqual([subject(s.runId, 1, "root", "decompose", "skipped"), subject(s.runId, 2, "root", "execute", "pass")]);
      expect(s.readTree().root).toMatchObject({ passes: true, attempts: 0 });
      expect((await s.runner(["log", "--iteration", "1"])).stdout).toMatch(/\nlimit: rate limit/);
    },
    SESSIONS_BUDGET_MS,
  );

  it(
    "cline --help lists every flag the module passes; `cline auth` saves the provider settings the tests give Cline",
    async () => {
      const home = tempDir("runner-cline-home-");
      const env: Record<string, string | undefined> = { ...process.env, HOME: home, NO_COLOR: "1", CLINE_NO_AUTO_UPDATE: "1" };
      for (const name of CLINE_ENV) delete env[name];
      const help = await execa(clineAgent.program(), ["--help"], { reject: false, timeout: 60_000, env, stdin: "ignore" });
      const text = `${String(help.stdout)}\n${String(help.stderr)}`;
      const flags = documentedFlags(readFileSync(path.join(PROJECT_ROOT, "src/agents/cline.ts"), "utf8"), "cline");
      const listed = (flag: string) => new RegExp(`(^|[\\s,])${flag.replace(/-/g, "\\-")}([\\s,=<]|$)`, "m").test(text);
      expect(flags.filter((flag) => !listed(flag))).toEqual([]);
      expect(flags).toEqual(expect.arrayContaining(["--json", "--auto-approve", "--config", "-m"]));

      const url = "http://127.0.0.1:9";
      const auth = await execa(
        clineAgent.program(),
        ["auth", "--provider", "openai-compatible", "--apikey", KEY, "--modelid", CLINE_MOCK_MODEL, "--baseurl", `${url}/v1`],
        { reject: false, timeout: 60_000, env, stdin: "ignore" },
      );
      expect(auth.exitCode, String(auth.stderr)).toBe(0);
      const saved = JSON.parse(readFileSync(path.join(home, ".cline", "data", "settings", "providers.json"), "utf8")) as Record<string, unknown>;
      const withoutTime = (settings: Record<string, unknown>) =>
        JSON.parse(JSON.stringify(settings).replace(/"updatedAt":"[^"]*"/g, '"updatedAt":""')) as unknown;
      expect(withoutTime(saved)).toEqual(withoutTime(clineProviderSettings(url, KEY)));
    },
    SESSION_BUDGET_MS,
  );
});
