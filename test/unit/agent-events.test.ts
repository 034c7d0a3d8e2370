// The pure readers of the agents' event streams, limits, failures and usage (src/agents/, src/core/agent-*.ts),
// on event lines as the pinned Codex 0.169.0 and Claude Code 2.1.330 print them (docs/agents.md).
import { describe, expect, it } from "vitest";
import { unwrapShell } from "../../src/agents/agent.js";
import { claudeError, claudeLimit, claudeUsage } from "../../src/agents/claude.js";
import { codexLimit, codexResetTime, codexUsage } from "../../src/agents/codex.js";
import { AgentEventReader, STATUS_PREFIX } from "../../src/agents/event-reader.js";
import { agentFailure, lastLines } from "../../src/core/agent/agent-failure.js";
import { localClock } from "../../src/adapters/executors/agent-session.js";
import { addUsage, describeUsage, usageFromMeta } from "../../src/core/agent/agent-usage.js";

const NOW = new Date(2026, 10, 22, 14, 5).getTime();
/** The runner's clock (local time zone), stopped at NOW. */
const CLOCK = localClock(() => NOW);
const lines = (...events: object[]) => events.map((event) => `${JSON.stringify(event)}\n`).join("");

describe("Codex events", () => {
  const success = lines(
    { type: "thread.started", thread_id: "01a2052a-0d86-7f21-9cb3-2ba499bfe5f3" },
    { type: "turn.started" },
    {
      type: "item.started",
      item: {
        id: "item_0",
        type: "command_execution",
        command: "/bin/bash -c 'just ci && echo ok > out.txt'",
        aggregated_output: "",
        exit_code: null,
        status: "in_progress",
      },
    },
    {
      type: "item.completed",
      item: {
        id: "item_0",
        type: "command_execution",
        command: "/bin/bash -c 'just ci && echo ok > out.txt'",
        aggregated_output: "ok\n",
        exit_code: 0,
        status: "completed",
      },
    },
    { type: "item.completed", item: { id: "item_1", type: "file_change", changes: [{ path: "src/a.ts", kind: "add" }], status: "completed" } },
    { type: "item.completed", item: { id: "item_2", type: "agent_message", text: '{"status":"done","summary":"wrote out.txt"}' } },
    {
      type: "turn.completed",
      usage: { input_tokens: 2400, cached_input_tokens: 600, cache_write_input_tokens: 0, output_tokens: 160, reasoning_output_tokens: 32 },
    },
  );

  it("shows the commands, file changes and messages, and counts steps and tokens; split anywhere", () => {
    for (const cut of [1, 17, 200, success.length - 3]) {
      const reader = new AgentEventReader("codex", CLOCK);
      const shown = [...reader.push(success.slice(0, cut)), ...reader.push(success.slice(cut)), ...reader.end()];
      const activity = shown.filter((line) => !line.startsWith(STATUS_PREFIX));
      expect(activity).toEqual([
        "$ just ci && echo ok > out.txt",
        "✓ just ci && echo ok > out.txt",
        "✎ src/a.ts (add)",
        '» {"status":"done","summary":"wrote out.txt"}',
      ]);
      expect(shown.at(-1)).toBe(`${STATUS_PREFIX}step 3 · 2.4k tokens in (600 cached) · 160 out`);
      expect(reader.session).toMatchObject({ agent: "codex", sessionId: "01a2052a-0d86-7f21-9cb3-2ba499bfe5f3", turns: 3 });
      expect(reader.session.usage).toEqual({
        input_tokens: 2400,
        cached_input_tokens: 600,
        output_tokens: 160,
        reasoning_tokens: 32,
        cost_usd: null,
        codex: {
          thread_id: "01a2052a-0d86-7f21-9cb3-2ba499bfe5f3",
          usage: { input_tokens: 2400, cached_input_tokens: 600, cache_write_input_tokens: 0, output_tokens: 160, reasoning_output_tokens: 32 },
        },
      });
      expect(reader.session.error).toBeUndefined();
    }
  });

  it("takes the failure from turn.failed, and a usage limit with its reset time", () => {
    const reader = new AgentEventReader("codex", CLOCK);
    const shown = reader.push(
      lines(
        { type: "thread.started", thread_id: "t" },
        { type: "error", message: "Reconnecting... 1/5 (unexpected status 401 Unauthorized: Incorrect API key provided: sk-mock***.)" },
        {
          type: "turn.failed",
          error: {
            message:
              "unexpected status 401 Unauthorized: Incorrect API key provided: sk-mock***., url: http://127.0.0.1:1/v1/responses, request id: req_mock",
          },
        },
      ),
    );
    expect(shown[0]).toMatch(/^! Reconnecting\.\.\. 1\/5/);
    expect(shown[1]).toMatch(/^✗ unexpected status 401 Unauthorized/);
    expect(reader.session.error).toMatch(/^unexpected status 401 Unauthorized: Incorrect API key/);
    expect(reader.session.limit).toBeUndefined();

    // A 429 Codex recovers from (a reconnect, then success) is no limit of the run.
    const recovered = new AgentEventReader("codex", CLOCK);
    recovered.push(
      lines(
        { type: "error", message: "Reconnecting... 1/5 (unexpected status 429 Too Many Requests: Rate limit reached)" },
        { type: "turn.completed", usage: { input_tokens: 1, output_tokens: 1 } },
      ),
    );
    expect(recovered.session.limit).toBeUndefined();
    expect(recovered.session.error).toBeUndefined();

    const limited = new AgentEventReader("codex", CLOCK);
    limited.push(
      lines({
        type: "turn.failed",
        error: {
          message:
            "You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/settings/usage to purchase more credits or try again at 11:39 PM.",
        },
      }),
    );
    // 11:39 is the reset rounded down to its minute: the limit is gone by 11:40.
    expect(limited.session.limit).toEqual({
      kind: "usage",
      resetsAt: new Date(2026, 10, 22, 23, 40).toISOString(),
      message: expect.stringMatching(/^You’ve hit your usage limit/),
    });
  });

  it("unwraps the shell Codex shows", () => {
    expect(unwrapShell("/bin/bash -c 'just ci'")).toBe("just ci");
    expect(unwrapShell("/bin/bash -lc 'echo '\\''hi'\\'''")).toBe("echo 'hi'");
    expect(unwrapShell('bash -lc "ls -la"')).toBe("ls -la");
    expect(unwrapShell("npm test")).toBe("npm test");
  });
});

