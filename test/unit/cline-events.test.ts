// Cline's event stream (`cline --json`) read by src/agents/cline.ts, on lines as the pinned Cline CLI
// 3.0.65 printed them against a scripted OpenAI-compatible server (docs/agents.md, "Cline CLI"), and
// the argv the module builds.
import { describe, expect, it } from "vitest";
import { cline, clineLimit } from "../../src/agents/cline.js";
import { AgentEventReader, STATUS_PREFIX } from "../../src/agents/event-reader.js";
import { localClock } from "../../src/adapters/executors/agent-session.js";
import { agentFailure } from "../../src/core/agent/agent-failure.js";
import type { ExecutorConfig } from "../../src/schemas/types.generated.js";

const CLOCK = localClock(() => new Date(2026, 10, 26, 23, 0).getTime());
const lines = (...events: object[]) => events.map((event) => `${JSON.stringify(event)}\n`).join("");
const at = (ts: string, event: object) => ({ ts, type: "agent_event", event });
const hook = (name: string) => ({
  ts: "2026-11-26T22:55:59.700Z",
  type: "hook_event",
  hookEventName: name,
  agentId: "agent_1795733442805_w8yabo",
  taskId: "conv_1795733443045_ndmj2uj",
  parentAgentId: null,
});
const usage = (n: number, cost = 0) => ({
  type: "usage",
  inputTokens: 1200,
  outputTokens: 80,
  cacheReadTokens: 300,
  totalInputTokens: 1200 * n,
  totalOutputTokens: 80 * n,
  totalCacheReadTokens: 300 * n,
  totalCost: cost * n,
});
const runResult = (finishReason: string, text: string, n: number, cost = 0) => {
  const total = { inputTokens: 1200 * n, outputTokens: 80 * n, cacheReadTokens: 300 * n, cacheWriteTokens: 0, totalCost: cost * n };
  return {
    ts: "2026-11-26T22:56:00.904Z",
    type: "run_result",
    finishReason,
    iterations: n,
    usage: total,
    aggregateUsage: total,
    durationMs: 828,
    text,
    model: { id: "mock-model", provider: "openai-compatible" },
  };
};

const success = lines(
  hook("agent_start"),
  at("2026-11-26T22:55:59.733Z", { type: "iteration_start", iteration: 1 }),
  at("2026-11-26T22:56:00.052Z", usage(1, 0.0012)),
  at("2026-11-26T22:56:00.088Z", {
    type: "content_start",
    contentType: "tool",
    toolName: "run_commands",
    toolCallId: "call_0",
    input: { commands: ["false", "just ci"] },
  }),
  at("2026-11-26T22:56:00.130Z", {
    type: "content_update",
    contentType: "tool",
    toolName: "run_commands",
    toolCallId: "call_0",
    update: { stream: "stdout", chunk: "ci ok\n", executionId: "953b1d2a", detachable: false, commandIndex: 1, query: "just ci" },
  }),
  at("2026-11-26T22:56:00.139Z", {
    type: "content_end",
    contentType: "tool",
    toolName: "run_commands",
    toolCallId: "call_0",
    output: [
      { query: "false", result: "[Command exited with code 1]", error: "Command exited with code 1", success: false },
      { query: "just ci", result: "ci ok\n", success: true },
    ],
    durationMs: 50,
  }),
  at("2026-11-26T22:56:00.140Z", { type: "iteration_end", iteration: 1, hadToolCalls: true, toolCallCount: 1 }),
  at("2026-11-26T22:56:00.140Z", { type: "iteration_start", iteration: 2 }),
  at("2026-11-26T22:56:00.278Z", usage(2, 0.0012)),
  at("2026-11-26T22:56:00.285Z", {
    type: "content_start",
    contentType: "tool",
    toolName: "editor",
    toolCallId: "call_1",
    input: { path: "/tmp/clx/repo/answer.json", new_text: '{"status":"done","summary":"x"}\n' },
  }),
  at("2026-11-26T22:56:00.388Z", {
    type: "content_end",
    contentType: "tool",
    toolName: "editor",
    toolCallId: "call_1",
    output: { query: "edit:/tmp/clx/repo/answer.json", result: "File created successfully at: /tmp/clx/repo/answer.json", success: true },
    durationMs: 103,
  }),
  at("2026-11-26T22:56:00.389Z", { type: "iteration_end", iteration: 2, hadToolCalls: true, toolCallCount: 1 }),
  at("2026-11-26T22:56:00.389Z", { type: "iteration_start", iteration: 3 }),
  at("2026-11-26T22:56:00.504Z", { type: "content_start", contentType: "text", text: "Do", accumulated: "Do" }),
  at("2026-11-26T22:56:00.505Z", { type: "content_start", contentType: "text", text: "ne.", accumulated: "Done." }),
  at("2026-11-26T22:56:00.527Z", usage(3, 0.0012)),
  at("2026-11-26T22:56:00.547Z", { type: "content_end", contentType: "text", text: "Done." }),
  at("2026-11-26T22:56:00.547Z", { type: "iteration_end", iteration: 3, hadToolCalls: false, toolCallCount: 0 }),
  hook("agent_end"),
  at("2026-11-26T22:56:00.549Z", {
    type: "done",
    reason: "completed",
    text: "Done.",
    iterations: 3,
    usage: { inputTokens: 3600, outputTokens: 240, cacheReadTokens: 900, totalCost: 0.0036 },
  }),
  runResult("completed", "Done.", 3, 0.0012),
);

