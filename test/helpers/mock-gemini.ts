// A scripted stand-in for the Gemini API as Gemini CLI 0.61 calls it through its gateway auth
// (GOOGLE_GEMINI_BASE_URL): POST /v1beta/models/<model>:streamGenerateContent?alt=sse for the main
// turn, answered with server-sent events whose data lines are GenerateContentResponse objects, and
// POST /v1beta/models/<model>:generateContent for side requests (model routing, next-speaker checks),
// answered with one JSON object. Shapes follow the Gemini API reference (candidates[].content.parts[]
// with text / functionCall, usageMetadata) and @google/genai's SSE reader (`data: {...}` lines).
//
// The script, positions, errors before a turn and recording are startScriptedModel's
// (mock-model-script.ts); this file is the Gemini API's ModelProtocol. The script position of a
// request is the number of functionResponse parts its `contents` holds.
// A shell turn calls run_shell_command {command}; a write turn write_file {file_path, content}.
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

export type MockGeminiOptions = ScriptedModelOptions;

type Part = Record<string, unknown>;

/** The error bodies the Gemini API sends (google.rpc.Status in an `error` envelope). */
export function geminiErrorBody(status: number): unknown {
  switch (status) {
    case 400:
      return {
        error: {
          code: 400,
          message: "API key not valid. Please pass a valid API key.",
          status: "INVALID_ARGUMENT",
          details: [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "API_KEY_INVALID", domain: "googleapis.com" }],
        },
      };
    case 401:
      return {
        error: {
          code: 401,
          message:
            "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.",
          status: "UNAUTHENTICATED",
        },
      };
    case 403:
      return { error: { code: 403, message: "Permission denied: Consumer 'api_key:mock' has been suspended.", status: "PERMISSION_DENIED" } };
    case 429:
      return {
        error: {
          code: 429,
          message:
            "You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.",
          status: "RESOURCE_EXHAUSTED",
          details: [
            {
              "@type": "type.googleapis.com/google.rpc.QuotaFailure",
              violations: [
                {
                  quotaMetric: "generativelanguage.googleapis.com/generate_content_free_tier_requests",
                  quotaId: "GenerateRequestsPerMinutePerProjectPerModel-FreeTier",
                  quotaDimensions: { location: "global", model: "gemini-2.5-pro" },
                  quotaValue: "5",
                },
              ],
            },
            { "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "2s" },
          ],
        },
      };
    case 500:
      return {
        error: {
          code: 500,
          message: "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting",
          status: "INTERNAL",
        },
      };
    case 503:
      return { error: { code: 503, message: "The model is overloaded. Please try again later.", status: "UNAVAILABLE" } };
    default:
      return { error: { code: status, message: `mock error ${status}`, status: "UNKNOWN" } };
  }
}

/** The body of a daily-quota 429 (Gemini CLI calls it terminal: "You have exhausted your daily quota on this model."). */
export function geminiDailyQuotaBody(): unknown {
  return {
    error: {
      code: 429,
      message: "You exceeded your current quota, please check your plan and billing details.",
      status: "RESOURCE_EXHAUSTED",
      details: [
        {
          "@type": "type.googleapis.com/google.rpc.QuotaFailure",
          violations: [
            {
              quotaMetric: "generativelanguage.googleapis.com/generate_content_free_tier_requests",
              quotaId: "GenerateRequestsPerDayPerProjectPerModel-FreeTier",
              quotaValue: "100",
            },
          ],
        },
      ],
    },
  };
}

function contentsOf(body: unknown): Array<{ role?: string; parts?: Part[] }> {
  const contents = (body as { contents?: unknown } | undefined)?.contents;
  return Array.isArray(contents) ? (contents as Array<{ role?: string; parts?: Part[] }>) : [];
}

/** How many tool results the conversation already holds: the script position. */
export function geminiScriptPosition(body: unknown): number {
  let count = 0;
  for (const content of contentsOf(body)) for (const part of content.parts ?? []) if (part.functionResponse) count++;
  return count;
}

