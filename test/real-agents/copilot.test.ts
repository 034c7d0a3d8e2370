// The runner with the real GitHub Copilot CLI (@github/copilot, pinned in versions.json, installed
// outside node_modules by scripts/install-test-agents.mjs) against the scripted model provider
// (test/helpers/mock-copilot.ts: Copilot's BYOK mode, COPILOT_PROVIDER_BASE_URL at 127.0.0.1), in
// real git repositories, through the built binary: `copilot` on PATH as `npm i -g` puts it, the
// runner's default permissions, an empty HOME (so an empty ~/.copilot), COPILOT_OFFLINE=true (what
// a BYOK user without network sets: no GitHub sign-in, telemetry or update check) and a package
// cache shared by the tests (COPILOT_PKG_CACHE_HOME: the native binary unpacks its 235 MB
// JavaScript once, not per HOME). Copilot has no output-schema mode: the scripted model writes the
// answer with Copilot's `create` tool to the file the prompt names. The repository, its guard and
// the three-leaf model are the other real-agent tests' own (test/helpers/real-agent-repo.ts).
import { execa } from "execa";
import { readdirSync, readFileSync, realpathSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { agentsCacheDir } from "../../scripts/install-test-agents.mjs";
import { documentedFlags } from "../helpers/fake-agents.js";
import { copilotMockEnv, startMockCopilot } from "../helpers/mock-copilot.js";
import type { ErrorTurn, MockServerHandle, ModelTurn } from "../helpers/mock-model-script.js";
import {
  checkLogFile,
  expectLeafRun,
  processesOf,
  realAgent,
  realAgentScenario,
  threeLeafModel,
  HANG_BUDGET_SECONDS,
  REAL_AGENT_TEST_TIMEOUT,
} from "../helpers/real-agent-repo.js";
import { subject, type Scenario } from "../helpers/scenario.js";
import { PROJECT_ROOT, runEvents, tempDir } from "../helpers/sandbox.js";

const copilot = realAgent("copilot", startMockCopilot);
const KEY = "sk-mock-copilot-key-123";
/** Where the tests' Copilot binaries unpack their JavaScript (once for all tests, race-safe: Copilot unpacks into a temp folder and renames it). */
const PKG_CACHE = path.join(agentsCacheDir(), "copilot-pkg-cache");
/** Variables of the test process that would give Copilot credentials, permissions or a provider of their own. */
const COPILOT_ENV_UNSET = [
  "COPILOT_GITHUB_TOKEN",
  "GH_TOKEN",
  "GITHUB_TOKEN",
  "GH_HOST",
  "COPILOT_GH_HOST",
  "COPILOT_ALLOW_ALL",
  "COPILOT_HOME",
  "COPILOT_PROVIDER_TYPE",
  "COPILOT_PROVIDER_BEARER_TOKEN",
  "COPILOT_PROVIDER_API_KEY_COMMAND",
  "COPILOT_PROVIDER_WIRE_API",
];

/** The answer file the prompt names (Copilot writes it with its own `create` tool). */
function answerFile(conversation: string): string {
  const file = /Write your answer as JSON to the file `([^`]+)`/.exec(conversation)?.[1];
  if (!file) throw new Error("mock: the prompt names no answer file");
  return file;
}

/** The work of one session, then the answer written to the file the prompt names, then a last word. */
function session(conversation: string, work: ModelTurn[], answer: Record<string, unknown> | string): ModelTurn[] {
  return [...work, { kind: "write", path: answerFile(conversation), content: `${JSON.stringify(answer)}\n` }, { kind: "final", answer: "Done." }];
}

/** A rate limit Copilot retries by itself (it honours retry-after). */
const RATE_LIMITED: ErrorTurn = { kind: "error", status: 429, headers: { "retry-after": "1" } };

/**
 * The run of the other real agents (real-agent-repo.ts) with one leaf, b (decompose, a guard failure,
 * a retry, a pass: 3 sessions), with Copilot's answer: each session's answer is written to the file
 * the prompt names; b's first request meets two 429s, which Copilot waits out itself.
 */
function copilotOneLeafModel(): (conversation: string) => ModelTurn[] {
  const model = threeLeafModel(["b"]);
  const scripts = new WeakMap<ModelTurn[], ModelTurn[]>();
  return (conversation) => {
    const script = model(conversation);
    if (!scripts.has(script)) {
      const final = script.at(-1);
      const work = script
        .slice(0, -1)
        .map((turn, i) =>
          i === 0 && /Your task: node `b`/.test(conversation) && /Attempts used: 0 of/.test(conversation)
            ? { ...turn, errorsBefore: [RATE_LIMITED, RATE_LIMITED] }
            : turn,
        );
      scripts.set(script, session(conversation, work, final?.kind === "final" ? final.answer : "no answer"));
    }
    return scripts.get(script)!;
  };
}

/** The environment of a user's Copilot in BYOK mode, offline, with an empty HOME. */
function copilotEnv(home: string): Record<string, string> {
  return {
    PATH: copilot.path(),
    HOME: home,
    XDG_CACHE_HOME: path.join(home, ".cache"),
    XDG_CONFIG_HOME: path.join(home, ".config"),
    XDG_STATE_HOME: path.join(home, ".local", "state"),
    COPILOT_PKG_CACHE_HOME: PKG_CACHE,
    COPILOT_OFFLINE: "true",
    NO_COLOR: "1",
  };
}

/** A repository on run branch `runId` whose executor is the real Copilot CLI, pointed at `mock` (without one: no provider, no token). */
async function copilotRepo(
  runId: string,
  mock: MockServerHandle | undefined,
  options: { timeoutSeconds?: number; env?: Record<string, string>; executor?: string[] } = {},
): Promise<{ s: Scenario; checkLog: string; home: string }> {
  const home = tempDir("runner-copilot-home-");
  const checkLog = checkLogFile();
  const env: Record<string, string> = {
    ...copilotEnv(home),
    CHECK_LOG: checkLog,
    ...(mock ? copilotMockEnv(mock.url, KEY) : {}),
    ...options.env,
  };
  const executor = options.executor ?? ['kind = "copilot"', 'allowed_tools = ["shell(node)"]'];
  const s = await realAgentScenario(runId, { env, executor, timeoutSeconds: options.timeoutSeconds });
  for (const name of COPILOT_ENV_UNSET) if (!(name in env)) delete s.env[name];
  // Without a provider, a user's Copilot signs in with GitHub: not offline.
  if (!mock) for (const name of [...Object.keys(copilotMockEnv("", "")), "COPILOT_OFFLINE"]) delete s.env[name];
  return { s, checkLog, home };
}

const chatRequests = (mock: MockServerHandle) => mock.requests.filter((request) => request.path === "/v1/chat/completions");

describe("runner with the real copilot", { timeout: REAL_AGENT_TEST_TIMEOUT }, () => {
  it("`runner run` drives a tree to passes=true: a decomposition into one leaf, `just ci` run by the agent and by the guard, one guard failure and a retry, two 429s Copilot waits out itself, usage from its usage report", async () => {
    const mock = await copilot.mock(copilotOneLeafModel());
    const { s, checkLog } = await copilotRepo("copilot-run", mock);
    const started = Date.now();
    const run = await s.runner(["run"]);
    console.log(`copilot: runner run of 3 iterations in ${Date.now() - started} ms`);
    expect(run.stderr).toBe("");
    expect(run.exitCode).toBe(0);
    await expectLeafRun(s, checkLog, ["b"]);

    // The 429s were Copilot's to wait out: served, retried, not a limit of the run.
    expect(chatRequests(mock).filter((request) => request.answeredWith === "error")).toHaveLength(2);
    expect(s.meta(2).limit ?? null).toBeNull();
    // The key goes to the provider as a bearer token (recorded redacted); no request went anywhere else.
    expect(chatRequests(mock)[0]!.headers.authorization).toBe("***");
    expect(mock.requests.every((request) => request.path === "/v1/chat/completions")).toBe(true);

    // Usage per iteration, from Copilot's usage report (the mock: 1200 in, 300 cached, 80 out, 16 reasoning per response).
    for (let iteration = 1; iteration <= 3; iteration++) {
      const meta = s.meta(iteration);
      const requests = iteration === 1 ? 3 : 4;
      expect(meta.usage, `iteration ${iteration}`).toMatchObject({
        input_tokens: 1200 * requests,
        cached_input_tokens: 300 * requests,
        output_tokens: 80 * requests,
        reasoning_tokens: 16 * requests,
        cost_usd: null,
        copilot: { model_requests: requests, premium_requests: 0 },
      });
      expect(meta.executor).toMatchObject({ exit_code: 0, error: null, session_id: expect.stringMatching(/^[0-9a-f-]{36}$/), isolation: "user" });
      const argv = (meta.executor as { argv: string[] }).argv;
      expect(argv.slice(0, 12)).toEqual([
        "copilot",
        "--output-format",
        "json",
        "--no-auto-update",
        "--allow-tool",
        "write",
        "--allow-tool",
        "shell(just ci)",
        "--allow-tool",
        "shell(just)",
        "--allow-tool",
        "shell(node)",
      ]);
      expect(argv.slice(12)).toEqual(["--usage-output-file", path.join(realpathSync(s.dir), s.iterFile(iteration, "agent-usage.json"))]);
    }
    expect(run.stdout).toMatch(/\nusage: tokens [\d,]+ in \([\d,]+ cached\), [\d,]+ out/);
    for (let iteration = 1; iteration <= 3; iteration++) {
      for (const file of readdirSync(path.join(s.dir, s.iterFile(iteration, "")))) {
        expect(readFileSync(path.join(s.dir, s.iterFile(iteration, file)), "utf8"), file).not.toContain(KEY);
      }
    }
  });

  it("a 401 from the model provider is reported within seconds, in Copilot's own words (isolation = clean)", async () => {
    const mock = await copilot.mock([{ kind: "error", status: 401 }]);
    const { s } = await copilotRepo("copilot-401", mock, { executor: ['kind = "copilot"', 'isolation = "clean"'] });
    const step = await s.step();
    expect(step.exitCode).toBe(1);
    const own = `copilot failed (exit code 1): Authentication failed with provider at ${mock.url}/v1 (HTTP 401). Check your COPILOT_PROVIDER_API_KEY, COPILOT_PROVIDER_API_KEY_COMMAND, or COPILOT_PROVIDER_BEARER_TOKEN`;
    expect(step.stderr).toContain(`Iteration 1 ended in a runner error: ${own}`);
    const meta = s.meta(1);
    expect(meta.executor).toMatchObject({ exit_code: 1, error: expect.stringContaining(own), isolation: "clean" });
    expect((meta.executor as { argv: string[] }).argv).toContain("--disable-builtin-mcps");
    expect((await s.runner(["log", "--iteration", "1"])).stdout).toContain(`runner_error: agent_failed: ${own}`);
    expect(meta.durations.total_ms - meta.durations.agent_ms).toBeLessThan(5_000);
    // Copilot retries a 401 twice ("transient_auth_error"), then gives up: three requests.
    expect(chatRequests(mock).filter((request) => request.answeredWith === "error")).toHaveLength(3);
    console.log(`copilot: 401 reported, agent ${meta.durations.agent_ms} ms, step ${meta.durations.total_ms} ms`);
  });

  it("without a provider or a GitHub token Copilot stops at once: its sign-in error from stderr is the runner error", async () => {
    const { s } = await copilotRepo("copilot-no-auth", undefined);
    const step = await s.step();
    expect(step.exitCode).toBe(1);
    const own =
      "copilot failed (exit code 1): No authentication information found. Copilot can be authenticated with GitHub using an OAuth Token or a Fine-Grained Personal Access Token. To authenticate, you can use any of the following methods: • Start 'copilot' and run the '/login' command • Set the COPILOT_GITHUB_TOKEN, GH_TOKEN, or GITHUB_TOKEN environment variable • Run 'gh auth login' to authenticate with the GitHub CLI";
    expect(step.stderr).toContain(`Iteration 1 ended in a runner error: ${own}`);
    expect(s.meta(1).executor).toMatchObject({ exit_code: 1, error: expect.stringContaining(own) });
    expect(s.meta(1).durations.agent_ms).toBeLessThan(60_000);
    console.log(`copilot: no sign-in reported, agent ${s.meta(1).durations.agent_ms} ms`);
  });

  it("a model that hangs: Copilot is killed at the deadline, nothing of it is left, the timeout is a runner error", async () => {
    const mock = await copilot.mock([{ kind: "hang", mode: "mid-stream" }]);
    const { s } = await copilotRepo("copilot-hang", mock, { timeoutSeconds: HANG_BUDGET_SECONDS });
    const step = await s.step();
    expect(step.exitCode).toBe(1);
    expect(step.stderr).toContain(
      `Iteration 1 ended in a runner error: the agent did not finish within the iteration budget of ${HANG_BUDGET_SECONDS} s and was killed`,
    );
    expect(mock.requests.some((request) => request.answeredWith === "hang")).toBe(true);
    expect(s.meta(1).executor).toMatchObject({ timed_out: true });
    expect(processesOf(realpathSync(s.dir))).toEqual([]);
  });

  it("a rate limit Copilot gives up on (six 429s) is recorded with the reset its message names, `runner run` waits it out and the leaf passes on the next session", async () => {
    // One script per session (the answer file names the iteration); the first session's first request meets 429 six times (Copilot's request and its five retries).
    const scripts = new Map<string, ModelTurn[]>();
    const mock = await copilot.mock((conversation) => {
      const file = answerFile(conversation);
      if (!scripts.has(file)) {
        const limited = scripts.size === 0 ? { errorsBefore: Array.from({ length: 6 }, () => RATE_LIMITED) } : {};
        scripts.set(
          file,
          session(conversation, [{ kind: "shell", command: "node act.mjs write root ok", ...limited }], {
            status: "done",
            summary: "Wrote src/root.txt",
          }),
        );
      }
      return scripts.get(file)!;
    });
    const { s } = await copilotRepo("copilot-limit", mock, { env: { RUNNER_TEST_HOOKS: "1", RUNNER_TEST_WAIT_SCALE: "0.01" } });
    const run = await s.runner(["run", "--json"]);
    expect(run.exitCode, run.stderr).toBe(0);
    const limit = s.meta(1).limit as { kind: string; resets_at: string | null; message: string };
    expect(limit).toMatchObject({
      kind: "rate",
      message: expect.stringMatching(
        /^Failed to get response from the AI model; retried 5 times .* Last error: 429 Rate limit reached for .* Please try again in 2\.4s\.$/,
      ),
    });
    expect(limit.resets_at).not.toBeNull();
    const waits = runEvents(run.stdout).filter((event) => event.type === "wait");
    expect(waits).toHaveLength(1);
    expect(waits[0]).toMatchObject({ cause: "limit" });
    expect(await s.subjects()).toEqual([subject(s.runId, 1, "root", "decompose", "skipped"), subject(s.runId, 2, "root", "execute", "pass")]);
    expect(s.readTree().root).toMatchObject({ passes: true, attempts: 0 });
    expect((await s.runner(["log", "--iteration", "1"])).stdout).toMatch(/\nlimit: rate limit/);
  });

  it("copilot --help lists every flag the module passes", async () => {
    const home = tempDir("runner-copilot-help-");
    const help = await execa(copilot.program(), ["--help"], {
      reject: false,
      timeout: 60_000,
      env: { ...process.env, ...copilotEnv(home) },
      stdin: "ignore",
    });
    const text = `${String(help.stdout)}\n${String(help.stderr)}`;
    const flags = documentedFlags(readFileSync(path.join(PROJECT_ROOT, "src/agents/copilot.ts"), "utf8"), "copilot");
    const listed = (flag: string) => new RegExp(`(^|[\\s,])${flag.replace(/-/g, "\\-")}([\\s,=<\\[]|$)`, "m").test(text);
    expect(flags.filter((flag) => !listed(flag))).toEqual([]);
    expect(flags).toEqual(
      expect.arrayContaining(["--output-format", "--no-auto-update", "--allow-tool", "--usage-output-file", "--disable-builtin-mcps", "--model"]),
    );
  });
});
