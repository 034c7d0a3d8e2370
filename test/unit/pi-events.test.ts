// pi's event stream (`pi --mode json`) read by src/agents/pi.ts, on lines as the pinned pi 0.73.1
// printed them against the scripted Chat Completions server (test/helpers/mock-pi.ts) and the
// scripted Anthropic server (test/helpers/mock-anthropic.ts) (docs/agents.md). The message_update
// events repeat the partial message and are left out here except one (they show nothing).
import { describe, expect, it } from "vitest";
import { AgentEventReader, STATUS_PREFIX } from "../../src/agents/event-reader.js";
import { pi, piLimit, piMessageUsage, piRetryDelay, piStderrError, piWords } from "../../src/agents/pi.js";
import { localClock } from "../../src/adapters/executors/agent-session.js";
import { agentFailure } from "../../src/core/agent/agent-failure.js";

const CLOCK = localClock(() => new Date(2026, 10, 26, 23, 52).getTime());
const lines = (...events: object[]) => events.map((event) => `${JSON.stringify(event)}\n`).join("");
const SESSION = "01a21a0f-792d-71b2-b382-fb452c66dd78";
const USAGE = {
  input: 900,
  output: 80,
  cacheRead: 300,
  cacheWrite: 0,
  totalTokens: 1280,
  cost: { input: 0.0009, output: 0.00015999999999999999, cacheRead: 0.00015, cacheWrite: 0, total: 0.00121 },
};
const ZERO = {
  input: 0,
  output: 0,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};
const model = { api: "openai-completions", provider: "runner_mock", model: "mock-model" };

const header = { type: "session", version: 3, id: SESSION, timestamp: "2026-11-26T22:52:31.411Z", cwd: "/tmp/pi-repo-A1EOD6" };
const assistantStart = {
  type: "message_start",
  message: { role: "assistant", content: [], ...model, usage: ZERO, stopReason: "stop", timestamp: 1795733552249 },
};
const toolUse = (id: string, name: string, args: object, n: number) => ({
  type: "message_end",
  message: {
    role: "assistant",
    content: [{ type: "toolCall", id, name, arguments: args }],
    ...model,
    usage: USAGE,
    stopReason: "toolUse",
    timestamp: 1795733552249,
    responseId: `chatcmpl_mock_${n}`,
  },
});
const errorEnd = (errorMessage: string, api = "openai-completions") => ({
  type: "message_end",
  message: { role: "assistant", content: [], ...model, api, usage: ZERO, stopReason: "error", timestamp: 1795733601593, errorMessage },
});

const RATE =
  "429 Rate limit reached for gpt-6.1-sol in organization org-mock on tokens per min (TPM): Limit 30000, Used 30000, Requested 1200. Please try again in 2.4s.";

const success = lines(
  header,
  { type: "agent_start" },
  { type: "turn_start" },
  { type: "message_start", message: { role: "user", content: [{ type: "text", text: "Do the thing" }], timestamp: 1795733551705 } },
  { type: "message_end", message: { role: "user", content: [{ type: "text", text: "Do the thing" }], timestamp: 1795733551705 } },
  assistantStart,
  {
    type: "message_update",
    assistantMessageEvent: {
      type: "toolcall_start",
      contentIndex: 0,
      partial: { role: "assistant", content: [{ type: "toolCall", id: "call_mock_0", name: "bash", arguments: { command: "just ci" } }] },
    },
  },
  toolUse("call_mock_0", "bash", { command: "just ci" }, 1),
  { type: "tool_execution_start", toolCallId: "call_mock_0", toolName: "bash", args: { command: "just ci" } },
  { type: "tool_execution_update", toolCallId: "call_mock_0", toolName: "bash", args: { command: "just ci" }, partialResult: { content: [] } },
  {
    type: "tool_execution_end",
    toolCallId: "call_mock_0",
    toolName: "bash",
    result: { content: [{ type: "text", text: "ci ok: 1 file(s)\n" }] },
    isError: false,
  },
  { type: "turn_start" },
  assistantStart,
  toolUse("call_mock_1", "bash", { command: "echo oops >&2; exit 3" }, 2),
  { type: "tool_execution_start", toolCallId: "call_mock_1", toolName: "bash", args: { command: "echo oops >&2; exit 3" } },
  {
    type: "tool_execution_end",
    toolCallId: "call_mock_1",
    toolName: "bash",
    result: { content: [{ type: "text", text: "oops\n\n\nCommand exited with code 3" }], details: {} },
    isError: true,
  },
  { type: "turn_start" },
  assistantStart,
  toolUse("call_mock_2", "write", { path: "answer.json", content: '{"status":"done","summary":"x"}\n' }, 3),
  {
    type: "tool_execution_start",
    toolCallId: "call_mock_2",
    toolName: "write",
    args: { path: "answer.json", content: '{"status":"done","summary":"x"}\n' },
  },
  {
    type: "tool_execution_end",
    toolCallId: "call_mock_2",
    toolName: "write",
    result: { content: [{ type: "text", text: "Successfully wrote 32 bytes to answer.json" }] },
    isError: false,
  },
  { type: "turn_start" },
  assistantStart,
  {
    type: "message_end",
    message: {
      role: "assistant",
      content: [{ type: "text", text: "Done." }],
      ...model,
      usage: USAGE,
      stopReason: "stop",
      timestamp: 1795733552746,
      responseId: "chatcmpl_mock_4",
    },
  },
  { type: "agent_end", messages: [] },
);

