// kind = "gemini": Google's Gemini CLI in headless mode, as Gemini CLI 0.61.0 takes it
// (docs/agents.md, docs/decisions.md):
//   gemini --output-format stream-json --skip-trust --approval-mode <mode>
//          --allowed-tools <guard rule> [--allowed-tools <rule> ...] [-e none] [-m <model>] [extra_args ...]
// The prompt goes on stdin (a piped stdin is headless mode). `--skip-trust`: in a folder the user
// has not trusted, Gemini drops every approval mode back to "default", in which headless mode offers
// neither the shell nor the file tools. `auto_edit` lets it edit files; the guard rule
// `run_shell_command(<guard command>)` lets it run the guard (and nothing else unless allowed_tools
// says so). Gemini has no output-schema flag: the runner takes the JSON object of its last message
// and writes it to output.json, else reads output.json as Gemini wrote it (the prompt asks for that
// file). The JSON-lines events go to executor.log and become the live lines; usage comes with the
// final `result` event.
import { EXECUTOR_KEYS } from "../core/config/executor-kinds.js";
import type { AgentClock, AgentLimit } from "../core/agent/agent-limits.js";
import { type AgentUsage, count } from "../core/agent/agent-usage.js";
import { oneLine } from "../core/base/text-limits.js";
import type { ExecutorConfig } from "../schemas/types.generated.js";
import {
  allowedRules,
  isolationOf,
  type AgentDefinition,
  type AgentSession,
  type Json,
  jsonAnswerIn,
  object,
  text,
  VERSION_OPTION,
  approvalModeFor,
  toolErrorLine,
} from "./agent.js";

const GEMINI_DEFAULT_APPROVAL_MODE = "auto_edit";
const GEMINI_APPROVAL_MODES = ["default", "auto_edit", "yolo", "plan"];

/** The rule that lets Gemini run the guard (a command prefix: `just ci` also allows `just ci --verbose`). */
export function geminiGuardRule(guardCommand: readonly string[]): string {
  return `run_shell_command(${guardCommand.join(" ")})`;
}

function geminiApprovalMode(config: ExecutorConfig): string {
  return approvalModeFor(config, "auto_edit", GEMINI_DEFAULT_APPROVAL_MODE);
}

export function geminiArgv(config: ExecutorConfig, guardCommand: readonly string[]): string[] {
  const argv = ["gemini", "--output-format", "stream-json", "--skip-trust", "--approval-mode", geminiApprovalMode(config)];
  const rules = allowedRules(config, guardCommand, geminiGuardRule);
  for (const rule of rules) argv.push("--allowed-tools", rule);
  if (isolationOf(config) === "clean") argv.push("-e", "none");
  if (config.model) argv.push("-m", config.model);
  argv.push(...(config.extra_args ?? []));
  return argv;
}

/** An approval mode Gemini CLI 0.61.0 does not know, said before it starts (it would exit 1 after printing its help). */
function geminiRefusal(argv: readonly string[]): string | undefined {
  const at = argv.indexOf("--approval-mode");
  const mode = at === -1 ? undefined : argv[at + 1];
  if (mode === undefined || GEMINI_APPROVAL_MODES.includes(mode)) return undefined;
  return `Gemini CLI has no approval mode "${mode}" (it knows ${GEMINI_APPROVAL_MODES.join(", ")}); change [executor] approval_mode in .runner/state/config.toml`;
}

/**
 * Gemini's `result.stats` (summed over every model of the session, the router's side requests
 * included): input_tokens are the prompt tokens, cached ones included; total_tokens also counts the
 * thinking tokens, which the stream names nowhere else.
 */
function geminiUsage(stats: unknown): AgentUsage | undefined {
  const raw = object(stats);
  if (!raw) return undefined;
  const input = count(raw.input_tokens) ?? 0;
  const output = count(raw.output_tokens) ?? 0;
  const total = count(raw.total_tokens);
  return {
    input_tokens: input,
    cached_input_tokens: count(raw.cached) ?? 0,
    output_tokens: output,
    reasoning_tokens: total !== undefined && total >= input + output ? total - input - output : null,
    cost_usd: null,
    gemini: { stats: raw },
  };
}

