// GitHub Copilot CLI's event stream (`copilot --output-format json`) and its usage report
// (`--usage-output-file`) read by src/agents/copilot.ts, on lines as the pinned Copilot CLI 1.0.102
// printed them against test/helpers/mock-copilot.ts (docs/agents.md; ids, timestamps and telemetry
// fields shortened).
import { describe, expect, it } from "vitest";
import { copilotArgv, copilotGuardRules, copilotLimit, copilotRetryDelay, copilotStderrError, copilotUsage } from "../../src/agents/copilot.js";
import { AgentEventReader, STATUS_PREFIX } from "../../src/agents/event-reader.js";
import { localClock } from "../../src/adapters/executors/agent-session.js";
import { agentFailure } from "../../src/core/agent/agent-failure.js";

const CLOCK = localClock(() => new Date(2026, 10, 26, 23, 0).getTime());
const lines = (...events: object[]) => events.map((event) => `${JSON.stringify(event)}\n`).join("");
const SESSION = "f0807cc0-423c-4ba0-ae90-d0896b75ea47";
const at = (seconds: number) => `2026-11-26T22:54:${String(seconds).padStart(2, "0")}.000Z`;

const turnStart = (turnId: string) => ({
  type: "assistant.turn_start",
  data: { turnId, interactionId: "7b39fc27" },
  id: `ts${turnId}`,
  timestamp: at(55),
});
const turnEnd = (turnId: string) => ({ type: "assistant.turn_end", data: { turnId }, id: `te${turnId}`, timestamp: at(55) });
const toolStart = (id: string, toolName: string, args: object) => ({
  type: "tool.execution_start",
  data: { toolCallId: id, toolName, arguments: args, turnId: "0", model: "mock-model", toolTitle: "Running command" },
  id: `s${id}`,
  timestamp: at(55),
});
const result = (exitCode: number) => ({
  type: "result",
  timestamp: at(56),
  sessionId: SESSION,
  exitCode,
  usage: { premiumRequests: 0, totalApiDurationMs: 40, sessionDurationMs: 497, codeChanges: { linesAdded: 0, linesRemoved: 0, filesModified: [] } },
});

const success = lines(
  {
    type: "session.skills_loaded",
    data: { skills: [{ name: "customize-cloud-agent", source: "builtin", enabled: true }] },
    ephemeral: true,
    id: "a",
    timestamp: at(54),
  },
  { type: "session.mcp_servers_loaded", ephemeral: true, data: { servers: [] }, id: "b", timestamp: at(54) },
  { type: "session.tools_updated", data: { model: "mock-model" }, ephemeral: true, id: "c", timestamp: at(55) },
  { type: "user.message", data: { content: "run it", transformedContent: "run it", messageId: "f0000145" }, id: "d", timestamp: at(55) },
  turnStart("0"),
  { type: "model.call_start", data: { turnId: "0", model: "mock-model" }, ephemeral: true, id: "e", timestamp: at(55) },
  {
    type: "assistant.message",
    data: {
      messageId: "0a66bbac",
      model: "mock-model",
      content: "",
      toolRequests: [{ toolCallId: "call_1", name: "bash", arguments: { command: "just ci", description: "run it" }, type: "function" }],
      turnId: "0",
    },
    id: "f",
    timestamp: at(55),
  },
  toolStart("call_1", "bash", { command: "just ci", description: "run it" }),
  {
    type: "tool.execution_complete",
    data: {
      toolCallId: "call_1",
      model: "mock-model",
      turnId: "0",
      shellExecution: { exitCode: 0 },
      success: true,
      result: { content: "ci ok\n<shellId: 0 completed with exit code 0>" },
    },
    id: "g",
    timestamp: at(55),
  },
  turnEnd("0"),
  turnStart("1"),
  toolStart("call_2", "create", { path: "/tmp/r/.runner/iterations/run/0002/output.json", file_text: '{"status":"done"}\n' }),
  {
    type: "tool.execution_complete",
    data: {
      toolCallId: "call_2",
      turnId: "1",
      fileEdits: [{ path: "/tmp/r/.runner/iterations/run/0002/output.json", kind: "create" }],
      success: true,
      result: { content: "Created file /tmp/r/.runner/iterations/run/0002/output.json with 18 characters" },
    },
    id: "h",
    timestamp: at(55),
  },
  turnEnd("1"),
  turnStart("2"),
  {
    type: "assistant.message",
    data: { messageId: "a40f77eb", model: "mock-model", content: "Done.", toolRequests: [], turnId: "2" },
    id: "i",
    timestamp: at(55),
  },
  turnEnd("2"),
  { type: "assistant.idle", data: {}, ephemeral: true, id: "j", timestamp: at(55) },
  result(0),
);