const UNAUTHORIZED = "Incorrect API key provided: sk-mock***. You can find your API key at https://platform.openai.com/account/api-keys.";
const RATE = "Rate limit reached for mock-model. Please try again in 1s.";
const failed = (message: string, errorClass: string) =>
  lines(
    hook("agent_start"),
    at("2026-11-26T22:51:29.357Z", { type: "iteration_start", iteration: 1 }),
    at("2026-11-26T22:51:34.819Z", {
      type: "error",
      error: { name: "Error", message, stack: `Error: ${message}\n    at execute (/$bunfs/root/chunk-tacx2shb.js:389:6881)` },
      errorClass,
      recoverable: false,
      iteration: 1,
    }),
    runResult("error", message, 0),
  );

function read(stream: string, cuts: number[] = [stream.length]) {
  const reader = new AgentEventReader("cline", CLOCK);
  const shown: string[] = [];
  let from = 0;
  for (const cut of cuts) {
    shown.push(...reader.push(stream.slice(from, cut)));
    from = cut;
  }
  shown.push(...reader.push(stream.slice(from)), ...reader.end());
  return { session: reader.session, shown: shown.filter((line) => !line.startsWith(STATUS_PREFIX)), status: reader.status() };
}

const config = (extra: Partial<ExecutorConfig> = {}): ExecutorConfig => ({ kind: "cline", ...extra }) as ExecutorConfig;
const argvInput = (executor: ExecutorConfig, isolation: "user" | "clean" = "user") => ({
  config: executor,
  root: "/repo",
  outputFile: "/repo/.runner/iterations/r1/0003/output.json",
  usageFile: "/repo/.runner/iterations/r1/0003/agent-usage.json",
  schemaFile: "/runner/schemas/agent_output/v1.agent.json",
  schemaText: "{}",
  guardCommand: ["just", "ci"],
  isolation,
});

