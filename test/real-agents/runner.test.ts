// The runner with the real Codex CLI and Claude Code (pinned in versions.json, installed outside
// node_modules by scripts/install-test-agents.mjs) against the scripted model servers, in real git
// repositories, through the built binary: `codex` and `claude` are on PATH as a user's install puts
// them, each with its default sandbox / permission settings, an empty HOME, and the mock's address
// and key in the environment (Codex: a custom provider in [executor] config_overrides).
// The repository, its guard and the scripted model's hands: test/helpers/real-agent-repo.ts.
import { execa } from "execa";
import { mkdirSync, readFileSync, readdirSync, realpathSync, symlinkSync } from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { installTestAgents } from "../../scripts/install-test-agents.mjs";
import { documentedFlags } from "../helpers/fake-agents.js";
import { startMockAnthropic } from "../helpers/mock-anthropic.js";
import type { MockServerHandle, ModelTurn } from "../helpers/mock-model-script.js";
import { codexMockProviderArgs, startMockOpenAI } from "../helpers/mock-openai.js";
import {
  checkLogFile,
  expectLeafRun,
  processesOf,
  HANG_BUDGET_SECONDS,
  realAgentScenario,
  REAL_AGENT_TEST_TIMEOUT,
  threeLeafModel,
} from "../helpers/real-agent-repo.js";
import { subject, type Scenario } from "../helpers/scenario.js";
import { PROJECT_ROOT, runEvents, tempDir, type tree } from "../helpers/sandbox.js";

type Agent = "codex" | "claude";

let agents: Record<Agent, string>;
let agentBin: string;
const servers: MockServerHandle[] = [];

beforeAll(() => {
  agents = installTestAgents({ log: (line: string) => console.log(line) }) as Record<Agent, string>;
  // `codex` and `claude` on PATH, as `npm i -g` puts them.
  agentBin = tempDir("runner-agent-bin-");
  for (const agent of ["codex", "claude"] as const) symlinkSync(agents[agent], path.join(agentBin, agent));
}, 10 * 60_000);

afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});
afterAll(async () => {
  for (const server of servers.splice(0)) await server.close();
});

async function mockFor(agent: Agent, script: ModelTurn[] | ((conversation: string) => ModelTurn[])): Promise<MockServerHandle> {
  const server = await (agent === "codex" ? startMockOpenAI({ script }) : startMockAnthropic({ script }));
  servers.push(server);
  return server;
}

const toml = (values: string[]) => `[${values.map((value) => JSON.stringify(value)).join(", ")}]`;

/** A repository on run branch `runId` whose executor is the real `agent`, pointed at `mock`. */
async function agentRepo(
  agent: Agent,
  runId: string,
  mock: MockServerHandle,
  options: {
    timeoutSeconds?: number;
    env?: Record<string, string>;
    tree?: ReturnType<typeof tree>;
    executor?: string[];
    providerRetries?: number;
  } = {},
): Promise<{ s: Scenario; checkLog: string }> {
  const home = tempDir(`runner-${agent}-home-`);
  mkdirSync(path.join(home, ".codex"));
  mkdirSync(path.join(home, ".claude"));
  const checkLog = checkLogFile();
  const env: Record<string, string> = {
    PATH: `${agentBin}${path.delimiter}${process.env.PATH ?? ""}`,
    HOME: home,
    CHECK_LOG: checkLog,
    ...(agent === "codex"
      ? { CODEX_HOME: path.join(home, ".codex"), MOCK_OPENAI_API_KEY: "sk-mock-codex-key-123" }
      : { CLAUDE_CONFIG_DIR: path.join(home, ".claude"), ANTHROPIC_BASE_URL: mock.url, ANTHROPIC_API_KEY: "sk-ant-mock-claude-key-123" }),
    ...options.env,
  };
  // The guard is the default, `just ci`; Codex reaches the mock through a custom provider, Claude
  // through ANTHROPIC_BASE_URL. Claude may also run the project's act.mjs (the user's own rule).
  const executor =
    options.executor ??
    (agent === "codex"
      ? [
          'kind = "codex"',
          `config_overrides = ${toml(codexMockProviderArgs(mock.url, { requestMaxRetries: options.providerRetries, streamMaxRetries: options.providerRetries }).filter((arg) => arg !== "-c"))}`,
        ]
      : ['kind = "claude"', `allowed_tools = ${toml(["Bash(node act.mjs:*)"])}`]);
  const s = await realAgentScenario(`${runId}`, { env, executor, timeoutSeconds: options.timeoutSeconds, tree: options.tree });
  return { s, checkLog };
}