describe("Claude events", () => {
  const usage = { input_tokens: 900, cache_creation_input_tokens: 0, cache_read_input_tokens: 300, output_tokens: 80 };
  const stream = lines(
    { type: "system", subtype: "init", cwd: "/r", session_id: "d2126fc0", model: "claude-opus-5-5", permissionMode: "acceptEdits" },
    {
      type: "assistant",
      message: {
        id: "msg_1",
        model: "claude-opus-5-5",
        content: [{ type: "tool_use", id: "t1", name: "Bash", input: { command: "just ci" } }],
        usage,
      },
      session_id: "d2126fc0",
    },
    {
      type: "user",
      message: { role: "user", content: [{ tool_use_id: "t1", type: "tool_result", content: "error: recipe failed", is_error: true }] },
    },
    {
      type: "system",
      subtype: "permission_denied",
      tool_name: "Bash",
      message: "This Bash command contains multiple operations. The following part requires approval: rm -rf x",
    },
    {
      type: "assistant",
      message: { id: "msg_2", model: "claude-opus-5-5", content: [{ type: "text", text: "Writing the file." }], usage },
      session_id: "d2126fc0",
    },
    {
      type: "assistant",
      message: {
        id: "msg_2",
        model: "claude-opus-5-5",
        content: [{ type: "tool_use", id: "t2", name: "Write", input: { file_path: "/r/src/a.ts", content: "x" } }],
        usage,
      },
      session_id: "d2126fc0",
    },
    {
      type: "assistant",
      message: {
        id: "msg_3",
        model: "claude-opus-5-5",
        content: [{ type: "tool_use", id: "t3", name: "StructuredOutput", input: { status: "done", summary: "wrote a" } }],
        usage,
      },
      session_id: "d2126fc0",
    },
  );
  const result = {
    type: "result",
    subtype: "success",
    is_error: false,
    num_turns: 3,
    result: '{"status":"done","summary":"wrote a"}',
    structured_output: { status: "done", summary: "wrote a" },
    session_id: "d2126fc0",
    total_cost_usd: 0.01052,
    duration_ms: 256,
    duration_api_ms: 110,
    usage: { input_tokens: 2700, cache_creation_input_tokens: 0, cache_read_input_tokens: 900, output_tokens: 240 },
    modelUsage: { "claude-opus-5-5": { inputTokens: 2700, outputTokens: 240, costUSD: 0.01052 } },
    permission_denials: [],
    terminal_reason: "completed",
  };

  it("shows commands, edits, denials and messages; counts each response once; the result's usage and cost win", () => {
    const reader = new AgentEventReader("claude", CLOCK);
    const shown = reader.push(stream);
    expect(shown.filter((line) => !line.startsWith(STATUS_PREFIX))).toEqual([
      "session claude-opus-5-5 · acceptEdits",
      "$ just ci",
      "✗ error: recipe failed",
      "⛔ This Bash command contains multiple operations. The following part requires approval: rm -rf x",
      "» Writing the file.",
      "✎ /r/src/a.ts (write)",
      "» answer: done — wrote a",
    ]);
    expect(reader.session.turns).toBe(3);
    expect(reader.session.usage).toMatchObject({ input_tokens: 3600, cached_input_tokens: 900, output_tokens: 240, cost_usd: null });
    expect(shown.at(-1)).toBe(`${STATUS_PREFIX}turn 3 · 3.6k tokens in (900 cached) · 240 out`);

    const end = reader.push(lines(result));
    expect(end).toEqual([`${STATUS_PREFIX}turn 3 · 3.6k tokens in (900 cached) · 240 out · $0.0105`]);
    expect(reader.session).toMatchObject({ sessionId: "d2126fc0", result: { structured_output: { status: "done" } } });
    expect(reader.session.usage).toEqual({
      input_tokens: 3600,
      cached_input_tokens: 900,
      output_tokens: 240,
      reasoning_tokens: null,
      cost_usd: 0.01052,
      claude: {
        usage: result.usage,
        session_id: "d2126fc0",
        num_turns: 3,
        duration_ms: 256,
        duration_api_ms: 110,
        model_usage: result.modelUsage,
        permission_denials: [],
      },
    });
    expect(reader.session.error).toBeUndefined();
  });

  it("takes the failure from a result with is_error (subtype stays success for API errors), and a 429 as a rate limit", () => {
    const reader = new AgentEventReader("claude", CLOCK);
    reader.push(
      lines({
        type: "result",
        subtype: "success",
        is_error: true,
        api_error_status: 401,
        terminal_reason: "api_error",
        result: "Invalid API key · Fix external API key",
        usage: { input_tokens: 0, output_tokens: 0 },
        total_cost_usd: 0,
      }),
    );
    expect(reader.session.error).toBe("Invalid API key · Fix external API key (API status 401)");
    expect(reader.session.limit).toBeUndefined();

    const rate = new AgentEventReader("claude", CLOCK);
    rate.push(
      lines({
        type: "result",
        is_error: true,
        api_error_status: 429,
        result:
          "API Error: Request rejected (429) · This request would exceed the rate limit for your organization of 30,000 input tokens per minute.",
      }),
    );
    expect(rate.session.limit).toEqual({ kind: "rate", message: expect.stringMatching(/^API Error: Request rejected \(429\)/) });
    expect(rate.session.error).toMatch(/^API Error: Request rejected \(429\)/);

    const usageLimit = new AgentEventReader("claude", CLOCK);
    const resetsAt = Math.floor(NOW / 1000) + 3600;
    usageLimit.push(
      lines(
        { type: "rate_limit_event", rate_limit_info: { status: "rejected", resetsAt, rateLimitType: "five_hour" } },
        { type: "result", is_error: true, api_error_status: 429, result: "You've hit your session limit · resets 3pm" },
      ),
    );
    expect(usageLimit.session.limit).toEqual({
      kind: "usage",
      resetsAt: new Date(resetsAt * 1000).toISOString(),
      message: "You've hit your session limit · resets 3pm",
    });

    const succeeded = new AgentEventReader("claude", CLOCK);
    succeeded.push(
      lines(
        { type: "rate_limit_event", rate_limit_info: { status: "rejected", resetsAt, rateLimitType: "five_hour" } },
        { type: "result", is_error: false, result: "done" },
      ),
    );
    expect(succeeded.session.limit).toBeUndefined();
  });

  it("names the turn and budget limits by Claude's own errors", () => {
    expect(
      claudeError({ subtype: "error_max_turns", is_error: true, terminal_reason: "max_turns", errors: ["Reached maximum number of turns (2)"] }),
    ).toBe("Reached maximum number of turns (2)");
    expect(claudeError({ subtype: "error_max_budget_usd", is_error: true })).toBe("error_max_budget_usd");
  });
});

