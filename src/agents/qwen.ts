// kind = "qwen": Qwen Code (a fork of Gemini CLI that speaks OpenAI-compatible APIs) in headless
// mode, as Qwen Code 0.24.4 takes it (docs/agents.md, docs/decisions.md):
//   qwen --output-format stream-json --json-schema '<agent output schema>' --approval-mode <mode>
//        --allowed-tools <guard rule> [--allowed-tools <rule> ...] [--chat-recording false -e none]
//        [--max-session-turns N] [-m <model>] [extra_args ...]
// The prompt goes on stdin. `auto-edit` lets it edit files; the guard rule
// `run_shell_command(<guard command>)` (Gemini CLI's spelling, kept by the fork) lets it run the
// guard and nothing else unless allowed_tools says so. `--json-schema` registers a
// `structured_output` tool; the final `result` event carries the answer as `structured_result`,
// which the runner writes to output.json. Its stream-json events follow Claude Code's shapes
// (system/init, assistant, user, result) with Gemini CLI's tool names; usage comes with each
// assistant message and, summed, with the result.
import { EXECUTOR_KEYS } from "../core/config/executor-kinds.js";
import type { AgentClock, AgentLimit } from "../core/agent/agent-limits.js";
import { type AgentUsage, count } from "../core/agent/agent-usage.js";
import { oneLine } from "../core/base/text-limits.js";
import type { ExecutorConfig } from "../schemas/types.generated.js";
import {
  addResponseUsage,
  allowedRules,
  answerLine,
  isolationOf,
  type AgentDefinition,
  type AgentSession,
  type Json,
  resultAnswer,
  object,
  objects,
  text,
  VERSION_OPTION,
  approvalModeFor,
  toolErrorLine,
} from "./agent.js";
import { geminiGuardRule, geminiToolLine, unwrapApiError } from "./gemini.js";

const QWEN_DEFAULT_APPROVAL_MODE = "auto-edit";

function qwenApprovalMode(config: ExecutorConfig): string {
  return approvalModeFor(config, "auto-edit", QWEN_DEFAULT_APPROVAL_MODE);
}

export function qwenArgv(config: ExecutorConfig, guardCommand: readonly string[], schemaText: string): string[] {
  const argv = ["qwen", "--output-format", "stream-json", "--json-schema", schemaText, "--approval-mode", qwenApprovalMode(config)];
  const rules = allowedRules(config, guardCommand, geminiGuardRule);
  for (const rule of rules) argv.push("--allowed-tools", rule);
  if (isolationOf(config) === "clean") argv.push("--chat-recording", "false", "-e", "none");
  if (config.max_turns !== undefined) argv.push("--max-session-turns", String(config.max_turns));
  if (config.model) argv.push("-m", config.model);
  argv.push(...(config.extra_args ?? []));
  return argv;
}

/** Qwen's usage (an assistant message's, or the result's sum): input_tokens already include the cached ones. */
function qwenUsage(usage: unknown, extra?: Json): AgentUsage | undefined {
  const raw = object(usage);
  if (!raw) return undefined;
  return {
    input_tokens: count(raw.input_tokens) ?? 0,
    cached_input_tokens: count(raw.cache_read_input_tokens) ?? 0,
    output_tokens: count(raw.output_tokens) ?? 0,
    reasoning_tokens: null,
    cost_usd: null,
    qwen: { usage: raw, ...extra },
  };
}

/** A quota that lasts ("insufficient_quota", "exceeded your current quota", a plan's or a day's limit). */
const QWEN_USAGE = /insufficient_quota|exceeded your current quota|quota exceeded|free (?:tier|allocated) quota|daily (?:limit|quota)/i;
/** A rate limit in Qwen's words: "[API Error: 429 …]\nPossible quota limitations in place or slow response times detected." */
const QWEN_RATE = /API Error: 429\b|\b429 |rate limit|Possible quota limitations in place|Throttling/i;

/** A limit in the message of Qwen's failed result (after its own retries gave up); Qwen states no reset time. */
export function qwenLimit(message: string): AgentLimit | undefined {
  if (QWEN_USAGE.test(message)) return { kind: "usage", message: qwenWords(message) };
  if (QWEN_RATE.test(message)) return { kind: "rate", message: qwenWords(message) };
  return undefined;
}

/** Qwen's error message without its "[API Error: …]" wrapper, on one line. */
function qwenWords(message: string): string {
  return oneLine(unwrapApiError(message), 2000);
}

/** The answer: `structured_result` (with --json-schema), else the JSON object of the final text. */
function qwenAnswer(result: Json | undefined): string | undefined {
  return result ? resultAnswer(result.structured_result, result.result) : undefined;
}

