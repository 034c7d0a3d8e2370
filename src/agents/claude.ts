// kind = "claude": Claude Code in print mode (`claude -p`), as Claude Code 2.1.330 takes it
// (docs/agents.md, docs/decisions.md):
//   claude -p --output-format stream-json --verbose --json-schema '<agent output schema>'
//          --permission-mode <mode> --allowedTools <guard rule> [<tool> ...]
//          [--setting-sources project --strict-mcp-config --no-session-persistence]
//          [--max-turns N] [--max-budget-usd X] [--model M] [extra_args ...]
// The schema is schemas/agent_output/v1.agent.json (Claude refuses `$schema`/`$id`). The guard rule
// is `Bash(<guard command>:*)`: in print mode acceptEdits lets Claude edit files but denies every
// command no rule allows, and the agent must be able to run the guard itself. The isolation flags
// (and CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1) come with isolation = "clean". The prompt goes on
// stdin. Claude streams one JSON event per line (kept in executor.log, shown as live lines); the
// last event, `{"type":"result", ...}`, carries `structured_output`, which the runner writes to
// output.json.
import { EXECUTOR_KEYS } from "../core/config/executor-kinds.js";
import type { AgentClock, AgentLimit, LimitKind } from "../core/agent/agent-limits.js";
import { count, type AgentUsage, type UsageTotals } from "../core/agent/agent-usage.js";
import { oneLine } from "../core/base/text-limits.js";
import type { ExecutorConfig } from "../schemas/types.generated.js";
import {
  addResponseUsage,
  allowedRules,
  answerLine,
  isolationOf,
  resultAnswer,
  object,
  objects,
  text,
  type AgentDefinition,
  type AgentSession,
  type Json,
  VERSION_OPTION,
  toolErrorLine,
} from "./agent.js";

const CLAUDE_DEFAULT_PERMISSION_MODE = "acceptEdits";

/** The permission rule that lets Claude run the guard (and any longer command starting with it). */
function guardRule(guardCommand: readonly string[]): string {
  return `Bash(${guardCommand.join(" ")}:*)`;
}

export function claudeArgv(config: ExecutorConfig, guardCommand: readonly string[], schemaText: string): string[] {
  const argv = ["claude", "-p", "--output-format", "stream-json", "--verbose", "--json-schema", schemaText];
  argv.push("--permission-mode", config.permission_mode ?? CLAUDE_DEFAULT_PERMISSION_MODE);
  const rules = allowedRules(config, guardCommand, guardRule);
  if (rules.length > 0) argv.push("--allowedTools", ...rules);
  if (isolationOf(config) === "clean") argv.push("--setting-sources", "project", "--strict-mcp-config", "--no-session-persistence");
  if (config.max_turns !== undefined) argv.push("--max-turns", String(config.max_turns));
  if (config.max_budget_usd !== undefined) argv.push("--max-budget-usd", String(config.max_budget_usd));
  if (config.model) argv.push("--model", config.model);
  argv.push(...(config.extra_args ?? []));
  return argv;
}

/**
 * Claude Code refuses to skip permissions as root unless IS_SANDBOX=1 (its bundle:
 * `getuid() === 0 && IS_SANDBOX !== "1"`, unless CLAUDE_CODE_BUBBLEWRAP is set): say so before
 * starting it, rather than let it fail with "cannot be used with root/sudo privileges".
 */
function rootRefusal(argv: readonly string[], env: Readonly<Record<string, string>>, uid: number | undefined): string | undefined {
  const mode = argv.lastIndexOf("--permission-mode");
  const bypass = (mode !== -1 && argv[mode + 1] === "bypassPermissions") || argv.includes("--dangerously-skip-permissions");
  if (!bypass || uid !== 0 || env.IS_SANDBOX === "1" || env.CLAUDE_CODE_BUBBLEWRAP) return undefined;
  return 'Claude Code refuses permission_mode = "bypassPermissions" when run as root unless IS_SANDBOX=1 is set (meaning the machine is a sandbox); set IS_SANDBOX=1 in the runner\'s environment or choose another permission_mode';
}

