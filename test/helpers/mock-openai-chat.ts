// A scripted stand-in for the OpenAI Chat Completions API (POST /v1/chat/completions with
// `stream: true`, answered with `data: <chat.completion.chunk>` server-sent events and `data: [DONE]`),
// as OpenAI-compatible agents call it (Qwen Code through OPENAI_BASE_URL). Chunk shapes follow the
// API reference: `choices[].delta` with `content` or `tool_calls[{index, id, type, function: {name,
// arguments}}]`, a last chunk with `finish_reason`, and `usage` in a chunk with empty `choices` when
// the request asks for it (`stream_options.include_usage`). A request without `stream` gets one
// chat.completion object (agents use those for side requests).
//
// The script position of a request is the number of `role: "tool"` messages it carries. A shell turn
// calls run_shell_command {command}; a write turn write_file {file_path, content}; a final turn with
// an object answer calls the `structured_output` tool when the request offers it (Qwen Code
// --json-schema), else answers with the JSON text.
import type http from "node:http";
import path from "node:path";
import {
  DEFAULT_USAGE,
  type ErrorTurn,
  type MockServerHandle,
  type ModelTurn,
  ScriptChooser,
  type ScriptSource,
  type TokenUsage,
  sendJson,
  startRecordingServer,
  startSse,
} from "./mock-model-script.js";
import { openaiErrorBody } from "./mock-openai.js";

export interface MockOpenAIChatOptions {
  script: ScriptSource;
  usage?: TokenUsage;
  /** Write turns name their file relative to this folder, absolute (Qwen Code's write_file takes absolute paths only). */
  root?: string;
}

type Json = Record<string, unknown>;

function messagesOf(body: unknown): Json[] {
  const messages = (body as { messages?: unknown } | undefined)?.messages;
  return Array.isArray(messages) ? (messages as Json[]) : [];
}

/** How many tool results the conversation already holds: the script position. */
export function chatScriptPosition(body: unknown): number {
  return messagesOf(body).filter((message) => message.role === "tool").length;
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

function answerFor(turn: Extract<ModelTurn, { kind: "shell" | "write" | "final" }>, body: unknown, root: string | undefined): Answer {
  switch (turn.kind) {
    case "shell":
      return {
        toolCall: { name: "run_shell_command", arguments: { command: turn.command, description: "mock: run a command", is_background: false } },
      };
    case "write":
      return { toolCall: { name: "write_file", arguments: { file_path: root ? path.resolve(root, turn.path) : turn.path, content: turn.content } } };
    case "final":
      if (typeof turn.answer !== "string" && offersTool(body, "structured_output")) {
        return { toolCall: { name: "structured_output", arguments: turn.answer } };
      }
      return { content: typeof turn.answer === "string" ? turn.answer : JSON.stringify(turn.answer) };
  }
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

export async function startMockOpenAIChat(options: MockOpenAIChatOptions): Promise<MockServerHandle> {
  const scripts = new ScriptChooser(options.script);
  const usage = options.usage ?? DEFAULT_USAGE;
  let responses = 0;
  return startRecordingServer(({ method, path, body }, res) => {
    if (method === "GET" && path.endsWith("/models")) {
      sendJson(res, 200, { object: "list", data: [{ id: "mock-model", object: "model", owned_by: "mock" }] });
      return { position: undefined, answeredWith: "side" };
    }
    if (method !== "POST" || !path.endsWith("/chat/completions")) {
      sendJson(res, 404, { error: { message: `mock: no route ${method} ${path}`, type: "invalid_request_error" } });
      return { position: undefined, answeredWith: "not-found" };
    }
    const model = String((body as { model?: unknown }).model ?? "mock-model");
    const id = `chatcmpl_mock_${++responses}`;
    const stream = (body as { stream?: unknown }).stream === true;
    if (!stream) {
      // A side request (a title, a summary, a classifier): a short plain answer.
      sendJson(res, 200, completion(id, model, { content: "mock side answer" }, { input: 10, cached: 0, output: 5, reasoning: 0 }, 0));
      return { position: undefined, answeredWith: "side" };
    }
    const position = chatScriptPosition(body);
    const turn = scripts.cursorFor(body).turnAt(position);
    switch (turn.kind) {
      case "error":
        sendError(res, turn);
        break;
      case "hang":
        if (turn.mode === "mid-stream") {
          startSse(res);
          res.write(
            `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created: 0, model, choices: [{ index: 0, delta: { role: "assistant", content: "Working" }, finish_reason: null }] })}\n\n`,
          );
        }
        break;
      default:
        startSse(res);
        streamAnswer(res, id, model, answerFor(turn, body, options.root), usage, position);
    }
    return { position, answeredWith: turn.kind };
  });
}
