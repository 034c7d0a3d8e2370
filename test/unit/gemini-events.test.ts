// Gemini CLI's module (src/agents/gemini.ts) on event lines as the pinned Gemini CLI 0.61.0 prints
// them with --output-format stream-json (docs/agents.md, "Gemini CLI 0.61.0"): live lines, the
// answer, usage, its own errors and its rate and usage limits; and the argv it is started with.
import { describe, expect, it } from "vitest";
import { localClock } from "../../src/adapters/executors/agent-session.js";
import { AgentEventReader, STATUS_PREFIX } from "../../src/agents/event-reader.js";
import { gemini, geminiArgv, geminiLimit, geminiRetryDelay } from "../../src/agents/gemini.js";

const NOW = new Date(2026, 10, 25, 23, 25).getTime();
const CLOCK = localClock(() => NOW);
const lines = (...events: object[]) => events.map((event) => `${JSON.stringify(event)}\n`).join("");
const T = "2026-11-25T23:23:02.604Z";

const STATS = {
  total_tokens: 3903,
  input_tokens: 3610,
  output_tokens: 245,
  cached: 900,
  input: 2710,
  duration_ms: 987,
  tool_calls: 2,
  models: {
    "gemini-3.5-flash-lite": { total_tokens: 15, input_tokens: 10, output_tokens: 5, cached: 0, input: 10 },
    "gemini-3.1-pro-preview": { total_tokens: 3888, input_tokens: 3600, output_tokens: 240, cached: 900, input: 2700 },
  },
};

const SUCCESS = lines(
  { type: "init", timestamp: T, session_id: "634cdb06-ef48-480d-8d09-3c9c57d67039", model: "auto" },
  { type: "message", timestamp: T, role: "user", content: "Your task: node `root`" },
  {
    type: "tool_use",
    timestamp: T,
    tool_name: "run_shell_command",
    tool_id: "run_shell_command__run_shell_command_1795648981813_0",
    parameters: { command: "just ci", description: "Run the guard" },
  },
  { type: "tool_result", timestamp: T, tool_id: "run_shell_command__run_shell_command_1795648981813_0", status: "success", output: "ci ok" },
  { type: "tool_use", timestamp: T, tool_name: "run_shell_command", tool_id: "rsc_2", parameters: { command: "echo ok > out.txt" } },
  {
    type: "tool_result",
    timestamp: T,
    tool_id: "rsc_2",
    status: "error",
    output: "Tool execution denied by policy.",
    error: { type: "policy_violation", message: "Tool execution denied by policy." },
  },
  { type: "tool_use", timestamp: T, tool_name: "write_file", tool_id: "wf_3", parameters: { file_path: "src/a.txt", content: "ok a\n" } },
  { type: "tool_result", timestamp: T, tool_id: "wf_3", status: "success" },
  { type: "message", timestamp: T, role: "assistant", content: '{"status":"done",', delta: true },
  { type: "message", timestamp: T, role: "assistant", content: '"summary":"wrote src/a.txt"}', delta: true },
  { type: "result", timestamp: T, status: "success", stats: STATS },
);

function read(text: string, cut = text.length) {
  const reader = new AgentEventReader(gemini, CLOCK);
  const shown = [...reader.push(text.slice(0, cut)), ...reader.push(text.slice(cut)), ...reader.end()];
  return { reader, shown, activity: shown.filter((line) => !line.startsWith(STATUS_PREFIX)) };
}