/** The agent output carried by Claude's result event, as the text of output.json. */
function outputFromResult(result: Json | undefined): string | undefined {
  return result ? resultAnswer(result.structured_output, result.result) : undefined;
}

/** Anthropic `usage` (a result's, or one API response's): input = uncached + cache reads + cache writes. */
function anthropicTotals(usage: unknown): Omit<UsageTotals, "cost_usd"> | undefined {
  const raw = object(usage);
  if (!raw) return undefined;
  const cached = count(raw.cache_read_input_tokens) ?? 0;
  return {
    input_tokens: (count(raw.input_tokens) ?? 0) + cached + (count(raw.cache_creation_input_tokens) ?? 0),
    cached_input_tokens: cached,
    output_tokens: count(raw.output_tokens) ?? 0,
    reasoning_tokens: null,
  };
}

/** Claude's `result` event: usage, cost and the session's own figures. */
export function claudeUsage(result: Json): AgentUsage | undefined {
  const totals = anthropicTotals(result.usage);
  const cost = count(result.total_cost_usd);
  if (!totals && cost === undefined) return undefined;
  const claude: Json = { usage: result.usage ?? null };
  for (const [from, to] of [
    ["session_id", "session_id"],
    ["num_turns", "num_turns"],
    ["duration_ms", "duration_ms"],
    ["duration_api_ms", "duration_api_ms"],
    ["modelUsage", "model_usage"],
    ["permission_denials", "permission_denials"],
  ] as const) {
    if (result[from] !== undefined) claude[to] = result[from];
  }
  return { ...(totals ?? { input_tokens: 0, cached_input_tokens: 0, output_tokens: 0, reasoning_tokens: null }), cost_usd: cost ?? null, claude };
}

/** A subscription's or a spend limit ("You've hit your session limit · resets 3pm", "Usage limit reached", "spend limit reached"). */
const CLAUDE_USAGE = /hit your|usage limit|spend limit|out of (?:usage )?credits|credit balance (?:is )?too low/i;

/**
 * A limit that ended Claude's run: its result has `is_error`, and `api_error_status` 429, a
 * usage-limit text, or a `rate_limit_event` with status "rejected" came before it (epoch seconds in
 * `resetsAt`). A run that succeeded anyway met no limit worth waiting for.
 */
export function claudeLimit(result: Json | undefined, rejected: Json | undefined, clock: AgentClock): AgentLimit | undefined {
  const said = typeof result?.result === "string" ? result.result : "";
  const status = result?.api_error_status;
  const resetSeconds = typeof rejected?.resetsAt === "number" && Number.isFinite(rejected.resetsAt) ? rejected.resetsAt : undefined;
  const resetsAt = resetSeconds !== undefined ? clock.epochSeconds(resetSeconds) : undefined;
  const failed = result?.is_error === true;
  if (!failed || !(rejected || status === 429 || CLAUDE_USAGE.test(said))) return undefined;
  const kind: LimitKind = rejected || CLAUDE_USAGE.test(said) ? "usage" : "rate";
  const message =
    said || `the model API refused the request (${typeof rejected?.rateLimitType === "string" ? rejected.rateLimitType : "rate limit"})`;
  return { kind, ...(resetsAt ? { resetsAt } : {}), message };
}

/** Claude's failure in its own words: the result text, else its `errors` list, else the subtype (error_max_turns, …), with the API status. */
export function claudeError(result: Json): string {
  const errors = Array.isArray(result.errors) ? (result.errors as unknown[]).filter((e): e is string => typeof e === "string") : [];
  const words = (text(result.result)?.trim() || errors.join("; ") || text(result.subtype) || "error").trim();
  const status = typeof result.api_error_status === "number" ? result.api_error_status : undefined;
  return status !== undefined && !words.includes(String(status)) ? `${words} (API status ${status})` : words;
}

