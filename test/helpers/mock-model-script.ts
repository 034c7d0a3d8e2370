// The scripted model server every provider mock shares (startScriptedModel), and the script it
// follows; each provider is one ModelProtocol: mock-openai.ts (Codex CLI) and
// mock-anthropic.ts (Claude Code). A script is a list of model turns. The turn a request gets is
// chosen from the conversation it carries (how many tool results it already holds), never from a
// request counter, so an agent's retries and side requests cannot shift the script.
import http from "node:http";
import type { AddressInfo } from "node:net";

/** Run one shell command through the agent's own shell tool (Codex exec_command, Claude Bash). */
export interface ShellTurn {
  kind: "shell";
  command: string;
}

/** Write one file through the agent's own file tool (Codex apply_patch, Claude Write). */
export interface WriteTurn {
  kind: "write";
  /** Relative to the agent's working directory. */
  path: string;
  content: string;
}

/**
 * Call a tool by the name the agent gives it, with this input: a tool of an MCP server the agent is
 * configured with (Claude Code names them `mcp__<server>__<tool>`). Only protocols with `tool` serve it.
 */
export interface ToolTurn {
  kind: "tool";
  name: string;
  input: Record<string, unknown>;
}

/** The final answer: an object is the structured output (JSON), a string plain text. */
export interface FinalTurn {
  kind: "final";
  answer: Record<string, unknown> | string;
}

/** An API error as the provider sends it: status, headers and the provider's own error body. */
export interface ErrorTurn {
  kind: "error";
  status: number;
  headers?: Record<string, string>;
  /** The JSON body; when absent the provider's usual body for the status is used. */
  body?: unknown;
}

/**
 * A model that never finishes: "no-response" accepts the request and sends nothing; "mid-stream"
 * sends the status, the headers and the first events, then stalls.
 */
export interface HangTurn {
  kind: "hang";
  mode: "no-response" | "mid-stream";
}

export type ModelTurn = (ShellTurn | WriteTurn | FinalTurn | ErrorTurn | HangTurn | ToolTurn) & {
  /** Served, in order, to the first requests at this point of the conversation before the turn itself. */
  errorsBefore?: ErrorTurn[];
};

export interface TokenUsage {
  input: number;
  cached: number;
  output: number;
  reasoning: number;
}

export const DEFAULT_USAGE: TokenUsage = { input: 1200, cached: 300, output: 80, reasoning: 16 };

/** One request the mock received; secret headers are replaced by "***". */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: unknown;
  /** The script position this request was answered from, or undefined for a side request. */
  position: number | undefined;
  /** What was sent back: the turn kind, "side" or "not-found". */
  answeredWith: string;
}

const SECRET_HEADERS = new Set(["authorization", "x-api-key", "cookie", "proxy-authorization"]);

export function redactHeaders(headers: http.IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out[name] = SECRET_HEADERS.has(name) ? "***" : Array.isArray(value) ? value.join(", ") : value;
  }
  return out;
}

/**
 * A fixed script, or one chosen per request from the conversation so far (the request body as JSON
 * text): a new agent process per iteration starts a new conversation, and the prompt says which node
 * it is about.
 */
export type ScriptSource = ModelTurn[] | ((conversation: string) => ModelTurn[]);

/** The cursor of each script a source hands out, so errorsBefore are served once per script and position. */
export class ScriptChooser {
  private readonly cursors = new Map<ModelTurn[], ScriptCursor>();

  constructor(private readonly source: ScriptSource) {}

  cursorFor(body: unknown): ScriptCursor {
    const script = typeof this.source === "function" ? this.source(JSON.stringify(body)) : this.source;
    let cursor = this.cursors.get(script);
    if (!cursor) this.cursors.set(script, (cursor = new ScriptCursor(script)));
    return cursor;
  }
}

/** Picks the turn for a script position; errorsBefore are served once each, per position. */
export class ScriptCursor {
  private readonly errorsServed = new Map<number, number>();

  constructor(private readonly script: readonly ModelTurn[]) {}

  turnAt(position: number): ModelTurn | ErrorTurn {
    const turn = this.script[position];
    if (!turn) {
      return { kind: "error", status: 500, body: { error: `mock script has no turn ${position} (it has ${this.script.length})` } };
    }
    const served = this.errorsServed.get(position) ?? 0;
    const before = turn.errorsBefore ?? [];
    if (served < before.length) {
      this.errorsServed.set(position, served + 1);
      return before[served]!;
    }
    return turn;
  }
}

