// Qwen Code's module (src/agents/qwen.ts) on event lines as the pinned Qwen Code 0.24.4 prints them
// with --output-format stream-json (docs/agents.md, "Qwen Code 0.24.4"): live lines, the structured
// answer, usage, its own errors and limits; and the argv it is started with.
import { describe, expect, it } from "vitest";
import { localClock } from "../../src/adapters/executors/agent-session.js";
import { AgentEventReader, STATUS_PREFIX } from "../../src/agents/event-reader.js";
import { qwen, qwenArgv, qwenLimit } from "../../src/agents/qwen.js";

const CLOCK = localClock(() => new Date(2026, 10, 25, 23, 30).getTime());
const lines = (...events: object[]) => events.map((event) => `${JSON.stringify(event)}\n`).join("");
const SID = "372b8883-a07e-4e7f-a894-5cb265749073";
const USAGE = { input_tokens: 1200, output_tokens: 80, cache_read_input_tokens: 300, total_tokens: 1280 };
const message = (id: string, content: object[]) => ({
  type: "assistant",
  session_id: SID,
  parent_tool_use_id: null,
  message: { id, type: "message", role: "assistant", model: "mock-model", content, stop_reason: "tool_use", usage: USAGE },
});
const toolResult = (id: string, content: string, isError = false) => ({
  type: "user",
  session_id: SID,
  message: { role: "user", content: [{ type: "tool_result", tool_use_id: id, is_error: isError, content }] },
});

const SUCCESS = lines(
  {
    type: "system",
    subtype: "init",
    session_id: SID,
    cwd: "/tmp/repo",
    model: "mock-model",
    permission_mode: "auto-edit",
    qwen_code_version: "0.24.4",
  },
  { type: "stream_event", session_id: SID, event: { type: "goal_state", goal_state: { v: 2, goal: null, activity: "idle" } } },
  message("m1", [{ type: "tool_use", id: "call_0", name: "run_shell_command", input: { command: "just ci", is_background: false } }]),
  toolResult("call_0", "ci ok"),
  message("m2", [{ type: "tool_use", id: "call_1", name: "run_shell_command", input: { command: "echo ok > out.txt" } }]),
  toolResult(
    "call_1",
    'Qwen Code requires permission to use "run_shell_command", but that permission was declined (non-interactive mode cannot prompt for confirmation).',
    true,
  ),
  message("m3", [{ type: "tool_use", id: "call_2", name: "write_file", input: { file_path: "/tmp/repo/x.txt", content: "hello\n" } }]),
  toolResult("call_2", "Successfully created and wrote to new file: /tmp/repo/x.txt."),
  message("m4", [{ type: "tool_use", id: "call_3", name: "structured_output", input: { status: "done", summary: "wrote" } }]),
  toolResult("call_3", "Structured output accepted."),
  {
    type: "result",
    subtype: "success",
    session_id: SID,
    is_error: false,
    duration_ms: 3639,
    duration_api_ms: 1645,
    num_turns: 4,
    result: '{"status":"done","summary":"wrote"}',
    usage: { input_tokens: 4800, output_tokens: 320, cache_read_input_tokens: 1200, total_tokens: 5120 },
    permission_denials: [{ tool_name: "run_shell_command", tool_use_id: "call_1", tool_input: { command: "echo ok > out.txt" } }],
    structured_result: { status: "done", summary: "wrote" },
  },
);

function read(text: string, cut = text.length) {
  const reader = new AgentEventReader(qwen, CLOCK);
  const shown = [...reader.push(text.slice(0, cut)), ...reader.push(text.slice(cut)), ...reader.end()];
  return { reader, shown, activity: shown.filter((line) => !line.startsWith(STATUS_PREFIX)) };
}

