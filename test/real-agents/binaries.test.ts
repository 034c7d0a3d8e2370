// The real Codex CLI and Claude Code (pinned in versions.json, installed outside node_modules by
// scripts/install-test-agents.mjs) run against scripted model servers on 127.0.0.1, directly (the
// facts docs/agents.md cites; runner.test.ts drives them through the runner), with the flags
// docs/agents.md recommends. Each run gets a temp git repository
// and an empty HOME / CODEX_HOME / CLAUDE_CONFIG_DIR, so the user's own settings are never read.
import { readFileSync, rmSync, existsSync } from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { installTestAgents } from "../../scripts/install-test-agents.mjs";
import { type AgentSandbox, jsonLines, makeAgentSandbox, runAgent, waitFor } from "../helpers/agent-process.js";
import { anthropicScriptPosition, startMockAnthropic } from "../helpers/mock-anthropic.js";
import type { MockServerHandle, ModelTurn } from "../helpers/mock-model-script.js";
import { codexMockProviderArgs, startMockOpenAI } from "../helpers/mock-openai.js";

const PROJECT = path.resolve(import.meta.dirname, "..", "..");
const SCHEMA_FILE = path.join(PROJECT, "schemas", "agent_output", "v1.schema.json");
const ANSWER = { status: "done", summary: "wrote out.txt" };
/** `just` from this project's node_modules, as a user's PATH would have it. */
const PATH_WITH_JUST = `${path.join(PROJECT, "node_modules", ".bin")}:${process.env.PATH ?? ""}`;

let agents: Record<string, string>;
const cleanup: Array<() => Promise<void> | void> = [];

beforeAll(() => {
  agents = installTestAgents({ log: (line) => console.log(line) });
}, 10 * 60_000);

afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