export interface MockServerHandle {
  url: string;
  port: number;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

export type RequestHandler = (
  request: { method: string; path: string; headers: http.IncomingHttpHeaders; body: unknown },
  response: http.ServerResponse,
) => { position: number | undefined; answeredWith: string };

/** An HTTP server on 127.0.0.1 (random port) that records every request and hands it to `handle`. */
export async function startRecordingServer(handle: RequestHandler): Promise<MockServerHandle> {
  const requests: RecordedRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      let body: unknown = text;
      try {
        body = text === "" ? undefined : JSON.parse(text);
      } catch {
        // not JSON: keep the text
      }
      const path = (req.url ?? "/").split("?")[0]!;
      const entry: RecordedRequest = {
        method: req.method ?? "GET",
        path,
        headers: redactHeaders(req.headers),
        body,
        position: undefined,
        answeredWith: "",
      };
      requests.push(entry);
      try {
        Object.assign(entry, handle({ method: entry.method, path, headers: req.headers, body }, res));
      } catch (error) {
        entry.answeredWith = "mock-bug";
        if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: `mock server bug: ${error instanceof Error ? error.message : String(error)}` }));
      }
    });
  });
  // Never let a hung turn keep the test process alive.
  server.keepAliveTimeout = 1_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** One server-sent event. */
export function sseEvent(name: string, data: unknown): string {
  return `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
}

export function sendJson(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

export function startSse(res: http.ServerResponse, headers: Record<string, string> = {}): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive", ...headers });
}

/** What a protocol answers a model turn with. */
export interface TurnContext {
  res: http.ServerResponse;
  body: unknown;
  /** The script position the request is at. */
  position: number;
  /** The model the request names ("mock-model" when it names none). */
  model: string;
  /** 1 for the first request the server answers, 2 for the next, …: for unique response ids. */
  count: number;
  usage: TokenUsage;
}

/**
 * One provider's wire format (mock-openai.ts: the Responses API Codex speaks; mock-anthropic.ts: the
 * Messages API Claude Code speaks): which requests are model turns and how each scripted turn is
 * sent. The script, its positions, errors before a turn, recording and redaction are the shared
 * part (startScriptedModel). A new provider is one protocol.
 */
export interface ModelProtocol {
  /**
   * Answers a request that is no scripted model turn (a health check, a token count, a model list,
   * a side question, an unknown route) and says what was sent; undefined for a model turn.
   */
  side(
    request: { method: string; path: string; body: unknown },
    ctx: Omit<TurnContext, "position">,
  ): { position?: number; answeredWith: string } | undefined;
  /** The script position of a model request: how many tool results its conversation holds. */
  position(body: unknown): number;
  /** The provider's error response for the status (its own body unless the turn gives one). */
  error(res: http.ServerResponse, turn: ErrorTurn): void;
  /** A response that never finishes: the status, the headers and the first events, then nothing. */
  stall(ctx: TurnContext): void;
  /** One scripted turn: a shell command, a file write or the final answer, as the provider streams it. */
  turn(turn: ShellTurn | WriteTurn | FinalTurn, ctx: TurnContext): void;
  /** A call of a tool named in the script (an MCP server's), where the provider's mock serves one. */
  tool?(turn: ToolTurn, ctx: TurnContext): void;
}

export interface ScriptedModelOptions {
  script: ScriptSource;
  /** Token usage reported with every response (default DEFAULT_USAGE). */
  usage?: TokenUsage;
}

/** A scripted model server on 127.0.0.1 speaking `protocol`. */
export function startScriptedModel(protocol: ModelProtocol, options: ScriptedModelOptions): Promise<MockServerHandle> {
  const scripts = new ScriptChooser(options.script);
  const usage = options.usage ?? DEFAULT_USAGE;
  let count = 0;
  return startRecordingServer(({ method, path, body }, res) => {
    const model = String((body as { model?: unknown } | undefined)?.model ?? "mock-model");
    count += 1;
    const side = protocol.side({ method, path, body }, { res, body, model, count, usage });
    if (side) return { position: side.position, answeredWith: side.answeredWith };
    const position = protocol.position(body);
    const turn = scripts.cursorFor(body).turnAt(position);
    const ctx: TurnContext = { res, body, position, model, count, usage };
    if (turn.kind === "error") protocol.error(res, turn);
    else if (turn.kind === "hang") {
      if (turn.mode === "mid-stream") protocol.stall(ctx);
      // "no-response": nothing at all; the request stays open until the client gives up or the server closes.
    } else if (turn.kind === "tool") {
      if (!protocol.tool) throw new Error(`this provider's mock serves no tool turn (${turn.name})`);
      protocol.tool(turn, ctx);
    } else protocol.turn(turn, ctx);
    return { position, answeredWith: turn.kind };
  });
}
