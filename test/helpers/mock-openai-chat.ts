// A scripted stand-in for the OpenAI Chat Completions API (POST /v1/chat/completions with
// `stream: true`, answered with `data: <chat.completion.chunk>` server-sent events and `data: [DONE]`),
// as OpenAI-compatible agents call it: Qwen Code through OPENAI_BASE_URL (startMockOpenAIChat),
// OpenCode through @ai-sdk/openai-compatible (mock-opencode.ts). Chunk shapes follow the API
// reference: `choices[].delta` with `content` or `tool_calls[{index, id, type, function: {name,
// arguments}}]`, a last chunk with `finish_reason`, and `usage` in a chunk with empty `choices` when
// the request asks for it (`stream_options.include_usage`). A side request (ChatDialect.isSide: a
// title, a summary, a classifier) gets a short text, streamed when it asks for a stream, else one
// chat.completion object.
//
// The script position of a request is the number of `role: "tool"` messages it carries. What a shell
// or a write turn calls is the agent's own tool (ChatDialect.toolCall); Qwen Code's: run_shell_command
// {command}, write_file {file_path, content}. A final turn with an object answer calls the
// `structured_output` tool when the request offers it (Qwen Code --json-schema), else answers with
// the JSON text. A write turn's relative path is made absolute against the working directory the
// system prompt names (Qwen Code's write_file takes absolute paths only). The script, positions and
// recording are startScriptedModel's (mock-model-script.ts).
import type http from "node:http";
import path from "node:path";
import {
  type ErrorTurn,
  type MockServerHandle,
  type ModelProtocol,
  type ModelTurn,
  type ScriptedModelOptions,
  type ShellTurn,
  type TokenUsage,
  type WriteTurn,
  sendJson,
  startScriptedModel,
  startSse,
} from "./mock-model-script.js";
import { openaiErrorBody } from "./mock-openai.js";

type Json = Record<string, unknown>;

/** What differs between the agents that speak Chat Completions. */
export interface ChatDialect {
  /** The agent's own tool call for a shell or a write turn. */
  toolCall(turn: ShellTurn | WriteTurn, body: unknown): { name: string; arguments: Json };
  /** A request that is no scripted turn: the agent's side question (a title, a summary, a classifier). */
  isSide(body: unknown): boolean;
  /** The side request's answer. */
  sideText: string;
}

function messagesOf(body: unknown): Json[] {
  const messages = (body as { messages?: unknown } | undefined)?.messages;
  return Array.isArray(messages) ? (messages as Json[]) : [];
}

/** How many tool results the conversation already holds: the script position. */
function chatScriptPosition(body: unknown): number {
  return messagesOf(body).filter((message) => message.role === "tool").length;
}

/** A request that offers the model no tools (OpenCode's title request; pi makes none). */
export function offersNoTools(body: unknown): boolean {
  const tools = (body as { tools?: unknown } | undefined)?.tools;
  return !(Array.isArray(tools) && tools.length > 0);
}

function offersTool(body: unknown, name: string): boolean {
  const tools = (body as { tools?: unknown } | undefined)?.tools;
  return Array.isArray(tools) && (tools as Json[]).some((tool) => (tool.function as Json | undefined)?.name === name);
}

function chatUsage(usage: TokenUsage): Json {
  return {
    prompt_tokens: usage.input,
    completion_tokens: usage.output,
    total_tokens: usage.input + usage.output,
    prompt_tokens_details: { cached_tokens: usage.cached },
    completion_tokens_details: { reasoning_tokens: usage.reasoning },
  };
}

interface Answer {
  content?: string;
  toolCall?: { name: string; arguments: Json };
}

function answerFor(turn: Extract<ModelTurn, { kind: "shell" | "write" | "final" }>, body: unknown, dialect: ChatDialect): Answer {
  if (turn.kind !== "final") return { toolCall: dialect.toolCall(turn, body) };
  if (typeof turn.answer !== "string" && offersTool(body, "structured_output")) {
    return { toolCall: { name: "structured_output", arguments: turn.answer } };
  }
  return { content: typeof turn.answer === "string" ? turn.answer : JSON.stringify(turn.answer) };
}

