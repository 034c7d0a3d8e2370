// The event streams of Codex (`codex exec --json`) and Claude Code (`--output-format stream-json`),
// read as they arrive: what a person watching wants to see (the commands the agent runs, the files
// it edits, its messages, its turns and tokens so far), and the facts the runner records (session
// id, usage and cost, the agent's own error, a rate or usage limit, Claude's final result). Event
// shapes: docs/agents.md. Pure: the executors feed it stdout chunks and show what it returns.
import { claudeLimit, codexLimit, type AgentClock, type AgentLimit } from "./agent-limits.js";
import { anthropicTotals, claudeUsage, codexUsage, shortCount, formatCost, type AgentUsage } from "./agent-usage.js";
import { oneLine } from "./text-limits.js";

export type AgentName = "codex" | "claude";

type Json = Record<string, unknown>;

/** What the stream said, so far. */
export interface AgentSession {
  agent: AgentName;
  /** Codex `thread.started.thread_id`, Claude `session_id`. */
  sessionId?: string;
  /** Model responses so far (Claude: distinct assistant messages; Codex: completed items, as it reports no responses). */
  turns: number;
  /** Final usage (Codex turn.completed, Claude result), else the sum of what arrived so far. */
  usage?: AgentUsage;
  /** The agent's own failure: Codex `turn.failed.error.message`; Claude's result with `is_error`. */
  error?: string;
  /** The last `error` event or error item (Codex reports reconnects this way, before a turn fails). */
  lastErrorEvent?: string;
  limit?: AgentLimit;
  /** Claude's final `result` event. */
  result?: Json;
}

/** Live lines whose text starts with this are the status (turns, tokens), not activity. */
export const STATUS_PREFIX = "\u0001status ";

const MAX_LINE = 16 * 1024 * 1024;

const object = (value: unknown): Json | undefined =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Json) : undefined;
const text = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);