/** "Suggested retry after 2s." (a RetryInfo delay) or "Please retry in 12.3s" in Gemini's message: seconds. */
export function geminiRetryDelay(message: string): number | undefined {
  const match = /(?:Suggested retry after|Please retry in) ([\d.]+)(ms|s)\b/.exec(message);
  if (!match) return undefined;
  const value = Number(match[1]);
  if (!Number.isFinite(value)) return undefined;
  return match[2] === "ms" ? value / 1000 : value;
}

/** A quota that lasts (a day's, a plan's capacity): "You have exhausted your daily quota on this model." */
const GEMINI_USAGE = /exhausted your (?:daily quota|capacity)|daily quota|INSUFFICIENT_G1_CREDITS_BALANCE|quota exceeded for .*per ?day/i;
/** A rate limit: the API's 429 (RESOURCE_EXHAUSTED), and Gemini's own "Please wait and try again later." after one. */
const GEMINI_RATE = /\b429\b|RESOURCE_EXHAUSTED|exceeded your current quota|Please wait and try again later|rate limit/i;

/**
 * A limit in the message of Gemini's failed `result` (after its own retries gave up). The reset is
 * the retry delay the API named, counted from the event's timestamp; a daily quota names none.
 */
export function geminiLimit(message: string, timestamp: string | undefined, clock: AgentClock): AgentLimit | undefined {
  const usage = GEMINI_USAGE.test(message);
  if (!usage && !GEMINI_RATE.test(message)) return undefined;
  const delay = geminiRetryDelay(message);
  const at = timestamp === undefined ? undefined : clock.isoSeconds(timestamp);
  const resetsAt = delay !== undefined && at !== undefined ? clock.epochSeconds(at + delay) : undefined;
  return { kind: usage ? "usage" : "rate", ...(resetsAt ? { resetsAt } : {}), message: geminiWords(message) };
}

/**
 * "[API Error: <what the API said>]\n<advice>" (Gemini CLI and Qwen Code) as "<what the API said> <advice>".
 * The wrapper ends at the last "]" before a line break or the end: what it wraps may hold brackets (a JSON error's details).
 */
export function unwrapApiError(message: string): string {
  const match = /^\[API Error: ([\s\S]*)\](?=\n|$)/.exec(message.trim());
  return (match ? `${match[1]} ${message.trim().slice(match[0].length)}` : message).trim();
}

/**
 * Gemini's error message without its "[API Error: …]" wrapper, on one line; when what it wraps is
 * the API's own JSON error (a 401's), its message and status: "Request had invalid … (API status 401
 * UNAUTHENTICATED)".
 */
function geminiWords(message: string): string {
  const unwrapped = unwrapApiError(message);
  if (unwrapped.startsWith("{")) {
    try {
      const error = object(object(JSON.parse(unwrapped))?.error);
      const said = text(error?.message);
      const status = [error?.code, error?.status].filter((part) => typeof part === "number" || typeof part === "string").join(" ");
      if (said) return oneLine(`${said}${status ? ` (API status ${status})` : ""}`, 2000);
    } catch {
      // not JSON: the text as it is
    }
  }
  return oneLine(unwrapped, 2000);
}

/** One tool call of Gemini CLI or Qwen Code (the fork keeps the tool names), as a line. */
export function geminiToolLine(name: string, input: Json): string {
  switch (name) {
    case "run_shell_command":
      return `$ ${oneLine(text(input.command) ?? "")}`;
    case "write_file":
      return `✎ ${text(input.file_path) ?? "?"} (write)`;
    case "replace":
    case "edit":
      return `✎ ${text(input.file_path) ?? "?"} (edit)`;
    case "read_file":
      return `◦ read ${text(input.file_path) ?? text(input.absolute_path) ?? "?"}`;
    default:
      return `⚙ ${name}`;
  }
}