// Events: system/init, assistant, user (tool results), system/api_retry, system/permission_denied,
// rate_limit_event, result.
function claudeEvents(clock: AgentClock) {
  /** Claude prints one assistant event per content block; a response is counted once. */
  const messages = new Set<string>();
  let rejected: Json | undefined;

  function assistant(message: Json, session: AgentSession): string[] {
    const id = text(message.id);
    // The usage of a response comes with each of its blocks.
    if (id && !messages.has(id) && message.model !== "<synthetic>") {
      messages.add(id);
      session.turns += 1;
      const totals = anthropicTotals(message.usage);
      if (totals && !session.result) addResponseUsage(session, totals);
    }
    return objects(message.content).flatMap((block) => (block ? claudeBlock(block) : []));
  }

  function result(event: Json, session: AgentSession): string[] {
    session.result = event;
    session.usage = claudeUsage(event) ?? session.usage;
    if (typeof event.num_turns === "number") session.turns = event.num_turns;
    session.limit = claudeLimit(event, rejected, clock) ?? session.limit;
    if (event.is_error !== true) return [];
    session.error = claudeError(event);
    return [`✗ ${oneLine(session.error)}`];
  }

  return {
    event(event: Json, session: AgentSession): string[] {
      const sessionId = text(event.session_id);
      if (sessionId) session.sessionId = sessionId;
      switch (event.type) {
        case "system":
          return claudeSystem(event);
        case "assistant":
          return assistant(object(event.message) ?? {}, session);
        case "user":
          return claudeToolErrors(object(event.message) ?? {});
        case "rate_limit_event": {
          const info = object(event.rate_limit_info);
          if (info?.status !== "rejected") return [];
          rejected = info;
          return [`! rate limit reached (${text(info.rateLimitType) ?? "?"})`];
        }
        case "result":
          return result(event, session);
        default:
          return [];
      }
    },
  };
}

function claudeSystem(event: Json): string[] {
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

function claudeToolErrors(message: Json): string[] {
  return objects(message.content).flatMap((block) => {
    if (block?.type !== "tool_result" || block.is_error !== true) return [];
    const content =
      text(block.content) ??
      objects(block.content)
        .map((part) => text(part?.text) ?? "")
        .join(" ");
    return [toolErrorLine(content)];
  });
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
      return [answerLine(input)];
    default:
      return [`⚙ ${name}`];
  }
}

export const claude: AgentDefinition = {
  kind: "claude",
  title: "Claude Code",
  program: "claude",
  package: "@anthropic-ai/claude-code",
  testedVersions: ["2.1.330"],
  install: "install Claude Code (`npm install -g @anthropic-ai/claude-code`)",
  // `claude --version` prints "2.1.330 (Claude Code)".
  version: VERSION_OPTION,
  authEnv: ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"],
  configKeys: EXECUTOR_KEYS.claude,
  template: `permission_mode = "acceptEdits"  # acceptEdits | manual | default | dontAsk | plan | auto | bypassPermissions (as root: needs IS_SANDBOX=1)
# model = "sonnet"               # unset: Claude Code's default model
# allowed_tools = ["Bash(npm test:*)"]  # added to Bash(<guard command>:*), which the runner always allows
# max_turns = 100
# max_budget_usd = 5.0
# isolation = "clean"            # user (default): your settings, MCP servers and saved sessions; clean: project settings only
# extra_args = []`,
  statusWord: "turn",
  argv: ({ config, guardCommand, schemaText }) => claudeArgv(config, guardCommand, schemaText),
  env: (_config, isolation): Record<string, string> => (isolation === "clean" ? { CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1" } : {}),
  refusal: rootRefusal,
  answer: { kind: "event", from: (session) => outputFromResult(session.result) },
  events: claudeEvents,
  // What is left of the run's cost budget is Claude's own cap for the session (--max-budget-usd), in whole cents, at least one.
  capCost: (config, usd) => ({ ...config, max_budget_usd: Math.min(config.max_budget_usd ?? Infinity, Math.max(0.01, Math.floor(usd * 100) / 100)) }),
};
