// A scripted stand-in for the Anthropic Messages API, as Claude Code 2.1.330 calls it:
// POST /v1/messages?beta=true with `stream: true`, answered with server-sent events (message_start,
// content_block_start/delta/stop, message_delta with usage, message_stop), plus the side requests
// it makes: HEAD /api/hello (a connectivity probe at start-up), /v1/messages/count_tokens, and
// requests without tools (small-model chores such as titles), answered with a short text.
// Claude Code is pointed here with ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY.
//
// The script position of a request is the number of tool_result blocks its messages hold. With
// --json-schema, Claude Code offers a `StructuredOutput` tool whose input schema is the given schema:
// a "final" turn with an object answer calls that tool; once its result is in the conversation the
// mock ends the turn with a short text.
import type http from "node:http";
import {
  type ErrorTurn,
  type MockServerHandle,
  type ModelProtocol,
  type ScriptedModelOptions,
  type TokenUsage,
  sendJson,
  sseEvent,
  startScriptedModel,
  startSse,
} from "./mock-model-script.js";

export type MockAnthropicOptions = ScriptedModelOptions;

type Block = Record<string, unknown>;
interface Message {
  role: string;
  content: string | Block[];
}

/** The error bodies the Anthropic API sends for common statuses. */
export function anthropicErrorBody(status: number): unknown {
  const error = (type: string, message: string) => ({ type: "error", error: { type, message }, request_id: "req_mock" });
  switch (status) {
    case 401:
      return error("authentication_error", "invalid x-api-key");
    case 403:
      return error("permission_error", "Your API key does not have permission to use the specified resource.");
    case 429:
      return error("rate_limit_error", "This request would exceed the rate limit for your organization of 30,000 input tokens per minute.");
    case 500:
      return error("api_error", "Internal server error");
    case 529:
      return error("overloaded_error", "Overloaded");
    default:
      return error("invalid_request_error", `mock error ${status}`);
  }
}

function messagesOf(body: unknown): Message[] {
  const messages = (body as { messages?: unknown } | undefined)?.messages;
  return Array.isArray(messages) ? (messages as Message[]) : [];
}

function blocksOf(message: Message): Block[] {
  return Array.isArray(message.content) ? message.content : [];
}

/** How many tool results the conversation already holds: the script position. */
export function anthropicScriptPosition(body: unknown): number {
  return messagesOf(body).reduce((count, message) => count + blocksOf(message).filter((block) => block.type === "tool_result").length, 0);
}

function toolNames(body: unknown): Set<string> {
  const tools = (body as { tools?: unknown } | undefined)?.tools;
  return new Set(Array.isArray(tools) ? (tools as Block[]).map((tool) => String(tool.name)) : []);
}

/** True once a StructuredOutput call has its result in the conversation: the answer was given. */
function structuredOutputAnswered(body: unknown): boolean {
  const ids = new Set<unknown>();
  for (const message of messagesOf(body)) {
    for (const block of blocksOf(message)) {
      if (block.type === "tool_use" && block.name === "StructuredOutput") ids.add(block.id);
      if (block.type === "tool_result" && ids.has(block.tool_use_id) && block.is_error !== true) return true;
    }
  }
  return false;
}

/** The agent's working directory, as Claude Code states it in the conversation. */
function workingDirectory(body: unknown): string | undefined {
  const match = /Primary working directory: (\S+)/.exec(JSON.stringify(body));
  return match?.[1]?.replace(/\\n.*$/, "");
}

interface OutBlock {
  type: "text" | "tool_use";
  text?: string;
  name?: string;
  input?: unknown;
}

/** The `message_start` event of a response. */
function messageStart(id: string, model: string, usage: Record<string, unknown>): string {
  const message = { id, type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null, usage };
  return sseEvent("message_start", { type: "message_start", message });
}

function streamMessage(res: http.ServerResponse, id: string, model: string, blocks: OutBlock[], stopReason: string, usage: TokenUsage): void {
  const uncached = Math.max(0, usage.input - usage.cached);
  res.write(
    messageStart(id, model, {
      input_tokens: uncached,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: usage.cached,
      output_tokens: 1,
      service_tier: "standard",
    }),
  );
  res.write(sseEvent("ping", { type: "ping" }));
  blocks.forEach((block, index) => {
    if (block.type === "text") {
      res.write(sseEvent("content_block_start", { type: "content_block_start", index, content_block: { type: "text", text: "" } }));
      for (const text of block.text!.match(/[\s\S]{1,40}/g) ?? []) {
        res.write(sseEvent("content_block_delta", { type: "content_block_delta", index, delta: { type: "text_delta", text } }));
      }
    } else {
      res.write(
        sseEvent("content_block_start", {
          type: "content_block_start",
          index,
          content_block: { type: "tool_use", id: `toolu_mock_${id}_${index}`, name: block.name, input: {} },
        }),
      );
      const json = JSON.stringify(block.input);
      for (const partial of json.match(/[\s\S]{1,40}/g) ?? []) {
        res.write(
          sseEvent("content_block_delta", { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: partial } }),
        );
      }
    }
    res.write(sseEvent("content_block_stop", { type: "content_block_stop", index }));
  });
  res.write(
    sseEvent("message_delta", {
      type: "message_delta",
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { input_tokens: uncached, cache_creation_input_tokens: 0, cache_read_input_tokens: usage.cached, output_tokens: usage.output },
    }),
  );
  res.write(sseEvent("message_stop", { type: "message_stop" }));
  res.end();
}