describe("Qwen Code events", () => {
  it("shows commands, denials, writes and the answer; counts turns and tokens (input includes cached); split anywhere", () => {
    for (const cut of [1, 90, 700, SUCCESS.length - 5]) {
      const { reader, shown, activity } = read(SUCCESS, cut);
      expect(activity).toEqual([
        "session mock-model · auto-edit",
        "$ just ci",
        "$ echo ok > out.txt",
        '⛔ run_shell_command: Qwen Code requires permission to use "run_shell_command", but that permission was declined (non-interactive mode cannot prompt for confirmation).',
        "✎ /tmp/repo/x.txt (write)",
        "» answer: done — wrote",
      ]);
      expect(shown.at(-1)).toBe(`${STATUS_PREFIX}turn 4 · 4.8k tokens in (1.2k cached) · 320 out`);
      expect(reader.session).toMatchObject({ agent: "qwen", sessionId: SID, turns: 4 });
      expect(reader.session.usage).toMatchObject({
        input_tokens: 4800,
        cached_input_tokens: 1200,
        output_tokens: 320,
        reasoning_tokens: null,
        cost_usd: null,
      });
      expect(reader.session.usage?.qwen).toMatchObject({ num_turns: 4, permission_denials: [expect.any(Object)] });
      expect(qwen.answer.kind === "event" && qwen.answer.from(reader.session)).toBe('{"status":"done","summary":"wrote"}\n');
    }
  });

  it("without structured_result the answer is the JSON object of the final text, else none (output.json is read instead)", () => {
    const answer = (result: string) => {
      const { reader } = read(lines({ type: "result", subtype: "success", session_id: SID, is_error: false, num_turns: 1, result }));
      return qwen.answer.kind === "event" ? qwen.answer.from(reader.session) : undefined;
    };
    expect(answer('Done.\n```json\n{"status":"retry","summary":"half"}\n```')).toBe('{"status":"retry","summary":"half"}\n');
    expect(answer("I wrote the answer to the output file.")).toBeUndefined();
  });

  it("a 401 is a failure in Qwen's own words, said once", () => {
    const said =
      "[API Error: 401 Incorrect API key provided: sk-mock***. You can find your API key at https://platform.openai.com/account/api-keys.]";
    const { reader, activity } = read(
      lines(message("m1", [{ type: "text", text: said }]), {
        type: "result",
        subtype: "error_during_execution",
        session_id: SID,
        is_error: true,
        num_turns: 1,
        usage: { input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0 },
        permission_denials: [],
        error: { message: said },
      }),
    );
    expect(reader.session.error).toBe(
      "401 Incorrect API key provided: sk-mock***. You can find your API key at https://platform.openai.com/account/api-keys.",
    );
    expect(activity).toEqual([`✗ ${reader.session.error}`]);
    expect(reader.session.limit).toBeUndefined();
    expect(qwen.answer.kind === "event" && qwen.answer.from(reader.session)).toBeUndefined();
  });

  it("a 429 Qwen gave up on is a rate limit; an exhausted quota a usage limit", () => {
    const rate =
      "[API Error: 429 Rate limit reached for gpt-6.1-sol in organization org-mock on tokens per min (TPM): Limit 30000, Used 30000, Requested 1200. Please try again in 2.4s.]\nPossible quota limitations in place or slow response times detected. Please wait and try again later.";
    expect(qwenLimit(rate)).toEqual({
      kind: "rate",
      message:
        "429 Rate limit reached for gpt-6.1-sol in organization org-mock on tokens per min (TPM): Limit 30000, Used 30000, Requested 1200. Please try again in 2.4s. Possible quota limitations in place or slow response times detected. Please wait and try again later.",
    });
    expect(qwenLimit("[API Error: 429 You exceeded your current quota, please check your plan and billing details.]")).toMatchObject({
      kind: "usage",
    });
    expect(qwenLimit("[API Error: 500 The server had an error]")).toBeUndefined();
  });
});

describe("Qwen Code argv", () => {
  it("the schema, auto-edit with the guard allowed, the user's rules, isolation, turns and model", () => {
    expect(qwenArgv({ kind: "qwen" }, ["just", "ci"], "{}")).toEqual([
      "qwen",
      "--output-format",
      "stream-json",
      "--json-schema",
      "{}",
      "--approval-mode",
      "auto-edit",
      "--allowed-tools",
      "run_shell_command(just ci)",
    ]);
    expect(
      qwenArgv(
        {
          kind: "qwen",
          approval_mode: "auto_edit",
          allowed_tools: ["run_shell_command(npm test)"],
          isolation: "clean",
          max_turns: 7,
          model: "qwen3-coder-plus",
        },
        ["just", "ci"],
        "{}",
      ).slice(5),
    ).toEqual([
      "--approval-mode",
      "auto-edit",
      "--allowed-tools",
      "run_shell_command(just ci)",
      "--allowed-tools",
      "run_shell_command(npm test)",
      "--chat-recording",
      "false",
      "-e",
      "none",
      "--max-session-turns",
      "7",
      "-m",
      "qwen3-coder-plus",
    ]);
  });
});