for (const agent of ["codex", "claude"] as const) {
  describe(`runner with the real ${agent}`, { timeout: REAL_AGENT_TEST_TIMEOUT }, () => {
    it("`runner run` drives a three-leaf tree to passes=true: a decomposition that edits the tree, `just ci` run by the agent and by the guard, one guard failure and a retry, usage recorded", async () => {
      const mock = await mockFor(agent, threeLeafModel());
      const { s, checkLog } = await agentRepo(agent, `${agent}-run`, mock);
      const started = Date.now();
      const run = await s.runner(["run"]);
      console.log(`${agent}: runner run of 5 iterations in ${Date.now() - started} ms`);
      expect(run.stderr).toBe("");
      expect(run.exitCode).toBe(0);
      // Five sessions (b fails its guard once); `just ci` ran inside the agent's session, then as the guard.
      await expectLeafRun(s, checkLog);

      // Usage per iteration in meta.json, summed in the summary.
      for (let iteration = 1; iteration <= 5; iteration++) {
        const meta = s.meta(iteration);
        expect(meta.usage, `iteration ${iteration}`).toMatchObject({ input_tokens: expect.any(Number), output_tokens: expect.any(Number) });
        expect((meta.usage as { input_tokens: number }).input_tokens).toBeGreaterThan(0);
        expect(meta.executor).toMatchObject({ exit_code: 0, error: null, session_id: expect.any(String), isolation: "user" });
        if (agent === "claude") expect((meta.usage as { cost_usd: number }).cost_usd).toBeGreaterThan(0);
        else expect(meta.usage).toMatchObject({ cost_usd: null, reasoning_tokens: expect.any(Number), codex: { thread_id: expect.any(String) } });
      }
      expect(run.stdout).toMatch(/\nusage: tokens [\d,]+ in \([\d,]+ cached\), [\d,]+ out/);
      if (agent === "claude") expect(run.stdout).toMatch(/; cost \$\d+\.\d{4}$/m);
      // The secret key never reaches what the runner writes.
      const key = agent === "codex" ? "sk-mock-codex-key-123" : "sk-ant-mock-claude-key-123";
      for (let iteration = 1; iteration <= 5; iteration++) {
        for (const file of readdirSync(path.join(s.dir, s.iterFile(iteration, "")))) {
          expect(readFileSync(path.join(s.dir, s.iterFile(iteration, file)), "utf8"), file).not.toContain(key);
        }
      }
    });

    it("a 401 from the model API is reported within seconds of the agent's exit, in the agent's own words", async () => {
      const mock = await mockFor(agent, [{ kind: "error", status: 401 }]);
      // Claude Code retries a 401 up to 10 times over minutes by default, Codex reconnects 5 times
      // (6.5 s; binaries.test.ts shows both): one retry, and none, are enough here.
      const { s } = await agentRepo(
        agent,
        `${agent}-401`,
        mock,
        agent === "claude" ? { env: { CLAUDE_CODE_MAX_RETRIES: "1" } } : { providerRetries: 0 },
      );
      const step = await s.step();
      expect(step.exitCode).toBe(1);
      const own =
        agent === "codex"
          ? "codex failed (exit code 1): unexpected status 401 Unauthorized: Incorrect API key provided"
          : "claude failed (exit code 1): Invalid API key · Fix external API key (API status 401)";
      expect(step.stderr).toContain(`Iteration 1 ended in a runner error: ${own}`);
      expect(step.stderr).not.toMatch(/output file|not valid JSON/);
      const meta = s.meta(1);
      expect(meta.executor).toMatchObject({ exit_code: 1, error: expect.stringContaining(own) });
      expect((await s.runner(["log", "--iteration", "1"])).stdout).toContain(`runner_error: agent_failed: ${own}`);
      const durations = meta.durations;
      expect(durations.total_ms - durations.agent_ms).toBeLessThan(5_000);
      console.log(`${agent}: 401 reported, agent ${durations.agent_ms} ms, step ${durations.total_ms} ms`);
    });

    it("a model that hangs: the agent is killed at the deadline, nothing of it is left, the timeout is a runner error", async () => {
      const mock = await mockFor(agent, [{ kind: "hang", mode: agent === "codex" ? "mid-stream" : "no-response" }]);
      // A budget the agent reaches its model within on a loaded machine (real agents took 20–30 s to start there).
      const { s } = await agentRepo(agent, `${agent}-hang`, mock, { timeoutSeconds: HANG_BUDGET_SECONDS });
      const step = await s.step();
      expect(step.exitCode).toBe(1);
      expect(step.stderr).toContain(
        `Iteration 1 ended in a runner error: the agent did not finish within the iteration budget of ${HANG_BUDGET_SECONDS} s and was killed`,
      );
      expect(mock.requests.some((request) => request.path === (agent === "codex" ? "/v1/responses" : "/v1/messages"))).toBe(true);
      expect(s.meta(1).executor).toMatchObject({ timed_out: true });
      expect(processesOf(realpathSync(s.dir))).toEqual([]);
    });

    it("a rate or usage limit is recorded as a fact of the run in meta.json", async () => {
      const resetsAt = Math.floor(Date.now() / 1000) + 600;
      const turn: ModelTurn =
        agent === "codex"
          ? {
              kind: "error",
              status: 429,
              body: {
                error: {
                  type: "usage_limit_reached",
                  message: "The usage limit has been reached",
                  plan_type: "plus",
                  resets_at: resetsAt,
                  resets_in_seconds: 600,
                },
              },
            }
          : { kind: "error", status: 429, headers: { "retry-after": "1" } };
      const mock = await mockFor(agent, [turn]);
      const { s } = await agentRepo(agent, `${agent}-limit`, mock, { env: agent === "claude" ? { CLAUDE_CODE_MAX_RETRIES: "0" } : {} });
      const step = await s.step();
      expect(step.exitCode).toBe(1);
      const limit = s.meta(1).limit as { kind: string; resets_at: string | null; message: string };
      if (agent === "codex") {
        expect(limit).toMatchObject({ kind: "usage", message: expect.stringMatching(/^You.ve hit your usage limit/) });
        // Codex states the reset as a local clock time to the minute.
        expect(Math.abs(Date.parse(limit.resets_at!) - resetsAt * 1000)).toBeLessThanOrEqual(60_000);
      } else {
        expect(limit).toEqual({ kind: "rate", resets_at: null, message: expect.stringMatching(/^API Error: Request rejected \(429\)/) });
      }
      expect((await s.runner(["log", "--iteration", "1"])).stdout).toMatch(/\nlimit: (rate|usage) limit/);
    });

    it("`runner run` waits out the limit the real agent met and goes on: the leaf passes on the next session", async () => {
      // Codex names the minute its usage limit resets (a minute ahead here); Claude's 429 without a
      // reset is a rate limit, waited for a first guess of 60 s. The waits run at a hundredth.
      // Codex rounds the reset down to its minute: a reset 50 s into a minute shows whether the
      // runner waits for the reset itself or returns too early and meets the limit again.
      const resetsAt = (Math.ceil(Date.now() / 60_000) + 1) * 60 + 50;
      const limited: ModelTurn =
        agent === "codex"
          ? {
              kind: "error",
              status: 429,
              body: {
                error: {
                  type: "usage_limit_reached",
                  message: "The usage limit has been reached",
                  plan_type: "plus",
                  resets_at: resetsAt,
                  resets_in_seconds: resetsAt - Math.floor(Date.now() / 1000),
                },
              },
            }
          : { kind: "error", status: 429, headers: { "retry-after": "1" } };
      // The limit is served once, to the first session's first request; the next session is served the work.
      const mock = await mockFor(agent, [
        { kind: "shell", command: "node act.mjs write root ok", errorsBefore: [limited] },
        { kind: "final", answer: { status: "done", summary: "Wrote src/root.txt" } },
      ]);
      const { s } = await agentRepo(agent, `${agent}-limit-wait`, mock, {
        env: { RUNNER_TEST_HOOKS: "1", RUNNER_TEST_WAIT_SCALE: "0.01", ...(agent === "claude" ? { CLAUDE_CODE_MAX_RETRIES: "0" } : {}) },
        providerRetries: 0,
      });
      const run = await s.runner(["run", "--json"]);
      expect(run.exitCode, run.stderr).toBe(0);
      const waits = runEvents(run.stdout).filter((event) => event.type === "wait");
      expect(waits).toHaveLength(1);
      expect(waits[0]).toMatchObject({ cause: "limit" });
      if (agent === "codex") {
        // Until the reset itself (the end of the minute Codex names, and a margin), not before it.
        expect(Date.parse(String(waits[0]!.until))).toBeGreaterThanOrEqual(resetsAt * 1000);
        expect(Date.parse(String(waits[0]!.until))).toBeLessThanOrEqual((resetsAt + 20) * 1000);
      } else {
        expect(waits[0]!.seconds).toBe(60);
      }
      // The failed session changed nothing: by the classification rule its iteration is a decompose.
      expect(await s.subjects()).toEqual([subject(s.runId, 1, "root", "decompose", "skipped"), subject(s.runId, 2, "root", "execute", "pass")]);
      expect(s.meta(1).limit).toMatchObject({ kind: agent === "codex" ? "usage" : "rate" });
      expect(s.readTree().root).toMatchObject({ passes: true, attempts: 0 });
      expect(await s.git(["status", "--porcelain"])).toBe("");
    });
  });
}