afterAll(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

function sandbox(prefix: string): AgentSandbox {
  const box = makeAgentSandbox(prefix);
  cleanup.push(() => rmSync(box.root, { recursive: true, force: true }));
  return box;
}

async function track(server: Promise<MockServerHandle>): Promise<MockServerHandle> {
  const handle = await server;
  cleanup.push(() => handle.close());
  return handle;
}

const SHELL_TURN: ModelTurn = { kind: "shell", command: "just --version && echo ok > out.txt" };

describe("Codex CLI 0.169.0 against the mock Responses API", () => {
  function codexEnv(box: AgentSandbox): Record<string, string | undefined> {
    return {
      ...process.env,
      PATH: PATH_WITH_JUST,
      HOME: box.home,
      CODEX_HOME: path.join(box.home, ".codex"),
      MOCK_OPENAI_API_KEY: "sk-mock-codex-key",
    };
  }

  /** The argv docs/agents.md recommends, pointed at the mock. */
  function codexArgv(box: AgentSandbox, mockUrl: string, { loginShell = false } = {}): string[] {
    return [
      "exec",
      "--json",
      "--skip-git-repo-check",
      "--ephemeral",
      "--ignore-user-config",
      "-C",
      box.repo,
      "--sandbox",
      "workspace-write",
      ...(loginShell ? [] : ["-c", "allow_login_shell=false"]),
      "--output-schema",
      SCHEMA_FILE,
      "--output-last-message",
      path.join(box.root, "output.json"),
      ...codexMockProviderArgs(mockUrl),
      "-",
    ];
  }

  it("a: runs a shell command through its own tool, writes the file, and ends with the schema-shaped answer and usage", async () => {
    const box = sandbox("codex-a");
    const mock = await track(startMockOpenAI({ script: [SHELL_TURN, { kind: "final", answer: ANSWER }] }));
    const run = await runAgent(agents.codex!, codexArgv(box, mock.url), {
      cwd: box.repo,
      env: codexEnv(box),
      input: "Do the task.",
      deadlineMs: 60_000,
    });

    expect(run.exitCode, run.stderr).toBe(0);
    expect(readFileSync(path.join(box.repo, "out.txt"), "utf8")).toBe("ok\n");
    expect(JSON.parse(readFileSync(path.join(box.root, "output.json"), "utf8"))).toEqual(ANSWER);
    const main = mock.requests.filter((request) => request.path === "/v1/responses");
    expect(main.map((request) => request.position)).toEqual([0, 1]);
    // The command's output went back to the model.
    expect(JSON.stringify(main[1]!.body)).toMatch(/just 1\.\d+\.\d+/);
    // The output schema reached the model as strict structured output, verbatim ($schema and $id included).
    const format = (main[0]!.body as { text: { format: Record<string, unknown> } }).text.format;
    expect(format).toMatchObject({ type: "json_schema", strict: true, name: "codex_output_schema" });
    expect(format.schema).toEqual(JSON.parse(readFileSync(SCHEMA_FILE, "utf8")));
    expect(main[0]!.headers.authorization).toBe("***");

    const events = jsonLines(run.stdout);
    expect(events[0]).toMatchObject({ type: "thread.started", thread_id: expect.any(String) });
    const completed = events.find((event) => event.type === "turn.completed");
    // Usage is summed over the turn's two model requests (the mock reports 1200/300/80/16 each).
    expect(completed).toMatchObject({ usage: { input_tokens: 2400, cached_input_tokens: 600, output_tokens: 160, reasoning_output_tokens: 32 } });
    expect(events.find((event) => event.type === "item.completed" && (event.item as { type: string }).type === "agent_message")).toMatchObject({
      item: { text: JSON.stringify(ANSWER) },
    });
  });

  it("a: without allow_login_shell=false the command runs in `bash -lc`, whose /etc/profile drops `just` from PATH", async () => {
    const box = sandbox("codex-login");
    const mock = await track(startMockOpenAI({ script: [SHELL_TURN, { kind: "final", answer: ANSWER }] }));
    const run = await runAgent(agents.codex!, codexArgv(box, mock.url, { loginShell: true }), {
      cwd: box.repo,
      env: codexEnv(box),
      input: "Do the task.",
      deadlineMs: 60_000,
    });

    expect(run.exitCode, run.stderr).toBe(0);
    const command = jsonLines(run.stdout).find(
      (event) => event.type === "item.completed" && (event.item as { type: string }).type === "command_execution",
    );
    expect(command).toMatchObject({ item: { command: expect.stringContaining("bash -lc"), exit_code: 127 } });
    expect(existsSync(path.join(box.repo, "out.txt"))).toBe(false);
    if (existsSync("/etc/profile") && /PATH=/.test(readFileSync("/etc/profile", "utf8"))) {
      expect((command!.item as { aggregated_output: string }).aggregated_output).toContain("just: command not found");
    }
  });

  it("b: the workspace-write sandbox works here (as root, in a temp dir): writes inside the repository, not outside /tmp", async () => {
    const box = sandbox("codex-b");
    const outside = `/var/tmp/runner-sandbox-probe-${process.pid}`;
    const mock = await track(
      startMockOpenAI({
        script: [
          { kind: "shell", command: `echo inside > out.txt; touch ${outside}` },
          { kind: "final", answer: ANSWER },
        ],
      }),
    );
    const run = await runAgent(agents.codex!, codexArgv(box, mock.url), {
      cwd: box.repo,
      env: codexEnv(box),
      input: "Do the task.",
      deadlineMs: 60_000,
    });
    cleanup.push(() => rmSync(outside, { force: true }));

    expect(run.exitCode, run.stderr).toBe(0);
    expect(readFileSync(path.join(box.repo, "out.txt"), "utf8")).toBe("inside\n");
    expect(existsSync(outside)).toBe(false);
    expect(JSON.stringify(mock.requests.at(-1)!.body)).toContain("Read-only file system");
  });

  it("c: a 401 ends the turn with turn.failed and exit 1 after 5 reconnects", async () => {
    const box = sandbox("codex-c");
    const mock = await track(startMockOpenAI({ script: [{ kind: "error", status: 401 }] }));
    const run = await runAgent(agents.codex!, codexArgv(box, mock.url), {
      cwd: box.repo,
      env: codexEnv(box),
      input: "Do the task.",
      deadlineMs: 60_000,
    });

    expect(run.exitCode).toBe(1);
    const events = jsonLines(run.stdout);
    expect(events.filter((event) => event.type === "error" && String(event.message).startsWith("Reconnecting..."))).toHaveLength(5);
    expect(events.at(-1)).toMatchObject({
      type: "turn.failed",
      error: { message: expect.stringContaining("unexpected status 401 Unauthorized: Incorrect API key provided") },
    });
    expect(mock.requests.filter((request) => request.path === "/v1/responses")).toHaveLength(6);
    // --output-last-message is written even for a failed turn: empty, not JSON.
    expect(readFileSync(path.join(box.root, "output.json"), "utf8")).toBe("");
  });

  it("d: a model that stalls mid-stream leaves Codex waiting (stream_idle_timeout_ms defaults to 300 s); the group is killed", async () => {
    const box = sandbox("codex-d");
    const mock = await track(startMockOpenAI({ script: [{ kind: "hang", mode: "mid-stream" }] }));
    let stillRunning = false;
    const run = await runAgent(agents.codex!, codexArgv(box, mock.url), {
      cwd: box.repo,
      env: codexEnv(box),
      input: "Do the task.",
      deadlineMs: 30_000,
      whileRunning: async (isRunning) => {
        await waitFor(() => mock.requests.some((request) => request.path === "/v1/responses"), 20_000);
        await new Promise((resolve) => setTimeout(resolve, 3_000));
        stillRunning = isRunning();
      },
    });

    expect(stillRunning).toBe(true);
    expect(run.signal).toBe("SIGKILL");
    expect(jsonLines(run.stdout).map((event) => event.type)).toEqual(["thread.started", "turn.started"]);
  });

  it("e: a usage limit (429 usage_limit_reached with resets_at) fails at once with the reset time; a plain 429 is retried 5 times", async () => {
    const box = sandbox("codex-e");
    const resetsAt = Math.floor(Date.now() / 1000) + 600;
    const usageLimit = {
      error: {
        type: "usage_limit_reached",
        message: "The usage limit has been reached",
        plan_type: "plus",
        resets_at: resetsAt,
        resets_in_seconds: 600,
      },
    };
    const mock = await track(startMockOpenAI({ script: [{ kind: "error", status: 429, body: usageLimit }] }));
    const run = await runAgent(agents.codex!, codexArgv(box, mock.url), {
      cwd: box.repo,
      env: codexEnv(box),
      input: "Do the task.",
      deadlineMs: 60_000,
    });

    expect(run.exitCode).toBe(1);
    expect(mock.requests.filter((request) => request.path === "/v1/responses")).toHaveLength(1);
    expect(jsonLines(run.stdout).at(-1)).toMatchObject({
      type: "turn.failed",
      error: { message: expect.stringMatching(/^You.ve hit your usage limit\. .* try again at .*\d{1,2}:\d{2} [AP]M\.$/) },
    });

    const box2 = sandbox("codex-e2");
    const rateLimited = await track(startMockOpenAI({ script: [{ kind: "error", status: 429, headers: { "retry-after": "1" } }] }));
    const started = Date.now();
    const run2 = await runAgent(agents.codex!, codexArgv(box2, rateLimited.url), {
      cwd: box2.repo,
      env: codexEnv(box2),
      input: "Do the task.",
      deadlineMs: 60_000,
    });
    expect(run2.exitCode).toBe(1);
    expect(rateLimited.requests.filter((request) => request.path === "/v1/responses")).toHaveLength(6);
    expect(jsonLines(run2.stdout).at(-1)).toMatchObject({
      type: "turn.failed",
      error: { message: expect.stringContaining("exceeded retry limit, last status: 429 Too Many Requests") },
    });
    console.log(`codex: plain 429 gave up after ${Date.now() - started} ms`);
  });
});

describe("Claude Code 2.1.330 against the mock Messages API", () => {
  const SCHEMA_TEXT = readFileSync(SCHEMA_FILE, "utf8");
  /** The agent output schema without `$schema`/`$id`, which --json-schema refuses. */
  const PLAIN_SCHEMA = (() => {
    const { $schema: _schema, $id: _id, ...rest } = JSON.parse(SCHEMA_TEXT) as Record<string, unknown>;
    return JSON.stringify(rest);
  })();

  function claudeEnv(box: AgentSandbox, mockUrl: string, extra: Record<string, string> = {}): Record<string, string | undefined> {
    const env: Record<string, string | undefined> = {
      ...process.env,
      PATH: PATH_WITH_JUST,
      HOME: box.home,
      CLAUDE_CONFIG_DIR: path.join(box.home, ".claude"),
      ANTHROPIC_BASE_URL: mockUrl,
      ANTHROPIC_API_KEY: "sk-ant-mock-claude-key",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      ...extra,
    };
    delete env.ANTHROPIC_AUTH_TOKEN;
    delete env.CLAUDE_CODE_OAUTH_TOKEN;
    return env;
  }

  function claudeArgv(extra: string[] = []): string[] {
    return [
      "-p",
      "--output-format",
      "stream-json",
      "--verbose",
      "--json-schema",
      PLAIN_SCHEMA,
      "--permission-mode",
      "acceptEdits",
      "--allowedTools",
      "Bash(just:*)",
      "Bash(echo:*)",
      "--setting-sources",
      "project",
      "--strict-mcp-config",
      "--no-session-persistence",
      ...extra,
    ];
  }

  function resultOf(stdout: string): Record<string, unknown> | undefined {
    return jsonLines(stdout).findLast((event) => event.type === "result");
  }

  it("a: runs a shell command with Bash, writes a file with Write, and returns structured_output, usage and cost", async () => {
    const box = sandbox("claude-a");
    const mock = await track(
      startMockAnthropic({
        script: [SHELL_TURN, { kind: "write", path: "notes.txt", content: "written by Write\n" }, { kind: "final", answer: ANSWER }],
      }),
    );
    const run = await runAgent(agents.claude!, claudeArgv(), {
      cwd: box.repo,
      env: claudeEnv(box, mock.url),
      input: "Do the task.",
      deadlineMs: 60_000,
    });

    expect(run.exitCode, run.stderr).toBe(0);
    expect(readFileSync(path.join(box.repo, "out.txt"), "utf8")).toBe("ok\n");
    expect(readFileSync(path.join(box.repo, "notes.txt"), "utf8")).toBe("written by Write\n");
    const main = mock.requests.filter((request) => request.path === "/v1/messages");
    expect(main.map((request) => request.position)).toEqual([0, 1, 2]);
    expect(anthropicScriptPosition(main[2]!.body)).toBe(2);
    expect(JSON.stringify(main[1]!.body)).toMatch(/just 1\.\d+\.\d+/);
    // --json-schema becomes a StructuredOutput tool whose input schema is the given schema.
    const tools = (main[0]!.body as { tools: Array<{ name: string; input_schema: unknown }> }).tools;
    expect(tools.find((tool) => tool.name === "StructuredOutput")?.input_schema).toEqual(JSON.parse(PLAIN_SCHEMA));
    expect(main[0]!.headers["x-api-key"]).toBe("***");
    // CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1: no start-up probe (HEAD /api/hello).
    expect(mock.requests.filter((request) => request.path === "/api/hello")).toEqual([]);

    const events = jsonLines(run.stdout);
    expect(events[0]).toMatchObject({ type: "system", subtype: "init", permissionMode: "acceptEdits", session_id: expect.any(String) });
    expect(resultOf(run.stdout)).toMatchObject({
      type: "result",
      subtype: "success",
      is_error: false,
      structured_output: ANSWER,
      num_turns: expect.any(Number),
      total_cost_usd: expect.any(Number),
      duration_api_ms: expect.any(Number),
      session_id: expect.any(String),
      permission_denials: [],
      usage: { input_tokens: 2700, cache_read_input_tokens: 900, output_tokens: 240 },
      modelUsage: expect.any(Object),
    });
  });

  it("a: a schema with $schema (draft 2020-12) is refused before any model request", async () => {
    const box = sandbox("claude-schema");
    const mock = await track(startMockAnthropic({ script: [{ kind: "final", answer: ANSWER }] }));
    const argv = claudeArgv();
    argv[argv.indexOf("--json-schema") + 1] = JSON.stringify(JSON.parse(SCHEMA_TEXT));
    const run = await runAgent(agents.claude!, argv, { cwd: box.repo, env: claudeEnv(box, mock.url), input: "Do the task.", deadlineMs: 60_000 });

    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain(
      'Error: --json-schema is not a valid JSON Schema: no schema with key or ref "https://json-schema.org/draft/2020-12/schema"',
    );
    expect(mock.requests.filter((request) => request.path === "/v1/messages")).toEqual([]);
  });

  it("b: acceptEdits alone denies `just` in print mode (listed in permission_denials); root needs IS_SANDBOX=1 for bypassPermissions", async () => {
    const box = sandbox("claude-b");
    const mock = await track(startMockAnthropic({ script: [SHELL_TURN, { kind: "final", answer: ANSWER }] }));
    const argv = claudeArgv().filter((arg) => !arg.startsWith("Bash("));
    const denied = await runAgent(agents.claude!, argv, { cwd: box.repo, env: claudeEnv(box, mock.url), input: "Do the task.", deadlineMs: 60_000 });
    expect(denied.exitCode, denied.stderr).toBe(0);
    expect(existsSync(path.join(box.repo, "out.txt"))).toBe(false);
    expect(resultOf(denied.stdout)).toMatchObject({
      is_error: false,
      structured_output: ANSWER,
      permission_denials: [{ tool_name: "Bash", tool_input: { command: SHELL_TURN.command } }],
    });
    expect(jsonLines(denied.stdout).find((event) => event.subtype === "permission_denied")).toMatchObject({
      tool_name: "Bash",
      message: expect.stringContaining("requires approval: just --version"),
    });

    const bypass = claudeArgv(["--permission-mode", "bypassPermissions"]);
    if (process.getuid?.() === 0) {
      const refused = await runAgent(agents.claude!, bypass, {
        cwd: box.repo,
        env: claudeEnv(box, mock.url),
        input: "Do the task.",
        deadlineMs: 60_000,
      });
      expect(refused.exitCode).toBe(1);
      expect(refused.stderr).toContain("--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons");
    }
    const box2 = sandbox("claude-b2");
    const mock2 = await track(startMockAnthropic({ script: [SHELL_TURN, { kind: "final", answer: ANSWER }] }));
    const allowed = await runAgent(agents.claude!, bypass, {
      cwd: box2.repo,
      env: claudeEnv(box2, mock2.url, { IS_SANDBOX: "1" }),
      input: "Do the task.",
      deadlineMs: 60_000,
    });
    expect(allowed.exitCode, allowed.stderr).toBe(0);
    expect(readFileSync(path.join(box2.repo, "out.txt"), "utf8")).toBe("ok\n");
    expect(resultOf(allowed.stdout)).toMatchObject({ permission_denials: [] });
  });

  it("c: a 401 ends in a result event with is_error, api_error_status 401 and exit 1 (retries bounded by CLAUDE_CODE_MAX_RETRIES)", async () => {
    const box = sandbox("claude-c");
    const mock = await track(startMockAnthropic({ script: [{ kind: "error", status: 401 }] }));
    const run = await runAgent(agents.claude!, claudeArgv(), {
      cwd: box.repo,
      env: claudeEnv(box, mock.url, { CLAUDE_CODE_MAX_RETRIES: "1" }),
      input: "Do the task.",
      deadlineMs: 60_000,
    });

    expect(run.exitCode).toBe(1);
    expect(jsonLines(run.stdout).filter((event) => event.subtype === "api_retry")).toMatchObject([
      { attempt: 1, max_retries: 1, error_status: 401, error: "authentication_failed" },
    ]);
    expect(resultOf(run.stdout)).toMatchObject({
      type: "result",
      subtype: "success",
      is_error: true,
      api_error_status: 401,
      terminal_reason: "api_error",
      result: "Invalid API key · Fix external API key",
    });
    expect(mock.requests.filter((request) => request.path === "/v1/messages")).toHaveLength(2);
  });

  it("d: a model that never answers leaves Claude waiting; the group is killed", async () => {
    const box = sandbox("claude-d");
    const mock = await track(startMockAnthropic({ script: [{ kind: "hang", mode: "no-response" }] }));
    let stillRunning = false;
    const run = await runAgent(agents.claude!, claudeArgv(), {
      cwd: box.repo,
      env: claudeEnv(box, mock.url),
      input: "Do the task.",
      deadlineMs: 30_000,
      whileRunning: async (isRunning) => {
        await waitFor(() => mock.requests.some((request) => request.path === "/v1/messages"), 20_000);
        await new Promise((resolve) => setTimeout(resolve, 3_000));
        stillRunning = isRunning();
      },
    });

    expect(stillRunning).toBe(true);
    expect(run.signal).toBe("SIGKILL");
    expect(jsonLines(run.stdout).map((event) => `${String(event.type)}/${String(event.subtype)}`)).toEqual(["system/init"]);
  });

  it("e: a 429 with retry-after is retried (api_retry events honour it), then the result carries the provider's message", async () => {
    const box = sandbox("claude-e");
    const mock = await track(
      startMockAnthropic({
        script: [
          {
            kind: "error",
            status: 429,
            headers: { "retry-after": "1", "anthropic-ratelimit-input-tokens-reset": new Date(Date.now() + 60_000).toISOString() },
          },
        ],
      }),
    );
    const started = Date.now();
    const run = await runAgent(agents.claude!, claudeArgv(), {
      cwd: box.repo,
      env: claudeEnv(box, mock.url, { CLAUDE_CODE_MAX_RETRIES: "2" }),
      input: "Do the task.",
      deadlineMs: 60_000,
    });

    expect(run.exitCode).toBe(1);
    const retries = jsonLines(run.stdout).filter((event) => event.subtype === "api_retry");
    expect(retries).toMatchObject([
      { attempt: 1, max_retries: 2, error_status: 429, error: "rate_limit" },
      { attempt: 2, error_status: 429 },
    ]);
    for (const retry of retries) expect(retry.retry_delay_ms).toBeGreaterThanOrEqual(1000);
    expect(resultOf(run.stdout)).toMatchObject({
      is_error: true,
      api_error_status: 429,
      result: expect.stringMatching(/^API Error: Request rejected \(429\) · This request would exceed the rate limit/),
    });
    console.log(`claude: 429 with 2 retries gave up after ${Date.now() - started} ms`);
  });
});