function usageMetadata(usage: TokenUsage): Record<string, number> {
  return {
    promptTokenCount: usage.input,
    candidatesTokenCount: usage.output,
    cachedContentTokenCount: usage.cached,
    thoughtsTokenCount: usage.reasoning,
    totalTokenCount: usage.input + usage.output + usage.reasoning,
  };
}

function response(parts: Part[], model: string, usage: TokenUsage, id: string, finishReason = "STOP"): Record<string, unknown> {
  return {
    candidates: [{ content: { role: "model", parts }, finishReason, index: 0 }],
    usageMetadata: usageMetadata(usage),
    modelVersion: model,
    responseId: id,
  };
}

function partsFor(turn: Extract<ModelTurn, { kind: "shell" | "write" | "final" }>): Part[] {
  switch (turn.kind) {
    case "shell":
      return [{ functionCall: { name: "run_shell_command", args: { command: turn.command, description: "mock: run a command" } } }];
    case "write":
      return [{ functionCall: { name: "write_file", args: { file_path: turn.path, content: turn.content } } }];
    case "final":
      return [{ text: typeof turn.answer === "string" ? turn.answer : JSON.stringify(turn.answer) }];
  }
}

function sendError(res: http.ServerResponse, turn: ErrorTurn): void {
  sendJson(res, turn.status, turn.body ?? geminiErrorBody(turn.status), turn.headers ?? {});
}

/** A side request (routing classifier, next-speaker check, …): a generateContent with a JSON answer expected. */
function sideAnswer(body: unknown): string {
  const text = JSON.stringify(body);
  if (text.includes("complexity_score")) return JSON.stringify({ complexity_reasoning: "mock: a simple task", complexity_score: 10 });
  if (text.includes("next_speaker")) return JSON.stringify({ reasoning: "mock: the model answered", next_speaker: "user" });
  return JSON.stringify({ reasoning: "mock", result: "ok" });
}

const ROUTE = /^\/v1(?:beta|alpha)?\/models\/([^/:]+):(streamGenerateContent|generateContent|countTokens)$/;
const SIDE_USAGE: TokenUsage = { input: 10, cached: 0, output: 5, reasoning: 0 };

/** A data line of the SSE stream (@google/genai reads `data: {...}` events). */
function dataLine(res: http.ServerResponse, data: unknown): void {
  res.write(`data: ${JSON.stringify(data)}\r\n\r\n`);
}

export const geminiProtocol: ModelProtocol = {
  side({ method, path, body }, { res, count, usage }) {
    const match = method === "POST" ? ROUTE.exec(path) : null;
    if (!match) {
      sendJson(res, 404, { error: { code: 404, message: `mock: no route ${method} ${path}`, status: "NOT_FOUND" } });
      return { answeredWith: "not-found" };
    }
    if (match[2] === "countTokens") {
      sendJson(res, 200, { totalTokens: usage.input });
      return { answeredWith: "side" };
    }
    if (match[2] === "generateContent") {
      sendJson(res, 200, response([{ text: sideAnswer(body) }], decodeURIComponent(match[1]!), SIDE_USAGE, `resp_mock_${count}`));
      return { answeredWith: "side" };
    }
    return undefined;
  },
  position: geminiScriptPosition,
  error: sendError,
  stall({ res, count, model }) {
    startSse(res);
    const first = response([{ text: "Working" }], model, SIDE_USAGE, `resp_mock_${count}`);
    delete (first.candidates as Part[])[0]!.finishReason;
    dataLine(res, first);
  },
  turn(turn, { res, count, model, usage }) {
    startSse(res);
    dataLine(res, response(partsFor(turn), model, usage, `resp_mock_${count}`));
    res.end();
  },
};

export function startMockGemini(options: MockGeminiOptions): Promise<MockServerHandle> {
  return startScriptedModel(geminiProtocol, options);
}