/** `/bin/bash -c 'just ci'` → `just ci` (Codex shows the shell wrapper it ran). */
export function unwrapShell(command: string): string {
  const match = /^(?:\/(?:usr\/)?bin\/)?(?:ba|z)?sh -l?c (['"])([\s\S]*)\1$/.exec(command.trim());
  if (!match) return command;
  return match[1] === "'" ? match[2]!.replace(/'\\''/g, "'") : match[2]!;
}

/** Reads one agent's JSON-lines stream; `push` returns the lines to show for the chunk. */
export class AgentEventReader {
  readonly session: AgentSession;
  private partial = "";
  private readonly messages = new Set<string>();
  private rejected: Json | undefined;
  private statusShown = "";

  constructor(
    agent: AgentName,
    /** Turns the reset times agents state into instants. */
    private readonly clock: AgentClock,
  ) {
    this.session = { agent, turns: 0 };
  }

  push(chunk: string): string[] {
    const lines = (this.partial + chunk).split("\n");
    this.partial = lines.pop() ?? "";
    // A line longer than any event is not one; drop it rather than hold it.
    if (this.partial.length > MAX_LINE) this.partial = "";
    return this.withStatus(lines.flatMap((line) => this.line(line)));
  }

  end(): string[] {
    const rest = this.partial;
    this.partial = "";
    return this.withStatus(this.line(rest));
  }

  /** `turn 3 · 3.6k in (900 cached) · 240 out · $0.0105` */
  status(): string {
    const { usage, turns, agent } = this.session;
    const parts = [`${agent === "codex" ? "step" : "turn"} ${turns}`];
    if (usage) {
      parts.push(
        `${shortCount(usage.input_tokens)} tokens in${usage.cached_input_tokens > 0 ? ` (${shortCount(usage.cached_input_tokens)} cached)` : ""}`,
      );
      parts.push(`${shortCount(usage.output_tokens)} out`);
      if (usage.cost_usd !== null) parts.push(formatCost(usage.cost_usd));
    }
    return parts.join(" · ");
  }

  private withStatus(lines: string[]): string[] {
    const status = this.status();
    if (status === this.statusShown) return lines;
    this.statusShown = status;
    return [...lines, `${STATUS_PREFIX}${status}`];
  }

  private line(raw: string): string[] {
    const trimmed = raw.trim();
    if (!trimmed.startsWith("{")) return [];
    let event: Json | undefined;
    try {
      event = object(JSON.parse(trimmed));
    } catch {
      return [];
    }
    if (!event) return [];
    return this.session.agent === "codex" ? this.codex(event) : this.claude(event);
  }

  // Codex: thread.started, turn.started/completed/failed, item.started/updated/completed, error.
  private codex(event: Json): string[] {
    switch (event.type) {
      case "thread.started":
        this.session.sessionId = text(event.thread_id) ?? this.session.sessionId;
        return [];
      case "turn.completed":
        this.session.usage = codexUsage(event.usage, this.session.sessionId ? { thread_id: this.session.sessionId } : {}) ?? this.session.usage;
        return [];
      case "turn.failed": {
        const message = text(object(event.error)?.message) ?? this.session.lastErrorEvent ?? "the turn failed";
        this.codexFailure(message);
        return [`✗ ${oneLine(message)}`];
      }
      case "error": {
        // Also a reconnect after a transient failure: a limit is taken only from the turn's failure.
        const message = text(event.message) ?? "";
        this.session.lastErrorEvent = message;
        return message ? [`! ${oneLine(message)}`] : [];
      }
      case "item.started":
      case "item.completed":
        return this.codexItem(object(event.item) ?? {}, event.type === "item.completed");
      default:
        return [];
    }
  }

  private codexFailure(message: string): void {
    this.session.error = message;
    const limit = codexLimit(message, this.clock);
    if (limit) this.session.limit = limit;
  }

  private codexItem(item: Json, completed: boolean): string[] {
    if (completed) this.session.turns += 1;
    switch (item.type) {
      case "command_execution": {
        const command = oneLine(unwrapShell(text(item.command) ?? ""));
        if (!completed) return [`$ ${command}`];
        const exit = item.exit_code;
        return [typeof exit === "number" && exit !== 0 ? `✗ ${command} (exit ${exit})` : `✓ ${command}`];
      }
      case "file_change": {
        if (!completed) return [];
        const changes = Array.isArray(item.changes) ? (item.changes as unknown[]).map(object) : [];
        return changes.map((change) => `✎ ${text(change?.path) ?? "?"}${text(change?.kind) ? ` (${text(change?.kind)})` : ""}`);
      }
      case "agent_message":
        return completed && text(item.text) ? [`» ${oneLine(text(item.text)!)}`] : [];
      case "reasoning":
        return completed && text(item.text) ? [`… ${oneLine(text(item.text)!.replace(/\*\*/g, ""))}`] : [];
      case "mcp_tool_call":
        return completed ? [`⚙ ${text(item.server) ?? "mcp"}.${text(item.tool) ?? "?"}`] : [];
      case "web_search":
        return completed ? [`⌕ ${oneLine(text(item.query) ?? "")}`] : [];
      case "error": {
        if (!completed || !text(item.message)) return [];
        this.session.lastErrorEvent = text(item.message);
        return [`! ${oneLine(text(item.message)!)}`];
      }
      default:
        return [];
    }
  }

  // Claude: system/init, assistant, user (tool results), system/api_retry, system/permission_denied,
  // rate_limit_event, result.
  private claude(event: Json): string[] {
    const sessionId = text(event.session_id);
    if (sessionId) this.session.sessionId = sessionId;
    switch (event.type) {
      case "system":
        return this.claudeSystem(event);
      case "assistant":
        return this.claudeAssistant(object(event.message) ?? {});
      case "user":
        return this.claudeToolResults(object(event.message) ?? {});
      case "rate_limit_event": {
        const info = object(event.rate_limit_info);
        if (info?.status === "rejected") this.rejected = info;
        return info?.status === "rejected" ? [`! rate limit reached (${text(info.rateLimitType) ?? "?"})`] : [];
      }
      case "result":
        return this.claudeResult(event);
      default:
        return [];
    }
  }

  private claudeSystem(event: Json): string[] {
    switch (event.subtype) {
      case "init":
        return [`session ${text(event.model) ?? "?"} · ${text(event.permissionMode) ?? "?"}`];
      case "api_retry":
        return [
          `↻ retry ${String(event.attempt ?? "?")}/${String(event.max_retries ?? "?")} after ${String(event.error_status ?? event.error ?? "an error")}`,
        ];
      case "permission_denied":
        return [`⛔ ${oneLine(text(event.message) ?? `${text(event.tool_name) ?? "a tool"} denied`)}`];
      default:
        return [];
    }
  }

  private claudeAssistant(message: Json): string[] {
    const id = text(message.id);
    // Claude prints one assistant event per content block; the usage of a response comes with each.
    if (id && !this.messages.has(id) && message.model !== "<synthetic>") {
      this.messages.add(id);
      this.session.turns += 1;
      const totals = anthropicTotals(message.usage);
      if (totals && !this.session.result) {
        const sum = this.session.usage;
        this.session.usage = {
          input_tokens: (sum?.input_tokens ?? 0) + totals.input_tokens,
          cached_input_tokens: (sum?.cached_input_tokens ?? 0) + totals.cached_input_tokens,
          output_tokens: (sum?.output_tokens ?? 0) + totals.output_tokens,
          reasoning_tokens: null,
          cost_usd: null,
        };
      }
    }
    const blocks = Array.isArray(message.content) ? (message.content as unknown[]).map(object) : [];
    return blocks.flatMap((block) => (block ? claudeBlock(block) : []));
  }

  private claudeToolResults(message: Json): string[] {
    const blocks = Array.isArray(message.content) ? (message.content as unknown[]).map(object) : [];
    return blocks.flatMap((block) => {
      if (block?.type !== "tool_result" || block.is_error !== true) return [];
      const content =
        text(block.content) ??
        (Array.isArray(block.content) ? (block.content as unknown[]).map((part) => text(object(part)?.text) ?? "").join(" ") : "");
      return [`✗ ${oneLine(content) || "tool error"}`];
    });
  }

  private claudeResult(event: Json): string[] {
    this.session.result = event;
    this.session.usage = claudeUsage(event) ?? this.session.usage;
    if (typeof event.num_turns === "number") this.session.turns = event.num_turns;
    this.session.limit = claudeLimit(event, this.rejected, this.clock) ?? this.session.limit;
    if (event.is_error !== true) return [];
    this.session.error = claudeError(event);
    return [`✗ ${oneLine(this.session.error)}`];
  }
}

/** One content block of a Claude response, as a line. */
function claudeBlock(block: Json): string[] {
  if (block.type === "text" && text(block.text)?.trim()) return [`» ${oneLine(text(block.text)!)}`];
  if (block.type !== "tool_use") return [];
  const input = object(block.input) ?? {};
  const name = text(block.name) ?? "?";
  switch (name) {
    case "Bash":
      return [`$ ${oneLine(text(input.command) ?? "")}`];
    case "Write":
    case "Edit":
    case "MultiEdit":
    case "NotebookEdit":
      return [`✎ ${text(input.file_path) ?? text(input.notebook_path) ?? "?"} (${name.toLowerCase()})`];
    case "Read":
      return [`◦ read ${text(input.file_path) ?? "?"}`];
    case "StructuredOutput":
      return [`» answer: ${text(input.status) ?? "?"}${text(input.summary) ? ` — ${oneLine(text(input.summary)!, 200)}` : ""}`];
    default:
      return [`⚙ ${name}`];
  }
}

/** Claude's failure in its own words: the result text, else its `errors` list, else the subtype (error_max_turns, …), with the API status. */
export function claudeError(result: Json): string {
  const errors = Array.isArray(result.errors) ? (result.errors as unknown[]).filter((e): e is string => typeof e === "string") : [];
  const words = (text(result.result)?.trim() || errors.join("; ") || text(result.subtype) || "error").trim();
  const status = typeof result.api_error_status === "number" ? result.api_error_status : undefined;
  return status !== undefined && !words.includes(String(status)) ? `${words} (API status ${status})` : words;
}
