// A scripted stand-in for an OpenAI-compatible Chat Completions API, as OpenCode 1.18.33 calls it
// through its bundled @ai-sdk/openai-compatible provider: POST /v1/chat/completions with
// `stream: true` and `stream_options.include_usage`, answered with server-sent `data:` chunks
// (chat.completion.chunk objects, a usage chunk without choices, then `data: [DONE]`). OpenCode
// also asks the model for a session title first: a request without tools, answered with a short
// text. OpenCode is pointed here by a custom provider in OPENCODE_CONFIG_CONTENT (opencodeMockConfig).
// (h/gemini's mock-openai-chat.ts speaks the same wire format with Qwen Code's tool names.)
//
// The script position of a request is the number of `role: "tool"` messages it holds. Shell turns
// call OpenCode's `bash` tool {command, description}; write turns its `write` tool {filePath,
// content} (a relative path is resolved against OpenCode's working directory).
import type http from "node:http";
import {
  type ErrorTurn,
  type MockServerHandle,
  type ModelProtocol,
  type ModelTurn,
  type ScriptedModelOptions,
  type TokenUsage,
  sendJson,
  startScriptedModel,
  startSse,
} from "./mock-model-script.js";
import { openaiErrorBody } from "./mock-openai.js";

type Message = { role?: string; content?: unknown };

/** The provider id and model id the mock is configured under in OpenCode. */
export const OPENCODE_MOCK_PROVIDER = "runner_mock";
export const OPENCODE_MOCK_MODEL = "mock-model";

/**
 * An OpenCode config (the text of OPENCODE_CONFIG_CONTENT) with one custom provider at the mock.
 * The API key is read from the env var MOCK_OPENAI_API_KEY ("{env:…}" substitution).
 */
export function opencodeMockConfig(url: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    $schema: "https://opencode.ai/config.json",
    model: `${OPENCODE_MOCK_PROVIDER}/${OPENCODE_MOCK_MODEL}`,
    small_model: `${OPENCODE_MOCK_PROVIDER}/${OPENCODE_MOCK_MODEL}`,
    provider: {
      [OPENCODE_MOCK_PROVIDER]: {
        name: "runner mock",
        npm: "@ai-sdk/openai-compatible",
        options: { baseURL: `${url}/v1`, apiKey: "{env:MOCK_OPENAI_API_KEY}" },
        models: { [OPENCODE_MOCK_MODEL]: { name: "Mock model", cost: { input: 1, output: 2 }, limit: { context: 200000, output: 8192 } } },
      },
    },
    ...extra,
  };
}

function messagesOf(body: unknown): Message[] {
  const messages = (body as { messages?: unknown } | undefined)?.messages;
  return Array.isArray(messages) ? (messages as Message[]) : [];
}

/** How many tool results the conversation already holds: the script position. */
export function chatScriptPosition(body: unknown): number {
  return messagesOf(body).filter((message) => message.role === "tool").length;
}

function hasTools(body: unknown): boolean {
  const tools = (body as { tools?: unknown } | undefined)?.tools;
  return Array.isArray(tools) && tools.length > 0;
}

function usageBlock(usage: TokenUsage): Record<string, unknown> {
  return {
    prompt_tokens: usage.input,
    completion_tokens: usage.output,
    total_tokens: usage.input + usage.output,
    prompt_tokens_details: { cached_tokens: usage.cached },
    completion_tokens_details: { reasoning_tokens: usage.reasoning },
  };
}

function data(chunk: unknown): string {
  return `data: ${JSON.stringify(chunk)}\n\n`;
}

interface Streamed {
  text?: string;
  toolCall?: { id: string; name: string; arguments: Record<string, unknown> };
}

function streamChunks(res: http.ServerResponse, id: string, model: string, what: Streamed, usage: TokenUsage): void {
  const base = { id, object: "chat.completion.chunk", created: Math.floor(Date.now() / 1000), model };
  const chunk = (delta: Record<string, unknown>, finish: string | null) => data({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] });
  startSse(res);
  res.write(chunk({ role: "assistant", content: "" }, null));
  for (const piece of what.text?.match(/[\s\S]{1,40}/g) ?? []) res.write(chunk({ content: piece }, null));
  if (what.toolCall) {
    const args = JSON.stringify(what.toolCall.arguments);
    res.write(
      chunk({ tool_calls: [{ index: 0, id: what.toolCall.id, type: "function", function: { name: what.toolCall.name, arguments: "" } }] }, null),
    );
    for (const piece of args.match(/[\s\S]{1,40}/g) ?? []) res.write(chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] }, null));
  }
  res.write(chunk({}, what.toolCall ? "tool_calls" : "stop"));
  res.write(data({ ...base, choices: [], usage: usageBlock(usage) }));
  res.write("data: [DONE]\n\n");
  res.end();
}

function toolCallOf(turn: Extract<ModelTurn, { kind: "shell" | "write" }>, callId: string): Streamed["toolCall"] {
  if (turn.kind === "shell") return { id: callId, name: "bash", arguments: { command: turn.command, description: `Run ${turn.command}` } };
  return { id: callId, name: "write", arguments: { filePath: turn.path, content: turn.content } };
}

function sendError(res: http.ServerResponse, turn: ErrorTurn): void {
  sendJson(res, turn.status, turn.body ?? openaiErrorBody(turn.status), { "x-request-id": "req_mock", ...turn.headers });
}

/** OpenAI-compatible Chat Completions as OpenCode calls it (through @ai-sdk/openai-compatible). */
export const opencodeChatProtocol: ModelProtocol = {
  side({ method, path, body }, { res, count, model, usage }) {
    if (method === "GET" && path === "/v1/models") {
      sendJson(res, 200, { object: "list", data: [{ id: OPENCODE_MOCK_MODEL, object: "model", owned_by: "runner" }] });
      return { answeredWith: "side" };
    }
    if (method !== "POST" || path !== "/v1/chat/completions") {
      sendJson(res, 404, { error: { message: `mock: no route ${method} ${path}`, type: "invalid_request_error" } });
      return { answeredWith: "not-found" };
    }
    if (hasTools(body)) return undefined;
    // A side request (OpenCode's session title, asked without tools): one short line of text.
    streamChunks(res, `chatcmpl-mock-${count}`, model, { text: "Mock session title" }, usage);
    return { answeredWith: "side" };
  },
  position: chatScriptPosition,
  error: sendError,
  stall({ res, count, model }) {
    startSse(res);
    res.write(
      data({
        id: `chatcmpl-mock-${count}`,
        object: "chat.completion.chunk",
        created: 0,
        model,
        choices: [{ index: 0, delta: { role: "assistant", content: "" } }],
      }),
    );
  },
  turn(turn, { res, position, count, model, usage }) {
    const id = `chatcmpl-mock-${count}`;
    if (turn.kind === "final") {
      streamChunks(res, id, model, { text: typeof turn.answer === "string" ? turn.answer : JSON.stringify(turn.answer) }, usage);
    } else {
      streamChunks(res, id, model, { toolCall: toolCallOf(turn, `call_mock_${position}`) }, usage);
    }
  },
};

export function startMockOpenCode(options: ScriptedModelOptions): Promise<MockServerHandle> {
  return startScriptedModel(opencodeChatProtocol, options);
}