// Events: system/init, assistant, user (tool results), stream_event, result.
function qwenEvents(_clock: AgentClock) {
  const messages = new Set<string>();
  const names = new Map<string, string>();

  function assistant(message: Json, session: AgentSession): string[] {
    const id = text(message.id);
    if (id && !messages.has(id)) {
      messages.add(id);
      session.turns += 1;
      const usage = qwenUsage(message.usage);
      if (usage && !session.result && usage.input_tokens + usage.output_tokens > 0) addResponseUsage(session, usage);
    }
    return objects(message.content).flatMap((block) => {
      if (block?.type === "text" && text(block.text)?.trim()) return [`» ${oneLine(text(block.text)!)}`];
      if (block?.type !== "tool_use") return [];
      const name = text(block.name) ?? "?";
      names.set(text(block.id) ?? "", name);
      const input = object(block.input) ?? {};
      return [name === "structured_output" ? answerLine(input) : geminiToolLine(name, input)];
    });
  }

  function toolErrors(message: Json): string[] {
    return objects(message.content).flatMap((block) => {
      if (block?.type !== "tool_result" || block.is_error !== true) return [];
      const name = names.get(text(block.tool_use_id) ?? "") ?? "a tool";
      const said = text(block.content);
      return [toolErrorLine(said, { name, denied: /requires permission|declined/.test(said ?? "") })];
    });
  }

  function result(event: Json, session: AgentSession): string[] {
    session.result = event;
    if (typeof event.num_turns === "number") session.turns = event.num_turns;
    const usage = qwenUsage(event.usage, {
      ...(event.num_turns !== undefined ? { num_turns: event.num_turns } : {}),
      ...(event.duration_ms !== undefined ? { duration_ms: event.duration_ms } : {}),
      ...(event.duration_api_ms !== undefined ? { duration_api_ms: event.duration_api_ms } : {}),
      ...(event.permission_denials !== undefined ? { permission_denials: event.permission_denials } : {}),
    });
    if (usage && usage.input_tokens + usage.output_tokens > 0) session.usage = usage;
    if (event.is_error !== true) return [];
    const message = text(object(event.error)?.message) ?? text(event.result) ?? text(event.subtype) ?? "Qwen Code reported an error";
    session.error = qwenWords(message);
    session.limit = qwenLimit(message) ?? session.limit;
    return [`✗ ${session.error}`];
  }

  return {
    event(event: Json, session: AgentSession): string[] {
      const sessionId = text(event.session_id);
      if (sessionId) session.sessionId = sessionId;
      switch (event.type) {
        case "system":
          return event.subtype === "init" ? [`session ${text(event.model) ?? "?"} · ${text(event.permission_mode) ?? "?"}`] : [];
        case "assistant":
          // Qwen shows an API error as an assistant text too; the result says it once.
          if (text(objects(object(event.message)?.content)[0]?.text)?.startsWith("[API Error:")) return [];
          return assistant(object(event.message) ?? {}, session);
        case "user":
          return toolErrors(object(event.message) ?? {});
        case "result":
          return result(event, session);
        default:
          return [];
      }
    },
  };
}

export const qwen: AgentDefinition = {
  kind: "qwen",
  title: "Qwen Code",
  program: "qwen",
  package: "@qwen-code/qwen-code",
  testedVersions: ["0.24.4"],
  install: "install Qwen Code (`npm install -g @qwen-code/qwen-code`)",
  // `qwen --version` prints "0.24.4".
  version: VERSION_OPTION,
  // Per auth type (--auth-type openai, the default with OPENAI_API_KEY; anthropic; gemini); DASHSCOPE_API_KEY for Alibaba Cloud (bundle).
  authEnv: ["OPENAI_API_KEY", "DASHSCOPE_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"],
  configKeys: EXECUTOR_KEYS.qwen,
  template: `approval_mode = "auto-edit"      # auto-edit | default | auto | yolo | plan (the runner always allows the guard command)
# model = "qwen3-coder-plus"     # unset: Qwen Code's own (OPENAI_MODEL or its settings)
# allowed_tools = ["run_shell_command(npm test)"]  # added to run_shell_command(<guard command>), which the runner always allows
# max_turns = 100                # --max-session-turns
# isolation = "clean"            # user (default): your settings, extensions and saved chats; clean: no extensions, no chat recording
# extra_args = []`,
  statusWord: "turn",
  argv: ({ config, guardCommand, schemaText }) => qwenArgv(config, guardCommand, schemaText),
  answer: { kind: "event", from: (session) => qwenAnswer(session.result) },
  events: qwenEvents,
};
