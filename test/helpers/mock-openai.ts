// A scripted stand-in for the OpenAI Responses API, as Codex CLI 0.169 calls it: POST /v1/responses
// with `stream: true`, answered with server-sent events. Event shapes follow Codex's own test
// helpers (codex-rs/core/tests/common/responses.rs: ev_response_created, ev_function_call,
// ev_custom_tool_call, ev_assistant_message, ev_completed) and the Responses API's streaming events.
// Codex is pointed here through a custom model provider (see codexMockProviderArgs), which speaks
// HTTP + SSE (the built-in "openai" provider prefers a WebSocket transport).
//
// The script position of a request is the number of tool outputs (function_call_output,
// custom_tool_call_output) its `input` holds. How a shell command or a file write is expressed
// depends on the tools Codex offered in that request:
//   - `exec_command` function (e.g. -m gpt-5.5, or a model Codex has no metadata for);
//   - code mode (the default model gpt-6.1-sol: tool_mode "code_mode_only"): one freeform `exec`
//     tool inside an `additional_tools` input item; the call's input is JavaScript that calls
//     `tools.exec_command({...})` / `tools.apply_patch("...")`.
import type http from "node:http";
import {
  type ErrorTurn,
  type MockServerHandle,
  type ModelProtocol,
  type ModelTurn,
  type ScriptedModelOptions,
  type TokenUsage,
  sendJson,
  sseEvent,
  startScriptedModel,
  startSse,
} from "./mock-model-script.js";

export type MockOpenAIOptions = ScriptedModelOptions;

type Item = Record<string, unknown>;

/** -c overrides that point Codex at the mock (API key read from env MOCK_OPENAI_API_KEY). */
export function codexMockProviderArgs(
  url: string,
  extra: { requestMaxRetries?: number; streamMaxRetries?: number; streamIdleTimeoutMs?: number } = {},
): string[] {
  const args = [
    "-c",
    'model_provider="runner_mock"',
    "-c",
    'model_providers.runner_mock.name="runner mock"',
    "-c",
    `model_providers.runner_mock.base_url="${url}/v1"`,
    "-c",
    'model_providers.runner_mock.env_key="MOCK_OPENAI_API_KEY"',
    "-c",
    'model_providers.runner_mock.wire_api="responses"',
  ];
  if (extra.requestMaxRetries !== undefined) args.push("-c", `model_providers.runner_mock.request_max_retries=${extra.requestMaxRetries}`);
  if (extra.streamMaxRetries !== undefined) args.push("-c", `model_providers.runner_mock.stream_max_retries=${extra.streamMaxRetries}`);
  if (extra.streamIdleTimeoutMs !== undefined) args.push("-c", `model_providers.runner_mock.stream_idle_timeout_ms=${extra.streamIdleTimeoutMs}`);
  return args;
}

/** The error bodies the OpenAI API sends for common statuses. */
export function openaiErrorBody(status: number): unknown {
  switch (status) {
    case 401:
      return {
        error: {
          message: "Incorrect API key provided: sk-mock***. You can find your API key at https://platform.openai.com/account/api-keys.",
          type: "invalid_request_error",
          param: null,
          code: "invalid_api_key",
        },
      };
    case 429:
      return {
        error: {
          message:
            "Rate limit reached for gpt-6.1-sol in organization org-mock on tokens per min (TPM): Limit 30000, Used 30000, Requested 1200. Please try again in 2.4s.",
          type: "tokens",
          param: null,
          code: "rate_limit_exceeded",
        },
      };
    case 500:
      return {
        error: { message: "The server had an error while processing your request. Sorry about that!", type: "server_error", param: null, code: null },
      };
    case 503:
      return { error: { message: "The engine is currently overloaded, please try again later", type: "server_error", param: null, code: null } };
    default:
      return { error: { message: `mock error ${status}`, type: "invalid_request_error", param: null, code: null } };
  }
}

function inputItems(body: unknown): Item[] {
  const input = (body as { input?: unknown } | undefined)?.input;
  return Array.isArray(input) ? (input as Item[]) : [];
}

/** How many tool results the conversation already holds: the script position. */
export function openaiScriptPosition(body: unknown): number {
  return inputItems(body).filter((item) => item.type === "function_call_output" || item.type === "custom_tool_call_output").length;
}

interface OfferedTools {
  execCommand: boolean;
  applyPatch: boolean;
  codeMode: boolean;
}

function offeredTools(body: unknown): OfferedTools {
  const names = new Set<string>();
  const walk = (tools: unknown): void => {
    if (!Array.isArray(tools)) return;
    for (const tool of tools as Item[]) {
      if (typeof tool.name === "string") names.add(`${tool.type as string}:${tool.name}`);
      walk(tool.tools);
    }
  };
  walk((body as { tools?: unknown } | undefined)?.tools);
  const topLevel = new Set(names);
  for (const item of inputItems(body)) if (item.type === "additional_tools") walk(item.tools);
  return {
    execCommand: topLevel.has("function:exec_command"),
    applyPatch: topLevel.has("custom:apply_patch"),
    codeMode: !topLevel.has("function:exec_command") && names.has("custom:exec"),
  };
}