describe("limits", () => {
  it("reads Codex's reset time as the local clock time it is, today or on the date it names", () => {
    const at = (message: string) => {
      const time = codexResetTime(message);
      return time && CLOCK.localTime(time);
    };
    expect(at("… or try again at 11:39 PM.")).toBe(new Date(2026, 10, 22, 23, 39).toISOString());
    expect(at("You’ve hit your usage limit. Try again at 12:05 AM.")).toBe(new Date(2026, 10, 22, 0, 5).toISOString());
    expect(at("… try again at Aug 8th, 2027 1:02 PM.")).toBe(new Date(2027, 7, 8, 13, 2).toISOString());
    expect(codexResetTime("You’ve hit your usage limit. Try again later.")).toBeUndefined();
  });

  it("takes Codex's reset as the end of the minute it names: Codex rounds the reset time down to its minute", () => {
    expect(codexLimit("You’ve hit your usage limit. Try again at 11:39 PM.", CLOCK)).toEqual({
      kind: "usage",
      resetsAt: new Date(2026, 10, 22, 23, 40).toISOString(),
      message: "You’ve hit your usage limit. Try again at 11:39 PM.",
    });
    expect(codexLimit("You’ve hit your usage limit. Try again at Dec 31st, 2026 11:59 PM.", CLOCK)?.resetsAt).toBe(
      new Date(2027, 0, 1, 0, 0).toISOString(),
    );
  });

  it("tells a rate limit from a usage limit", () => {
    expect(codexLimit("exceeded retry limit, last status: 429 Too Many Requests, request id: req_mock", CLOCK)).toEqual({
      kind: "rate",
      message: "exceeded retry limit, last status: 429 Too Many Requests, request id: req_mock",
    });
    expect(codexLimit("Your workspace is out of credits. Add credits to continue.", CLOCK)?.kind).toBe("usage");
    expect(codexLimit("unexpected status 401 Unauthorized: Incorrect API key provided", CLOCK)).toBeUndefined();
    expect(claudeLimit({ is_error: true, api_error_status: 529, result: "API Error: 529 Overloaded." }, undefined, CLOCK)).toBeUndefined();
    expect(
      claudeLimit({ is_error: true, api_error_status: 429, result: "API Error: Request rejected (429) · Usage limit reached" }, undefined, CLOCK)
        ?.kind,
    ).toBe("usage");
  });
});