function streamAnswer(res: http.ServerResponse, id: string, model: string, answer: Answer, usage: TokenUsage, position: number): void {
  const base = { id, object: "chat.completion.chunk", created: Math.floor(Date.now() / 1000), model };
  const chunk = (choices: Json[], extra: Json = {}) => res.write(`data: ${JSON.stringify({ ...base, choices, ...extra })}\n\n`);
  chunk([{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }]);
  if (answer.content !== undefined) {
    for (const piece of answer.content.match(/[\s\S]{1,40}/g) ?? []) chunk([{ index: 0, delta: { content: piece }, finish_reason: null }]);
  }
  if (answer.toolCall) {
    const args = JSON.stringify(answer.toolCall.arguments);
    chunk([
      {
        index: 0,
        delta: { tool_calls: [{ index: 0, id: `call_mock_${position}`, type: "function", function: { name: answer.toolCall.name, arguments: "" } }] },
        finish_reason: null,
      },
    ]);
    for (const piece of args.match(/[\s\S]{1,40}/g) ?? []) {
      chunk([{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: piece } }] }, finish_reason: null }]);
    }
  }
  chunk([{ index: 0, delta: {}, finish_reason: answer.toolCall ? "tool_calls" : "stop" }]);
  chunk([], { usage: chatUsage(usage) });
  res.write("data: [DONE]\n\n");
  res.end();
}

function completion(id: string, model: string, answer: Answer, usage: TokenUsage, position: number): Json {
  const message: Json = { role: "assistant", content: answer.content ?? null };
  if (answer.toolCall) {
    message.tool_calls = [
      {
        id: `call_mock_${position}`,
        type: "function",
        function: { name: answer.toolCall.name, arguments: JSON.stringify(answer.toolCall.arguments) },
      },
    ];
  }
  return {
    id,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message, finish_reason: answer.toolCall ? "tool_calls" : "stop" }],
    usage: chatUsage(usage),
  };
}

function sendError(res: http.ServerResponse, turn: ErrorTurn): void {
  sendJson(res, turn.status, turn.body ?? openaiErrorBody(turn.status), { "x-request-id": "req_mock", ...turn.headers });
}

/** The working directory a Qwen Code system prompt names ("I'm currently working in the directory: /tmp/…"). */
function workingDirectory(body: unknown): string | undefined {
  const match = /working in the directory: (\S+?)(?:\\n|\s|$)/.exec(JSON.stringify(body));
  return match?.[1];
}

const SIDE_USAGE: TokenUsage = { input: 10, cached: 0, output: 5, reasoning: 0 };

/** Chat Completions as the agent of `dialect` calls it. */
export function chatCompletionsProtocol(dialect: ChatDialect): ModelProtocol {
  return {
    side({ method, path: route, body }, { res, model, count, usage }) {
      if (method === "GET" && route.endsWith("/models")) {
        sendJson(res, 200, { object: "list", data: [{ id: "mock-model", object: "model", owned_by: "mock" }] });
        return { answeredWith: "side" };
      }
      if (method !== "POST" || !route.endsWith("/chat/completions")) {
        sendJson(res, 404, { error: { message: `mock: no route ${method} ${route}`, type: "invalid_request_error" } });
        return { answeredWith: "not-found" };
      }
      if (!dialect.isSide(body)) return undefined;
      if ((body as { stream?: unknown } | undefined)?.stream === true) {
        startSse(res);
        streamAnswer(res, `chatcmpl_mock_${count}`, model, { content: dialect.sideText }, usage, 0);
      } else {
        sendJson(res, 200, completion(`chatcmpl_mock_${count}`, model, { content: dialect.sideText }, SIDE_USAGE, 0));
      }
      return { answeredWith: "side" };
    },
    position: chatScriptPosition,
    error: sendError,
    stall({ res, count, model }) {
      startSse(res);
      const chunk = { id: `chatcmpl_mock_${count}`, object: "chat.completion.chunk", created: 0, model };
      res.write(
        `data: ${JSON.stringify({ ...chunk, choices: [{ index: 0, delta: { role: "assistant", content: "Working" }, finish_reason: null }] })}\n\n`,
      );
    },
    turn(turn, { res, body, position, count, model, usage }) {
      startSse(res);
      streamAnswer(res, `chatcmpl_mock_${count}`, model, answerFor(turn, body, dialect), usage, position);
    },
  };
}

/** Qwen Code: Gemini CLI's tools; its side requests (next-speaker checks, summaries) are not streamed. */
const QWEN_DIALECT: ChatDialect = {
  toolCall: (turn, body) => {
    if (turn.kind === "shell") {
      return { name: "run_shell_command", arguments: { command: turn.command, description: "mock: run a command", is_background: false } };
    }
    const root = workingDirectory(body);
    return { name: "write_file", arguments: { file_path: root ? path.resolve(root, turn.path) : turn.path, content: turn.content } };
  },
  isSide: (body) => (body as { stream?: unknown } | undefined)?.stream !== true,
  sideText: "mock side answer",
};

export function startMockOpenAIChat(options: ScriptedModelOptions): Promise<MockServerHandle> {
  return startScriptedModel(chatCompletionsProtocol(QWEN_DIALECT), options);
}