describe("pi events", () => {
  it("shows the model, commands with their outcome, writes and messages; counts responses; sums tokens and cost; split anywhere", () => {
    for (const cut of [1, 57, 900, success.length - 2]) {
      const reader = new AgentEventReader("pi", CLOCK);
      const shown = [...reader.push(success.slice(0, cut)), ...reader.push(success.slice(cut)), ...reader.end()];
      expect(shown.filter((line) => !line.startsWith(STATUS_PREFIX))).toEqual([
        "session runner_mock/mock-model",
        "$ just ci",
        "✓ just ci",
        "$ echo oops >&2; exit 3",
        "✗ echo oops >&2; exit 3 (exit 3)",
        "✎ answer.json (write)",
        "» Done.",
      ]);
      expect(reader.session).toMatchObject({ agent: "pi", sessionId: SESSION, turns: 4 });
      // Input counts the cached tokens (the API's 1200 with 300 cached, 80 out, four times); cost is pi's own sum of `cost.total`.
      expect(reader.session.usage).toMatchObject({
        input_tokens: 4800,
        cached_input_tokens: 1200,
        output_tokens: 320,
        reasoning_tokens: null,
        pi: { responses: 4, cache_write_tokens: 0 },
      });
      expect(reader.session.usage!.cost_usd).toBeCloseTo(0.00484, 10);
      expect(reader.session.error).toBeUndefined();
      expect(reader.status()).toBe("turn 4 · 4.8k tokens in (1.2k cached) · 320 out · $0.0048");
    }
  });

  it("a 401 ends the session with exit code 0: the last assistant message's errorMessage is pi's failure, in the provider's words with the status", () => {
    const reader = new AgentEventReader("pi", CLOCK);
    const shown = reader.push(
      lines(
        header,
        assistantStart,
        errorEnd("401 Incorrect API key provided: sk-mock***. You can find your API key at https://platform.openai.com/account/api-keys."),
        { type: "agent_end", messages: [] },
      ),
    );
    const own = "Incorrect API key provided: sk-mock***. You can find your API key at https://platform.openai.com/account/api-keys. (API status 401)";
    expect(shown).toContain(`✗ ${own}`);
    expect(reader.session).toMatchObject({ error: own, turns: 0 });
    expect(reader.session.usage).toBeUndefined();
    expect(reader.session.limit).toBeUndefined();
    expect(agentFailure({ agent: "pi", exitCode: 0, ownError: reader.session.error, answered: false, stderrTail: "" })).toBe(
      `pi failed (exit code 0): ${own}`,
    );
  });

  it("an Anthropic-compatible provider's JSON error body is read as its message", () => {
    expect(piWords('401 {"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"},"request_id":"req_mock"}')).toBe(
      "invalid x-api-key (API status 401)",
    );
    expect(piWords("Provider finish_reason: content_filter")).toBe("Provider finish_reason: content_filter");
    expect(piWords("401 {not json")).toBe("{not json (API status 401)");
  });

  it("429s pi retried and then got past are no failure and no limit of the session", () => {
    const reader = new AgentEventReader("pi", CLOCK);
    reader.push(
      lines(
        header,
        assistantStart,
        errorEnd(RATE),
        { type: "auto_retry_start", attempt: 1, maxAttempts: 3, delayMs: 2000, errorMessage: RATE },
        toolUse("call_mock_0", "bash", { command: "just ci" }, 1),
        { type: "auto_retry_end", success: true, attempt: 1 },
      ),
    );
    expect(reader.session.error).toBeUndefined();
    expect(reader.session.limit).toBeUndefined();
    expect(reader.session.turns).toBe(1);
  });

  it("a 429 pi gave up on (its retries, then auto_retry_end) is a rate limit that resets after the delay the provider named, from the message's time", () => {
    const reader = new AgentEventReader("pi", CLOCK);
    const events: object[] = [header, assistantStart];
    for (let attempt = 1; attempt <= 3; attempt++) {
      events.push(errorEnd(RATE), { type: "auto_retry_start", attempt, maxAttempts: 3, delayMs: 1000 * 2 ** attempt, errorMessage: RATE });
    }
    events.push(errorEnd(RATE), { type: "auto_retry_end", success: false, attempt: 3, finalError: RATE });
    const shown = reader.push(lines(...events));
    const words =
      "Rate limit reached for gpt-6.1-sol in organization org-mock on tokens per min (TPM): Limit 30000, Used 30000, Requested 1200. Please try again in 2.4s. (API status 429)";
    expect(shown).toContain(`↻ retry 1/3 in 2 s after: ${words}`);
    expect(shown).toContain(`↻ retry 3/3 in 8 s after: ${words}`);
    expect(reader.session.error).toBe(words);
    expect(reader.session.limit).toEqual({ kind: "rate", resetsAt: new Date(1795733601593 + 2400).toISOString(), message: words });
  });

  it("reads the provider's retry delay, and tells a quota from a rate", () => {
    expect(piRetryDelay("Please try again in 2.4s.")).toBe(2.4);
    expect(piRetryDelay("Please try again in 20ms.")).toBeCloseTo(0.02, 10);
    expect(piRetryDelay("Please try again in 1m30.5s.")).toBe(90.5);
    expect(piRetryDelay("Please retry in 12.3s.")).toBe(12.3);
    expect(piRetryDelay("Rate limit reached")).toBeUndefined();
    expect(piLimit("429 You exceeded your current quota, please check your plan and billing details.", 0, CLOCK)).toMatchObject({ kind: "usage" });
    expect(
      piLimit(
        '429 {"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}',
        0,
        CLOCK,
      ),
    ).toEqual({
      kind: "rate",
      message: "Number of request tokens has exceeded your per-minute rate limit (API status 429)",
    });
    expect(piLimit("401 Incorrect API key provided", 0, CLOCK)).toBeUndefined();
    expect(piLimit("500 The server had an error while processing your request. Sorry about that!", 0, CLOCK)).toBeUndefined();
  });

  it("a start-up failure on stderr (exit code 1, before any event but the header) is pi's own sentence", () => {
    const noKey =
      "No API key found for anthropic.\n\nUse /login to log into a provider via OAuth or API key. See:\n  /usr/lib/node_modules/@mariozechner/pi-coding-agent/docs/providers.md\n  /usr/lib/node_modules/@mariozechner/pi-coding-agent/docs/models.md";
    expect(piStderrError(noKey)).toBe("No API key found for anthropic.");
    expect(piStderrError('Error: Model "nosuch/foo" not found. Use --list-models to see available models.')).toBe(
      'Model "nosuch/foo" not found. Use --list-models to see available models.',
    );
    expect(piStderrError("Error: Unknown option: --bogus-flag")).toBe("Unknown option: --bogus-flag");
    expect(piStderrError("something else entirely")).toBeUndefined();
  });

  it("argv: json mode, the clean flags with isolation = clean, the model, extra_args last", () => {
    const input = {
      root: "/repo",
      outputFile: "/o.json",
      usageFile: "/agent-usage.json",
      schemaFile: "/s.json",
      schemaText: "{}",
      guardCommand: ["just", "ci"],
    };
    expect(pi.argv({ ...input, config: {}, isolation: "user" })).toEqual(["pi", "--mode", "json"]);
    expect(pi.argv({ ...input, config: { model: "anthropic/claude-opus-4-7:high", extra_args: ["--thinking", "low"] }, isolation: "clean" })).toEqual(
      [
        "pi",
        "--mode",
        "json",
        "--no-session",
        "--no-extensions",
        "--no-skills",
        "--no-prompt-templates",
        "--offline",
        "--model",
        "anthropic/claude-opus-4-7:high",
        "--thinking",
        "low",
      ],
    );
    expect(piMessageUsage({ input: 10, output: 5, cacheRead: 2, cacheWrite: 3, cost: { total: 0.5 } })).toMatchObject({
      input_tokens: 15,
      cached_input_tokens: 2,
      output_tokens: 5,
      cost_usd: 0.5,
      pi: { responses: 1, cache_write_tokens: 3 },
    });
  });
});