describe("Cline events", () => {
  it("shows commands with their outcome, edits and the final message; counts steps; takes the session's usage and cost; split anywhere", () => {
    for (const cuts of [[1], [33], [700, 1500], [success.length - 2]]) {
      const { session, shown, status } = read(success, cuts);
      expect(shown).toEqual(["$ false", "$ just ci", "✗ false (exit 1)", "✓ just ci", "✎ /tmp/clx/repo/answer.json (editor)", "» Done."]);
      expect(session).toMatchObject({ agent: "cline", turns: 3 });
      // Cline's input counts the cached tokens (the API's prompt_tokens); it reports no reasoning apart.
      expect(session.usage).toMatchObject({ input_tokens: 3600, cached_input_tokens: 900, output_tokens: 240, reasoning_tokens: null });
      expect(session.usage!.cost_usd).toBeCloseTo(0.0036, 10);
      expect(session.usage!.cline).toMatchObject({ iterations: 3, finish_reason: "completed", model: "openai-compatible/mock-model" });
      expect(session.error).toBeUndefined();
      expect(session.limit).toBeUndefined();
      expect(status).toBe("step 3 · 3.6k tokens in (900 cached) · 240 out · $0.0036");
    }
  });

  it("sums the usage so far while the session runs (the usage event's totals)", () => {
    const partial = success.slice(0, success.indexOf('"iteration":2,"hadToolCalls"'));
    const { session } = read(partial);
    expect(session.turns).toBe(2);
    expect(session.usage).toMatchObject({ input_tokens: 2400, cached_input_tokens: 600, output_tokens: 160 });
  });

  it("a 401: Cline's error in its own words, the failure of the iteration, no limit", () => {
    const { session, shown } = read(failed(UNAUTHORIZED, "auth"));
    expect(session.error).toBe(UNAUTHORIZED);
    expect(session.limit).toBeUndefined();
    expect(shown).toEqual([`✗ ${UNAUTHORIZED}`]);
    expect(agentFailure({ agent: "cline", exitCode: 1, ownError: session.error, answered: false, stderrTail: "" })).toBe(
      `cline failed (exit code 1): ${UNAUTHORIZED.replace(/\.$/, "")}`,
    );
  });

  it("a 429 Cline gave up on (after its own retries) is a rate limit, reset when the provider said, from the event's time", () => {
    const { session } = read(failed(RATE, "unknown"));
    expect(session.error).toBe(RATE);
    expect(session.limit).toEqual({ kind: "rate", resetsAt: "2026-11-26T22:51:35.819Z", message: RATE });
  });

  it("limits in Cline's and the providers' words: rates, quotas, ClinePass and the free model's daily limit with its reset", () => {
    const ts = "2026-11-26T12:00:00.000Z";
    expect(clineLimit("Too Many Requests", ts, CLOCK)).toEqual({ kind: "rate", message: "Too Many Requests" });
    expect(
      clineLimit("Rate limit reached for gpt-5 in organization org-x on tokens per min (TPM). Please try again in 1m12.5s.", ts, CLOCK),
    ).toMatchObject({
      kind: "rate",
      resetsAt: "2026-11-26T12:01:12.500Z",
    });
    expect(clineLimit("You exceeded your current quota, please check your plan and billing details.", ts, CLOCK)).toMatchObject({ kind: "usage" });
    expect(clineLimit("You have reached your weekly ClinePass limit. Please try again later.", ts, CLOCK)).toMatchObject({ kind: "usage" });
    expect(clineLimit("Free limit reached on model cline-free/x. Try again in 3h 20m", ts, CLOCK)).toEqual({
      kind: "usage",
      resetsAt: "2026-11-26T15:20:00.000Z",
      message: "Free limit reached on model cline-free/x. Try again in 3h 20m",
    });
    expect(clineLimit(UNAUTHORIZED, ts, CLOCK)).toBeUndefined();
    expect(clineLimit("Cannot connect to API: Unable to connect. (ConnectionRefused)", ts, CLOCK)).toBeUndefined();
  });

  it("a tool that needs an approval nobody can give (--auto-approve false, no terminal) is shown and is Cline's failure when it leaves no answer", () => {
    const denied = 'Tool "run_commands" requires approval in a TTY session -- NOT a tool or system failure. Clarify with user before proceeding.';
    const stream = lines(
      at("2026-11-26T22:55:45.688Z", { type: "iteration_start", iteration: 1 }),
      at("2026-11-26T22:55:46.297Z", {
        type: "content_start",
        contentType: "tool",
        toolName: "run_commands",
        toolCallId: "call_0",
        input: { commands: ["just ci"] },
      }),
      at("2026-11-26T22:55:46.299Z", {
        type: "content_end",
        contentType: "tool",
        toolName: "run_commands",
        toolCallId: "call_0",
        output: { error: denied },
        error: JSON.stringify({ error: denied }),
        durationMs: 3,
      }),
      at("2026-11-26T22:55:46.311Z", {
        type: "error",
        error: { name: "Error", message: `1 tool call(s) failed: [run_commands] ${JSON.stringify({ error: denied })}` },
        recoverable: true,
        iteration: 1,
      }),
      runResult("completed", "Done.", 2),
    );
    const { session, shown } = read(stream);
    expect(shown).toEqual(["$ just ci", `⛔ run_commands: ${denied}`]);
    expect(session.error).toBe(`run_commands needs an approval, and a session without a terminal cannot give it: ${denied}`);
    expect(session.limit).toBeUndefined();
  });

  it("a session that ends otherwise than completed (the mistake limit) is Cline's failure in its words; retries are shown", () => {
    const stream = lines(
      at("2026-11-26T22:55:45.688Z", { type: "iteration_start", iteration: 1 }),
      at("2026-11-26T22:55:46.100Z", {
        type: "notice",
        noticeType: "status",
        displayRole: "status",
        message: "provider error — retrying (attempt 1/3)",
        metadata: { kind: "provider_error_retry" },
      }),
      runResult("mistake_limit", "Too many consecutive mistakes (3). Stopping.", 1),
    );
    const { session, shown } = read(stream);
    expect(shown).toEqual(["↻ provider error — retrying (attempt 1/3)", "✗ Too many consecutive mistakes (3). Stopping."]);
    expect(session.error).toBe("Too many consecutive mistakes (3). Stopping.");
  });
});

describe("Cline argv", () => {
  it("JSON lines, every tool approved, the local backend, no auto-update; the prompt on stdin after a lead argument", () => {
    expect(cline.argv(argvInput(config()))).toEqual(["cline", "--json", "--auto-approve", "true", "Your task follows."]);
    expect(cline.env?.(config(), "user")).toEqual({ CLINE_SESSION_BACKEND_MODE: "local", CLINE_NO_AUTO_UPDATE: "1" });
    expect(cline.answer).toEqual({ kind: "file" });
    // Cline reads stdin only when it is a FIFO: Node's pipes are sockets.
    expect(cline.promptThroughPipe).toBe(true);
  });

  it("model and extra_args; isolation = clean puts Cline's whole configuration folder in the iteration's folder", () => {
    expect(cline.argv(argvInput(config({ model: "mock-model", extra_args: ["-P", "openrouter"] }), "clean"))).toEqual([
      "cline",
      "--json",
      "--auto-approve",
      "true",
      "--config",
      "/repo/.runner/iterations/r1/0003/cline",
      "-m",
      "mock-model",
      "Your task follows.",
      "-P",
      "openrouter",
    ]);
  });
});