/** A side request (no tools, or not streamed): one short text message. */
function sideAnswer(res: http.ServerResponse, body: unknown, id: string, usage: TokenUsage): void {
  const model = String((body as { model?: unknown }).model ?? "mock-model");
  if ((body as { stream?: unknown }).stream === true) {
    startSse(res);
    streamMessage(res, id, model, [{ type: "text", text: "Mock session" }], "end_turn", usage);
    return;
  }
  sendJson(res, 200, {
    id,
    type: "message",
    role: "assistant",
    model,
    content: [{ type: "text", text: "Mock session" }],
    stop_reason: "end_turn",
    stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: 2 },
  });
}

function sendError(res: http.ServerResponse, turn: ErrorTurn): void {
  sendJson(res, turn.status, turn.body ?? anthropicErrorBody(turn.status), { "request-id": "req_mock", ...turn.headers });
}

/** The Messages API as Claude Code calls it. */
export const anthropicProtocol: ModelProtocol = {
  side({ method, path, body }, { res, count, model, usage }) {
    if (path === "/api/hello") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(method === "HEAD" ? undefined : JSON.stringify({ message: "hello" }));
      return { answeredWith: "side" };
    }
    if (method === "POST" && path === "/v1/messages/count_tokens") {
      sendJson(res, 200, { input_tokens: usage.input });
      return { answeredWith: "side" };
    }
    if (method !== "POST" || path !== "/v1/messages") {
      sendJson(res, 404, { type: "error", error: { type: "not_found_error", message: `mock: no route ${method} ${path}` } });
      return { answeredWith: "not-found" };
    }
    if (toolNames(body).size === 0) {
      sideAnswer(res, body, `msg_mock_${count}`, usage);
      return { answeredWith: "side" };
    }
    if (structuredOutputAnswered(body)) {
      startSse(res);
      streamMessage(res, `msg_mock_${count}`, model, [{ type: "text", text: "Done." }], "end_turn", usage);
      return { position: anthropicScriptPosition(body), answeredWith: "after-structured-output" };
    }
    return undefined;
  },
  position: anthropicScriptPosition,
  error: sendError,
  stall({ res, count, model }) {
    startSse(res);
    res.write(messageStart(`msg_mock_${count}`, model, { input_tokens: 1, output_tokens: 1 }));
  },
  turn(turn, { res, body, count, model, usage }) {
    const id = `msg_mock_${count}`;
    startSse(res);
    switch (turn.kind) {
      case "final":
        if (typeof turn.answer !== "string" && toolNames(body).has("StructuredOutput")) {
          streamMessage(res, id, model, [{ type: "tool_use", name: "StructuredOutput", input: turn.answer }], "tool_use", usage);
        } else {
          const text = typeof turn.answer === "string" ? turn.answer : JSON.stringify(turn.answer);
          streamMessage(res, id, model, [{ type: "text", text }], "end_turn", usage);
        }
        break;
      case "shell":
        streamMessage(
          res,
          id,
          model,
          [{ type: "tool_use", name: "Bash", input: { command: turn.command, description: "Run the scripted command" } }],
          "tool_use",
          usage,
        );
        break;
      case "write": {
        const cwd = workingDirectory(body);
        const filePath = turn.path.startsWith("/") || !cwd ? turn.path : `${cwd}/${turn.path}`;
        streamMessage(
          res,
          id,
          model,
          [{ type: "tool_use", name: "Write", input: { file_path: filePath, content: turn.content } }],
          "tool_use",
          usage,
        );
        break;
      }
    }
  },
  /** A scripted call of a tool by its name (an MCP server's tool, `mcp__<server>__<tool>`), streamed as any tool_use. */
  tool(turn, { res, count, model, usage }) {
    startSse(res);
    streamMessage(res, `msg_mock_${count}`, model, [{ type: "tool_use", name: turn.name, input: turn.input }], "tool_use", usage);
  },
};

export function startMockAnthropic(options: MockAnthropicOptions): Promise<MockServerHandle> {
  return startScriptedModel(anthropicProtocol, options);
}
