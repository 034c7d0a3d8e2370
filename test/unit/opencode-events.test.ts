// OpenCode's event stream (`opencode run --format json`) read by src/agents/opencode.ts, on lines as
// the pinned OpenCode 1.18.33 printed them against test/helpers/mock-opencode.ts (docs/agents.md).
import { describe, expect, it } from "vitest";
import { AgentEventReader, STATUS_PREFIX } from "../../src/agents/event-reader.js";
import { opencodeLimit, opencodeStepUsage } from "../../src/agents/opencode.js";
import { localClock } from "../../src/adapters/executors/agent-session.js";
import { agentFailure } from "../../src/core/agent/agent-failure.js";

const CLOCK = localClock(() => new Date(2026, 10, 25, 23, 37).getTime());
const lines = (...events: object[]) => events.map((event) => `${JSON.stringify(event)}\n`).join("");
const SES = "ses_deafb427dffeoEC3Ue7GbXcmjM";
const TOKENS = { total: 1280, input: 900, output: 64, reasoning: 16, cache: { write: 0, read: 300 } };

const stepStart = { type: "step_start", timestamp: 1795648965151, sessionID: SES, part: { id: "prt_1", sessionID: SES, type: "step-start" } };
const stepFinish = (reason: string) => ({
  type: "step_finish",
  timestamp: 1795648965455,
  sessionID: SES,
  part: { id: "prt_2", reason, sessionID: SES, type: "step-finish", tokens: TOKENS, cost: 0.00106 },
});

const success = lines(
  stepStart,
  {
    type: "tool_use",
    timestamp: 1795648965455,
    sessionID: SES,
    part: {
      type: "tool",
      tool: "bash",
      callID: "call_mock_0",
      state: {
        status: "completed",
        input: { command: "just ci", description: "Run just ci" },
        output: "ci ok\n",
        metadata: { output: "ci ok\n", exit: 0, truncated: false },
        title: "just ci",
      },
    },
  },
  stepFinish("tool-calls"),
  stepStart,
  {
    type: "tool_use",
    timestamp: 1795648966139,
    sessionID: SES,
    part: {
      type: "tool",
      tool: "write",
      callID: "call_mock_1",
      state: {
        status: "completed",
        input: { filePath: "answer.json", content: '{"status":"done"}' },
        output: "Wrote file successfully.",
        metadata: { filepath: "/tmp/oc-VCtWNE/repo/answer.json", exists: false },
      },
    },
  },
  stepFinish("tool-calls"),
  stepStart,
  { type: "text", timestamp: 1795648966262, sessionID: SES, part: { type: "text", text: '{"status":"done","summary":"wrote out.txt"}' } },
  stepFinish("stop"),
);

describe("OpenCode events", () => {
  it("shows commands, writes and messages; counts steps; sums each step's tokens and cost; split anywhere", () => {
    for (const cut of [1, 33, 700, success.length - 2]) {
      const reader = new AgentEventReader("opencode", CLOCK);
      const shown = [...reader.push(success.slice(0, cut)), ...reader.push(success.slice(cut)), ...reader.end()];
      expect(shown.filter((line) => !line.startsWith(STATUS_PREFIX))).toEqual([
        "$ just ci",
        "✓ just ci",
        "✎ answer.json (write)",
        '» {"status":"done","summary":"wrote out.txt"}',
      ]);
      expect(reader.session).toMatchObject({ agent: "opencode", sessionId: SES, turns: 3 });
      // Input counts the cached tokens; output counts the reasoning tokens (the API's 1200 / 300 cached / 80 / 16, three times).
      expect(reader.session.usage).toMatchObject({ input_tokens: 3600, cached_input_tokens: 900, output_tokens: 240, reasoning_tokens: 48 });
      expect(reader.session.usage!.cost_usd).toBeCloseTo(0.00318, 10);
      expect(reader.session.error).toBeUndefined();
      expect(shown.at(-1)).toBe(`${STATUS_PREFIX}step 3 · 3.6k tokens in (900 cached) · 240 out · $0.0032`);
    }
  });

  it("a model without a price: no cost", () => {
    expect(opencodeStepUsage({ tokens: TOKENS })).toMatchObject({ input_tokens: 1200, cost_usd: null });
  });

  const error = (status: number, message: string, headers: Record<string, string> = {}, body = "") => ({
    type: "error",
    timestamp: Date.UTC(2026, 10, 25, 23, 37, 38),
    sessionID: SES,
    error: {
      name: "APIError",
      data: {
        message,
        statusCode: status,
        isRetryable: status === 429,
        responseHeaders: { "x-request-id": "req_mock", ...headers },
        responseBody: body,
      },
    },
  });

  it("a 401: the provider's message, with the status, is OpenCode's failure", () => {
    const reader = new AgentEventReader("opencode", CLOCK);
    const shown = reader.push(
      lines(error(401, "Incorrect API key provided: sk-mock***. You can find your API key at https://platform.openai.com/account/api-keys.")),
    );
    const own = "Incorrect API key provided: sk-mock***. You can find your API key at https://platform.openai.com/account/api-keys. (API status 401)";
    expect(shown[0]).toBe(`✗ ${own}`);
    expect(reader.session.error).toBe(own);
    expect(reader.session.limit).toBeUndefined();
    expect(agentFailure({ agent: "opencode", exitCode: 1, ownError: reader.session.error, answered: false, stderrTail: "" })).toBe(
      "opencode failed (exit code 1): Incorrect API key provided: sk-mock***. You can find your API key at https://platform.openai.com/account/api-keys. (API status 401)",
    );
  });

  it("a 429 OpenCode gave up on is a rate limit, reset at the event's time plus retry-after", () => {
    const message =
      "Rate limit reached for gpt-6.1-sol in organization org-mock on tokens per min (TPM): Limit 30000, Used 30000, Requested 1200. Please try again in 2.4s.";
    const reader = new AgentEventReader("opencode", CLOCK);
    reader.push(lines(error(429, message, { "retry-after": "20" })));
    expect(reader.session.limit).toEqual({ kind: "rate", resetsAt: "2026-11-25T23:37:58.000Z", message });
    expect(opencodeLimit(error(429, message), CLOCK)).toEqual({ kind: "rate", message });
  });

  it("OpenAI's insufficient_quota is a usage limit", () => {
    const body =
      '{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","code":"insufficient_quota"}}';
    expect(opencodeLimit(error(429, "You exceeded your current quota, please check your plan and billing details.", {}, body), CLOCK)).toMatchObject({
      kind: "usage",
    });
    expect(opencodeLimit(error(500, "The server had an error while processing your request."), CLOCK)).toBeUndefined();
  });

  it("a permission OpenCode would ask for is rejected in `opencode run` (exit 0, no answer): a failure in its words", () => {
    const reader = new AgentEventReader("opencode", CLOCK);
    const shown = reader.push(
      lines(stepStart, {
        type: "tool_use",
        timestamp: 1795650052994,
        sessionID: SES,
        part: {
          type: "tool",
          tool: "bash",
          callID: "call_mock_0",
          state: { status: "error", input: { command: "just ci" }, error: "The user rejected permission to use this specific tool call." },
        },
      }),
    );
    expect(shown[0]).toBe("✗ bash: The user rejected permission to use this specific tool call.");
    expect(agentFailure({ agent: "opencode", exitCode: 0, ownError: reader.session.error, answered: false, stderrTail: "" })).toBe(
      "opencode failed (exit code 0): bash needs a permission OpenCode would ask for, and `opencode run` cannot ask: The user rejected permission to use this specific tool call",
    );
  });
});