/** A failed tool call's line: a policy's denial, or the tool's own error. */
function toolResultLine(event: Json, names: Map<string, string>): string[] {
  if (event.status !== "error") return [];
  const error = object(event.error);
  const name = names.get(text(event.tool_id) ?? "") ?? "a tool";
  return [toolErrorLine(text(error?.message) ?? text(event.output), { name, denied: error?.type === "policy_violation" })];
}

// Events: init, message (user / assistant chunks), tool_use, tool_result, error, result.
function geminiEvents(clock: AgentClock) {
  /** The assistant's text since the last tool call: the answer, once the session ends. */
  let answer = "";
  const names = new Map<string, string>();

  /** The assistant's text so far as one line, when it said something. */
  const flush = (): string[] => (answer.trim() ? [`» ${oneLine(answer.trim())}`] : []);

  function result(event: Json, session: AgentSession): string[] {
    const lines = flush();
    session.result = { ...event, response: answer };
    session.usage = geminiUsage(event.stats) ?? session.usage;
    if (event.status === "success") return lines;
    const message = text(object(event.error)?.message) ?? "Gemini CLI reported an error";
    session.error = geminiWords(message);
    session.limit = geminiLimit(message, text(event.timestamp), clock) ?? session.limit;
    return [...lines, `✗ ${session.error}`];
  }

  return {
    event(event: Json, session: AgentSession): string[] {
      const sessionId = text(event.session_id);
      if (sessionId) session.sessionId = sessionId;
      switch (event.type) {
        case "init":
          return [`session ${text(event.model) ?? "?"}`];
        case "message":
          if (event.role === "assistant") answer += text(event.content) ?? "";
          return [];
        case "tool_use": {
          const lines = flush();
          answer = "";
          session.turns += 1;
          const name = text(event.tool_name) ?? "?";
          names.set(text(event.tool_id) ?? "", name);
          return [...lines, geminiToolLine(name, object(event.parameters) ?? {})];
        }
        case "tool_result":
          return toolResultLine(event, names);
        case "error": {
          const message = oneLine(text(event.message) ?? "error");
          session.lastErrorEvent = message;
          return [event.severity === "warning" ? `! ${message}` : `✗ ${message}`];
        }
        case "result":
          return result(event, session);
        default:
          return [];
      }
    },
  };
}

export const gemini: AgentDefinition = {
  kind: "gemini",
  title: "Gemini CLI",
  program: "gemini",
  package: "@google/gemini-cli",
  testedVersions: ["0.61.0"],
  install: "install Gemini CLI (`npm install -g @google/gemini-cli`)",
  // `gemini --version` prints "0.61.0".
  version: VERSION_OPTION,
  // GOOGLE_API_KEY is Vertex AI express mode's (docs/agents.md); a Google login needs none.
  authEnv: ["GEMINI_API_KEY", "GOOGLE_API_KEY"],
  configKeys: EXECUTOR_KEYS.gemini,
  template: `approval_mode = "auto_edit"      # auto_edit | default | yolo | plan (the runner always allows the guard command)
# model = "gemini-2.5-pro"       # unset: Gemini CLI's own choice (model "auto": routed per request)
# allowed_tools = ["run_shell_command(npm test)"]  # added to run_shell_command(<guard command>), which the runner always allows
# isolation = "clean"            # user (default): your settings and extensions; clean: no extensions (-e none)
# extra_args = []`,
  statusWord: "tool call",
  argv: ({ config, guardCommand }) => geminiArgv(config, guardCommand),
  refusal: (argv) => geminiRefusal(argv),
  answer: { kind: "event", from: (session) => jsonAnswerIn(text(session.result?.response) ?? "") },
  events: geminiEvents,
};