/** What the usage report says after three model requests of the mock (1200 in, 300 cached, 80 out, 16 reasoning each). */
const REPORT = {
  totalPremiumRequestCost: 0,
  totalUserRequests: 1,
  totalNanoAiu: 0,
  aiCreditsStatus: "unavailable",
  totalApiDurationMs: 40,
  sessionStartTime: "2026-11-26T22:54:54.810Z",
  codeChanges: { linesAdded: 0, linesRemoved: 0, filesModifiedCount: 0, filesModified: [] },
  modelMetrics: {
    "mock-model": {
      requests: { count: 3, cost: 0 },
      usage: { inputTokens: 3600, outputTokens: 240, cacheReadTokens: 900, cacheWriteTokens: 0, reasoningTokens: 48 },
      totalNanoAiu: 0,
      aiCreditsStatus: "unavailable",
    },
  },
  currentModel: "mock-model",
  lastCallInputTokens: 1200,
  lastCallOutputTokens: 80,
};

const sessionError = (data: object, seconds = 51) => ({ type: "session.error", data, id: "x", timestamp: at(seconds) });

describe("GitHub Copilot CLI events", () => {
  it("shows the model, commands, files written and messages; counts turns; takes the session id from the result; split anywhere", () => {
    for (const cut of [1, 40, 900, success.length - 2]) {
      const reader = new AgentEventReader("copilot", CLOCK);
      const shown = [...reader.push(success.slice(0, cut)), ...reader.push(success.slice(cut)), ...reader.end()];
      expect(shown.filter((line) => !line.startsWith(STATUS_PREFIX))).toEqual([
        "session mock-model",
        "$ just ci",
        "✓ just ci",
        "✎ /tmp/r/.runner/iterations/run/0002/output.json (create)",
        "» Done.",
      ]);
      expect(reader.session).toMatchObject({ agent: "copilot", sessionId: SESSION, turns: 3 });
      // The stream carries no token counts: those come with the usage report.
      expect(reader.session.usage).toBeUndefined();
      expect(reader.session.error).toBeUndefined();
      expect(shown.at(-1)).toBe(`${STATUS_PREFIX}turn 3`);
    }
  });

  it("takes tokens, reasoning, model requests and premium requests from the usage report (no cost in dollars) and shows them in the status", () => {
    const reader = new AgentEventReader("copilot", CLOCK);
    reader.push(success);
    reader.end();
    expect(reader.report(REPORT)).toEqual([`${STATUS_PREFIX}turn 3 · 3.6k tokens in (900 cached) · 240 out`]);
    expect(reader.session.usage).toMatchObject({
      input_tokens: 3600,
      cached_input_tokens: 900,
      output_tokens: 240,
      reasoning_tokens: 48,
      cost_usd: null,
      copilot: { model_requests: 3, premium_requests: 0, nano_ai_credits: 0 },
    });
    // Several models (a subagent on another one) are summed; a report without modelMetrics is no usage.
    const two = copilotUsage({
      modelMetrics: {
        a: { requests: { count: 1 }, usage: { inputTokens: 10, outputTokens: 2, cacheReadTokens: 4, reasoningTokens: 1 } },
        b: { requests: { count: 2 }, usage: { inputTokens: 5, outputTokens: 3 } },
      },
      totalPremiumRequestCost: 1.5,
    });
    expect(two).toMatchObject({
      input_tokens: 15,
      cached_input_tokens: 4,
      output_tokens: 5,
      reasoning_tokens: 1,
      copilot: { model_requests: 3, premium_requests: 1.5 },
    });
    expect(copilotUsage({ totalPremiumRequestCost: 1 })).toBeUndefined();
  });

  it("a permission prompt mode cannot put to anyone, a failing command and a failed edit are shown in Copilot's words", () => {
    const denied =
      "Permission denied because no interactive user response was available. Retry in an interactive session so the user can approve it, or try an alternative that does not require this permission.";
    const reader = new AgentEventReader("copilot", CLOCK);
    const shown = reader.push(
      lines(
        toolStart("call_0", "bash", { command: "node -e 1", description: "node" }),
        {
          type: "tool.execution_complete",
          data: { toolCallId: "call_0", success: false, error: { message: denied, code: "denied" } },
          id: "1",
          timestamp: at(1),
        },
        toolStart("call_1", "bash", { command: "just ci", description: "guard" }),
        {
          type: "tool.execution_complete",
          data: { toolCallId: "call_1", success: true, shellExecution: { exitCode: 1 } },
          id: "2",
          timestamp: at(2),
        },
        toolStart("call_2", "edit", { path: "/r/a.txt", old_str: "x", new_str: "y" }),
        {
          type: "tool.execution_complete",
          data: { toolCallId: "call_2", success: false, error: { message: "No match found", code: "failure" } },
          id: "3",
          timestamp: at(3),
        },
        toolStart("call_3", "view", { path: "/r/a.txt" }),
        toolStart("call_4", "grep", { pattern: "x" }),
        {
          type: "assistant.turn_retry",
          data: { turnId: "0", model: "mock-model", reason: "rate_limit" },
          ephemeral: true,
          id: "4",
          timestamp: at(4),
        },
        { type: "session.warning", data: { message: "Model is not in the built-in catalog." }, id: "5", timestamp: at(5) },
      ),
    );
    expect(shown.filter((line) => !line.startsWith(STATUS_PREFIX))).toEqual([
      "$ node -e 1",
      `⛔ bash: ${denied}`,
      "$ just ci",
      "✗ just ci (exit 1)",
      "✗ edit: No match found",
      "◦ read /r/a.txt",
      "⚙ grep",
      "↻ retry after rate_limit",
      "! Model is not in the built-in catalog.",
    ]);
    // A denial does not fail the session: Copilot goes on (and exits 0).
    expect(reader.session.error).toBeUndefined();
  });

  it("a 401 from the provider is Copilot's session.error, in its words on one line, with the last failed call kept", () => {
    const reader = new AgentEventReader("copilot", CLOCK);
    const shown = reader.push(
      lines(
        {
          type: "model.call_failure",
          data: {
            model: "mock-model",
            statusCode: 401,
            retryAttempt: 2,
            isByok: true,
            errorMessage: '{"message":"Incorrect API key provided: sk-mock***.","type":"invalid_request_error","code":"invalid_api_key"}',
          },
          ephemeral: true,
          id: "m",
          timestamp: at(38),
        },
        sessionError({
          errorType: "authentication",
          message:
            "Authentication failed with provider at http://127.0.0.1:41001/v1 (HTTP 401).\n  Check your COPILOT_PROVIDER_API_KEY, COPILOT_PROVIDER_API_KEY_COMMAND, or COPILOT_PROVIDER_BEARER_TOKEN.",
          statusCode: 401,
        }),
        result(1),
      ),
    );
    const own =
      "Authentication failed with provider at http://127.0.0.1:41001/v1 (HTTP 401). Check your COPILOT_PROVIDER_API_KEY, COPILOT_PROVIDER_API_KEY_COMMAND, or COPILOT_PROVIDER_BEARER_TOKEN.";
    expect(shown).toContain(`✗ ${own}`);
    expect(reader.session).toMatchObject({ error: own, sessionId: SESSION, lastErrorEvent: expect.stringContaining("401 {") });
    expect(reader.session.limit).toBeUndefined();
    expect(agentFailure({ agent: "copilot", exitCode: 1, ownError: reader.session.error, answered: false, stderrTail: "" })).toBe(
      "copilot failed (exit code 1): Authentication failed with provider at http://127.0.0.1:41001/v1 (HTTP 401). Check your COPILOT_PROVIDER_API_KEY, COPILOT_PROVIDER_API_KEY_COMMAND, or COPILOT_PROVIDER_BEARER_TOKEN",
    );
  });

  it("a 429 Copilot gave up on is a rate limit reset after the delay the message names, counted from the event's time", () => {
    const message =
      "Failed to get response from the AI model; retried 5 times (total retry wait time: 5.22 seconds) Last error: 429 Rate limit reached for mock-model. Please try again in 2.4s.";
    const event = sessionError({ errorType: "rate_limit", message, statusCode: 429 });
    expect(copilotLimit(event, CLOCK)).toEqual({ kind: "rate", resetsAt: "2026-11-26T22:54:53.400Z", message });
    // Copilot's own service limits, as users reported them (github/copilot-cli#2336; microsoft/vscode#325598).
    const hours =
      "429 Sorry, you've hit a rate limit that restricts the number of Copilot model requests you can make within a specific time period. Please try again in 2 hours.";
    expect(copilotLimit(sessionError({ errorType: "rate_limit", message: hours, statusCode: 429 }, 0), CLOCK)).toMatchObject({
      kind: "rate",
      resetsAt: "2026-11-27T00:54:00.000Z",
    });
    const session = "Sorry, you've exceeded your 5 hour session limits. Please retry after 2733 seconds. (user_global_rate_limited:pro)";
    expect(copilotLimit(sessionError({ errorType: "query", message: session }, 0), CLOCK)).toMatchObject({
      kind: "rate",
      resetsAt: "2026-11-26T23:39:33.000Z",
    });
    // Without a delay: a limit without a reset time.
    expect(copilotLimit(sessionError({ errorType: "rate_limit", message: "429 rate limit exceeded", statusCode: 429 }), CLOCK)).toEqual({
      kind: "rate",
      message: "429 rate limit exceeded",
    });
  });

  it("a 402 or an exhausted premium request allowance is a usage limit; other errors are no limit", () => {
    expect(copilotLimit(sessionError({ errorType: "query", message: "402 You have no quota", statusCode: 402 }), CLOCK)).toEqual({
      kind: "usage",
      message: "402 You have no quota",
    });
    const allowance =
      "You have exceeded your premium request allowance. We have automatically switched you to GPT-4.1 which is included with your plan. Enable additional paid premium requests to continue using premium models.";
    expect(copilotLimit(sessionError({ errorType: "query", message: allowance }), CLOCK)).toMatchObject({ kind: "usage" });
    expect(copilotLimit(sessionError({ errorType: "query", message: "500 internal error", statusCode: 500 }), CLOCK)).toBeUndefined();
    const reader = new AgentEventReader("copilot", CLOCK);
    reader.push(lines(sessionError({ errorType: "query", message: "402 You have no quota", statusCode: 402 })));
    expect(reader.session).toMatchObject({ error: "402 You have no quota", limit: { kind: "usage" } });
    // The status is named when the words do not name it.
    reader.push(lines(sessionError({ errorType: "query", message: "Bad gateway", statusCode: 502 })));
    expect(reader.session.error).toBe("Bad gateway (HTTP 502)");
  });

  it("a sign-in failure Copilot states on stderr only (no event) is read in its words, on one line", () => {
    const none = [
      "Error: No authentication information found.",
      "",
      "Copilot can be authenticated with GitHub using an OAuth Token or a Fine-Grained Personal Access Token.",
      "",
      "To authenticate, you can use any of the following methods:",
      "  • Start 'copilot' and run the '/login' command",
      "  • Set the COPILOT_GITHUB_TOKEN, GH_TOKEN, or GITHUB_TOKEN environment variable",
      "  • Run 'gh auth login' to authenticate with the GitHub CLI",
      "",
    ].join("\n");
    expect(copilotStderrError(none)).toBe(
      "No authentication information found. Copilot can be authenticated with GitHub using an OAuth Token or a Fine-Grained Personal Access Token. To authenticate, you can use any of the following methods: • Start 'copilot' and run the '/login' command • Set the COPILOT_GITHUB_TOKEN, GH_TOKEN, or GITHUB_TOKEN environment variable • Run 'gh auth login' to authenticate with the GitHub CLI",
    );
    const offline = [
      "Error: Authentication token found but could not be validated.",
      "",
      "  Failed to fetch PAT user login: network fetch failed: request failed: error sending request for url (https://api.github.com/copilot_internal/user)",
      "",
      "Your token may still be valid. Check your network connection and try again.",
    ].join("\n");
    expect(copilotStderrError(`some warning\n${offline}`)).toMatch(
      /^Authentication token found but could not be validated\. Failed to fetch PAT user login: .*copilot_internal\/user\) Your token may still be valid\./,
    );
    expect(copilotStderrError("Warning: preferred version 1.0.99 not found in package cache, using built-in version\n")).toBeUndefined();
  });

  it("reads the delays Copilot's and the providers' messages name", () => {
    expect(copilotRetryDelay("Please try again in 2.4s.")).toBe(2.4);
    expect(copilotRetryDelay("Please try again in 2 hours.")).toBe(7200);
    expect(copilotRetryDelay("Please retry after 2733 seconds.")).toBe(2733);
    expect(copilotRetryDelay("try again in 20 minutes")).toBe(1200);
    expect(copilotRetryDelay("try again in 500ms")).toBe(0.5);
    expect(copilotRetryDelay("retried 5 times (total retry wait time: 5.22 seconds)")).toBeUndefined();
  });

  it("argv: write and the guard's rules always, the user's rules after, the usage report beside output.json, clean leaves out the built-in MCP servers", () => {
    expect(copilotGuardRules(["just", "ci"])).toEqual(["shell(just ci)", "shell(just)"]);
    expect(copilotGuardRules(["make"])).toEqual(["shell(make)"]);
    expect(copilotGuardRules([])).toEqual([]);
    const usageFile = "/r/.runner/iterations/run/0001/agent-usage.json";
    expect(copilotArgv({ kind: "copilot", allowed_tools: ["shell(node)", "write"] }, ["just", "ci"], usageFile)).toEqual([
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
      "--usage-output-file",
      usageFile,
    ]);
    expect(
      copilotArgv({ kind: "copilot", isolation: "clean", model: "gpt-5.4", extra_args: ["--agent", "x"] }, ["npm", "test"], usageFile).slice(12),
    ).toEqual(["--disable-builtin-mcps", "--model", "gpt-5.4", "--agent", "x"]);
  });
});