describe("Gemini CLI events", () => {
  it("shows the commands, denials, file writes and the answer, counts tool calls and tokens; split anywhere", () => {
    for (const cut of [1, 40, 333, SUCCESS.length - 2]) {
      const { reader, shown, activity } = read(SUCCESS, cut);
      expect(activity).toEqual([
        "session auto",
        "$ just ci",
        "$ echo ok > out.txt",
        "⛔ run_shell_command: Tool execution denied by policy.",
        "✎ src/a.txt (write)",
        '» {"status":"done","summary":"wrote src/a.txt"}',
      ]);
      expect(shown.at(-1)).toBe(`${STATUS_PREFIX}tool call 3 · 3.6k tokens in (900 cached) · 245 out`);
      expect(reader.session).toMatchObject({ agent: "gemini", sessionId: "634cdb06-ef48-480d-8d09-3c9c57d67039", turns: 3 });
      expect(reader.session.usage).toEqual({
        input_tokens: 3610,
        cached_input_tokens: 900,
        output_tokens: 245,
        // total_tokens counts the thinking tokens too: 3903 − 3610 − 245.
        reasoning_tokens: 48,
        cost_usd: null,
        gemini: { stats: STATS },
      });
      expect(reader.session.error).toBeUndefined();
      expect(gemini.answer.kind === "event" && gemini.answer.from(reader.session)).toBe('{"status":"done","summary":"wrote src/a.txt"}\n');
    }
  });

  it("the answer is the text after the last tool call: a fenced JSON block or a trailing object counts, prose alone does not", () => {
    const answerOf = (...texts: string[]) => {
      const { reader } = read(
        lines(
          { type: "message", role: "assistant", content: "I will write the file first." },
          { type: "tool_use", tool_name: "write_file", tool_id: "w", parameters: { file_path: "a", content: "b" } },
          ...texts.map((content) => ({ type: "message", role: "assistant", content, delta: true })),
          { type: "result", status: "success", stats: STATS },
        ),
      );
      return gemini.answer.kind === "event" ? gemini.answer.from(reader.session) : undefined;
    };
    expect(answerOf("Done.\n```json\n", '{"status":"retry","summary":"half"}\n```')).toBe('{"status":"retry","summary":"half"}\n');
    expect(answerOf('All done: {"status":"done","summary":"x"}')).toBe('{"status":"done","summary":"x"}\n');
    // No JSON in the last message: the runner reads output.json as the agent wrote it (the prompt asks for it).
    expect(answerOf("I wrote the answer to the output file.")).toBeUndefined();
  });

  it("a 401 is a failure in Gemini's own words, no limit", () => {
    const message =
      '[API Error: {"error":{"code":401,"message":"Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.","status":"UNAUTHENTICATED"}}]';
    const { reader, activity } = read(
      lines(
        { type: "init", timestamp: T, session_id: "7b3b01de", model: "auto" },
        { type: "result", timestamp: T, status: "error", error: { type: "unknown", message }, stats: { ...STATS, total_tokens: 15 } },
      ),
    );
    expect(reader.session.error).toBe(
      "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. (API status 401 UNAUTHENTICATED)",
    );
    expect(activity.at(-1)).toBe(`✗ ${reader.session.error}`);
    expect(reader.session.limit).toBeUndefined();
  });

  it("the Gemini API's answer to a bad key (400 API_KEY_INVALID) reads the same way", () => {
    const message =
      '[API Error: {"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com"}]}}]';
    const { reader } = read(lines({ type: "result", timestamp: T, status: "error", error: { type: "unknown", message } }));
    expect(reader.session.error).toBe("API key not valid. Please pass a valid API key. (API status 400 INVALID_ARGUMENT)");
    expect(reader.session.limit).toBeUndefined();
  });

  it("a rate limit Gemini gave up on, with the retry delay the API named counted from the event's time", () => {
    const message =
      "[API Error: You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.\nSuggested retry after 2s.]\nPlease wait and try again later. To increase your limits, request a quota increase through AI Studio, or switch to another /auth method";
    const { reader } = read(lines({ type: "result", timestamp: "2026-11-25T23:27:21.111Z", status: "error", error: { type: "unknown", message } }));
    expect(reader.session.limit).toEqual({
      kind: "rate",
      resetsAt: "2026-11-25T23:27:23.111Z",
      message:
        "You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits. Suggested retry after 2s. Please wait and try again later. To increase your limits, request a quota increase through AI Studio, or switch to another /auth method",
    });
    expect(reader.session.error).toMatch(/^You exceeded your current quota/);
  });

  it("a daily quota is a usage limit without a reset time; other failures are no limit", () => {
    const daily =
      "[API Error: You have exhausted your daily quota on this model.]\nPlease wait and try again later. To increase your limits, request a quota increase through AI Studio, or switch to another /auth method";
    expect(geminiLimit(daily, T, CLOCK)).toMatchObject({ kind: "usage", message: expect.stringMatching(/^You have exhausted your daily quota/) });
    expect(geminiLimit(daily, T, CLOCK)?.resetsAt).toBeUndefined();
    expect(geminiLimit("[API Error: An internal error has occurred.]", T, CLOCK)).toBeUndefined();
    expect(geminiRetryDelay("Please retry in 850ms.")).toBe(0.85);
    expect(geminiRetryDelay("Suggested retry after 34.07s.")).toBe(34.07);
  });

  it("error events are shown; warnings as warnings", () => {
    const { activity, reader } = read(
      lines(
        { type: "error", timestamp: T, severity: "warning", message: "Loop detected, stopping execution" },
        { type: "error", timestamp: T, severity: "error", message: "Maximum session turns exceeded" },
      ),
    );
    expect(activity).toEqual(["! Loop detected, stopping execution", "✗ Maximum session turns exceeded"]);
    expect(reader.session.lastErrorEvent).toBe("Maximum session turns exceeded");
  });
});

describe("Gemini CLI argv", () => {
  it("auto_edit, the guard allowed as a command prefix, the user's rules, isolation and model", () => {
    expect(geminiArgv({ kind: "gemini" }, ["just", "ci"])).toEqual([
      "gemini",
      "--output-format",
      "stream-json",
      "--skip-trust",
      "--approval-mode",
      "auto_edit",
      "--allowed-tools",
      "run_shell_command(just ci)",
    ]);
    expect(
      geminiArgv(
        {
          kind: "gemini",
          approval_mode: "auto-edit",
          allowed_tools: ["run_shell_command(npm test)", "run_shell_command(just ci)"],
          isolation: "clean",
          model: "gemini-2.5-pro",
          extra_args: ["--debug"],
        },
        ["just", "ci"],
      ),
    ).toEqual([
      "gemini",
      "--output-format",
      "stream-json",
      "--skip-trust",
      "--approval-mode",
      "auto_edit",
      "--allowed-tools",
      "run_shell_command(just ci)",
      "--allowed-tools",
      "run_shell_command(npm test)",
      "-e",
      "none",
      "-m",
      "gemini-2.5-pro",
      "--debug",
    ]);
  });

  it("an approval mode Gemini does not know is refused before it starts, in one sentence", () => {
    const argv = geminiArgv({ kind: "gemini", approval_mode: "auto" }, ["just", "ci"]);
    expect(gemini.refusal?.(argv, {}, 0)).toBe(
      'Gemini CLI has no approval mode "auto" (it knows default, auto_edit, yolo, plan); change [executor] approval_mode in .runner/state/config.toml',
    );
    expect(gemini.refusal?.(geminiArgv({ kind: "gemini" }, ["just", "ci"]), {}, 0)).toBeUndefined();
  });
});