describe("failures", () => {
  it("names the agent's own message and its exit code; else its last stderr lines; never when it answered", () => {
    expect(
      agentFailure({ agent: "codex", exitCode: 1, ownError: "unexpected status 401 Unauthorized: bad key.", answered: false, stderrTail: "" }),
    ).toBe("codex failed (exit code 1): unexpected status 401 Unauthorized: bad key");
    expect(
      agentFailure({
        agent: "claude",
        exitCode: 1,
        ownError: undefined,
        answered: false,
        stderrTail: "warning\nError: --json-schema is not a valid JSON Schema\n\n",
      }),
    ).toBe("claude exited with code 1: warning / Error: --json-schema is not a valid JSON Schema");
    expect(agentFailure({ agent: "node", exitCode: 3, ownError: undefined, answered: false, stderrTail: "" })).toBe(
      "node exited with code 3 and wrote nothing on stderr",
    );
    expect(agentFailure({ agent: "codex", exitCode: 1, ownError: "something", answered: true, stderrTail: "" })).toBeUndefined();
    expect(agentFailure({ agent: "codex", exitCode: 0, ownError: undefined, answered: false, stderrTail: "noise" })).toBeUndefined();
    expect(lastLines("a\nb\nc\nd\n")).toBe("b / c / d");
  });
});

describe("usage", () => {
  it("sums iterations; a figure only one agent reports stays when the other has none", () => {
    const codex = codexUsage({ input_tokens: 2400, cached_input_tokens: 600, output_tokens: 160, reasoning_output_tokens: 32 })!;
    const claude = claudeUsage({ usage: { input_tokens: 2700, cache_read_input_tokens: 900, output_tokens: 240 }, total_cost_usd: 0.01 })!;
    const sum = addUsage(addUsage(undefined, codex), claude)!;
    expect(sum).toEqual({ input_tokens: 6000, cached_input_tokens: 1500, output_tokens: 400, reasoning_tokens: 32, cost_usd: 0.01 });
    expect(describeUsage(sum)).toBe("tokens 6,000 in (1,500 cached), 400 out (32 reasoning); cost $0.0100");
    expect(usageFromMeta(JSON.parse(JSON.stringify(codex)))).toEqual({
      input_tokens: 2400,
      cached_input_tokens: 600,
      output_tokens: 160,
      reasoning_tokens: 32,
      cost_usd: null,
    });
    expect(usageFromMeta(null)).toBeUndefined();
    expect(usageFromMeta({ input_tokens: "many" })).toBeUndefined();
  });
});