function patchAddingFile(path: string, content: string): string {
  const lines = content
    .replace(/\n$/, "")
    .split("\n")
    .map((line) => `+${line}`);
  return ["*** Begin Patch", `*** Add File: ${path}`, ...lines, "*** End Patch", ""].join("\n");
}

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** The output item that carries a shell or write turn, in the form the offered tools call for. */
function toolCallItem(turn: Extract<ModelTurn, { kind: "shell" | "write" }>, tools: OfferedTools, callId: string): Item {
  if (tools.codeMode) {
    const js =
      turn.kind === "shell"
        ? `const r = await tools.exec_command({ cmd: ${JSON.stringify(turn.command)}, yield_time_ms: 30000 });\ntext(JSON.stringify(r));\n`
        : `const r = await tools.apply_patch(${JSON.stringify(patchAddingFile(turn.path, turn.content))});\ntext(JSON.stringify(r));\n`;
    return { type: "custom_tool_call", id: `ctc_${callId}`, call_id: callId, name: "exec", input: js, status: "completed" };
  }
  if (turn.kind === "write" && tools.applyPatch) {
    return {
      type: "custom_tool_call",
      id: `ctc_${callId}`,
      call_id: callId,
      name: "apply_patch",
      input: patchAddingFile(turn.path, turn.content),
      status: "completed",
    };
  }
  const command = turn.kind === "shell" ? turn.command : `printf %s ${shellQuote(turn.content)} > ${shellQuote(turn.path)}`;
  return {
    type: "function_call",
    id: `fc_${callId}`,
    call_id: callId,
    name: "exec_command",
    arguments: JSON.stringify({ cmd: command, yield_time_ms: 30000 }),
    status: "completed",
  };
}

function usageBlock(usage: TokenUsage): Item {
  return {
    input_tokens: usage.input,
    input_tokens_details: { cached_tokens: usage.cached },
    output_tokens: usage.output,
    output_tokens_details: { reasoning_tokens: usage.reasoning },
    total_tokens: usage.input + usage.output,
  };
}

function streamItems(res: http.ServerResponse, responseId: string, model: string, items: Item[], usage: TokenUsage): void {
  const base = { id: responseId, object: "response", created_at: Math.floor(Date.now() / 1000), model };
  res.write(sseEvent("response.created", { type: "response.created", response: { ...base, status: "in_progress", output: [] } }));
  res.write(sseEvent("response.in_progress", { type: "response.in_progress", response: { ...base, status: "in_progress", output: [] } }));
  items.forEach((item, outputIndex) => {
    if (item.type === "message") {
      const text = ((item.content as Item[])[0]!.text as string) ?? "";
      res.write(
        sseEvent("response.output_item.added", {
          type: "response.output_item.added",
          output_index: outputIndex,
          item: { ...item, status: "in_progress", content: [] },
        }),
      );
      res.write(
        sseEvent("response.content_part.added", {
          type: "response.content_part.added",
          item_id: item.id,
          output_index: outputIndex,
          content_index: 0,
          part: { type: "output_text", text: "", annotations: [] },
        }),
      );
      for (const delta of text.match(/[\s\S]{1,40}/g) ?? []) {
        res.write(
          sseEvent("response.output_text.delta", {
            type: "response.output_text.delta",
            item_id: item.id,
            output_index: outputIndex,
            content_index: 0,
            delta,
          }),
        );
      }
      res.write(
        sseEvent("response.output_text.done", {
          type: "response.output_text.done",
          item_id: item.id,
          output_index: outputIndex,
          content_index: 0,
          text,
        }),
      );
      res.write(
        sseEvent("response.content_part.done", {
          type: "response.content_part.done",
          item_id: item.id,
          output_index: outputIndex,
          content_index: 0,
          part: { type: "output_text", text, annotations: [] },
        }),
      );
    } else {
      res.write(
        sseEvent("response.output_item.added", {
          type: "response.output_item.added",
          output_index: outputIndex,
          item: { ...item, status: "in_progress" },
        }),
      );
    }
    res.write(sseEvent("response.output_item.done", { type: "response.output_item.done", output_index: outputIndex, item }));
  });
  res.write(
    sseEvent("response.completed", {
      type: "response.completed",
      response: { ...base, status: "completed", output: items, usage: usageBlock(usage) },
    }),
  );
  res.end();
}

function sendError(res: http.ServerResponse, turn: ErrorTurn): void {
  sendJson(res, turn.status, turn.body ?? openaiErrorBody(turn.status), { "x-request-id": "req_mock", ...turn.headers });
}

/** The Responses API as Codex calls it. */
export const openaiProtocol: ModelProtocol = {
  side({ method, path }, { res }) {
    if (method === "GET" && path === "/v1/models") {
      sendJson(res, 200, { object: "list", data: [] });
      return { answeredWith: "side" };
    }
    if (method !== "POST" || path !== "/v1/responses") {
      sendJson(res, 404, { error: { message: `mock: no route ${method} ${path}`, type: "invalid_request_error" } });
      return { answeredWith: "not-found" };
    }
    return undefined;
  },
  position: openaiScriptPosition,
  error: sendError,
  stall({ res, count, model }) {
    startSse(res);
    res.write(
      sseEvent("response.created", {
        type: "response.created",
        response: { id: `resp_mock_${count}`, object: "response", status: "in_progress", model, output: [] },
      }),
    );
  },
  turn(turn, { res, body, position, count, model, usage }) {
    const responseId = `resp_mock_${count}`;
    startSse(res);
    if (turn.kind === "final") {
      const text = typeof turn.answer === "string" ? turn.answer : JSON.stringify(turn.answer);
      const message = {
        type: "message",
        id: `msg_mock_${count}`,
        role: "assistant",
        status: "completed",
        content: [{ type: "output_text", text, annotations: [] }],
      };
      streamItems(res, responseId, model, [message], usage);
    } else {
      streamItems(res, responseId, model, [toolCallItem(turn, offeredTools(body), `call_mock_${position}`)], usage);
    }
  },
};

export function startMockOpenAI(options: MockOpenAIOptions): Promise<MockServerHandle> {
  return startScriptedModel(openaiProtocol, options);
}