describe("runner with the real claude: its own limits", { timeout: REAL_AGENT_TEST_TIMEOUT }, () => {
  it("max_turns reached: the runner error is Claude's own error_max_turns message", async () => {
    const mock = await mockFor("claude", [
      { kind: "shell", command: "just ci" },
      { kind: "shell", command: "just ci" },
      { kind: "final", answer: { status: "done", summary: "never" } },
    ]);
    const { s } = await agentRepo("claude", "claude-turns", mock, { executor: ['kind = "claude"', "max_turns = 1"] });
    const step = await s.step();
    expect(step.exitCode).toBe(1);
    expect(step.stderr).toMatch(/Iteration 1 ended in a runner error: claude failed \(exit code 1\): Reached maximum number of turns \(1\)\. /);
    expect((s.meta(1).executor as { argv: string[] }).argv).toEqual(expect.arrayContaining(["--max-turns", "1"]));
  });
});

// The flags the adapters document in their header comment are the ones the pinned binaries know.
describe("the pinned CLIs' --help lists every flag the adapters pass", () => {
  async function helpText(agent: Agent, args: string[]): Promise<string> {
    const home = tempDir("runner-cli-home-");
    mkdirSync(path.join(home, ".codex"));
    const help = await execa(agents[agent], args, {
      reject: false,
      timeout: 30_000,
      env: { ...process.env, HOME: home, CODEX_HOME: path.join(home, ".codex"), NO_COLOR: "1" },
      stdin: "ignore",
    });
    return `${String(help.stdout)}\n${String(help.stderr)}`;
  }
  const listed = (text: string, flag: string) => new RegExp(`(^|[\\s,])${flag.replace(/-/g, "\\-")}([\\s,=<]|$)`, "m").test(text);

  it("codex exec --help", async () => {
    const text = await helpText("codex", ["exec", "--help"]);
    const flags = documentedFlags(readFileSync(path.join(PROJECT_ROOT, "src/agents/codex.ts"), "utf8"), "codex").filter((flag) => flag !== "-");
    expect(flags.filter((flag) => !listed(text, flag))).toEqual([]);
    expect(text).toMatch(/read-only.*workspace-write.*danger-full-access/s);
  });

  it("claude --help", async () => {
    const text = await helpText("claude", ["--help"]);
    const flags = documentedFlags(readFileSync(path.join(PROJECT_ROOT, "src/agents/claude.ts"), "utf8"), "claude");
    // --max-turns is accepted in print mode but hidden from --help (docs/agents.md).
    expect(flags.filter((flag) => flag !== "--max-turns" && !listed(text, flag))).toEqual([]);
    for (const mode of ["acceptEdits", "auto", "bypassPermissions", "manual", "dontAsk", "plan"]) expect(text).toContain(mode);
  });
});
