// kind = "copilot": GitHub Copilot CLI in prompt mode, as Copilot CLI 1.0.102 (npm `@github/copilot`)
// takes it (docs/agents.md, docs/decisions.md):
//   copilot --output-format json --no-auto-update --allow-tool write --allow-tool <guard rules> [--allow-tool <rule> ...]
//           --usage-output-file <iteration>/agent-usage.json [--disable-builtin-mcps] [--model <model>] [extra_args ...]
// The prompt goes on stdin (a piped stdin is prompt mode, like -p). `--no-auto-update`: the session
// runs the version the user installed (the one `runner doctor` reports), not a newer one Copilot
// downloaded by itself. Copilot asks before every write and most commands, and prompt mode denies
// what it would ask ("Permission denied because no interactive user response was available"):
// `--allow-tool write` lets it edit files; the guard rules let it run the guard — Copilot matches a
// shell rule against the command's name (for some programs, npm among them, its name and first
// subcommand), so the runner passes `shell(<guard command>)` and `shell(<guard program>)`. Copilot
// has no output-schema mode: the prompt asks for the answer in RUNNER_OUTPUT_FILE, which the agent
// writes with its own file tool. Its JSON-lines stream carries no token counts: they come from the
// usage report it writes when it ends (--usage-output-file), which the runner reads after the session.
import { EXECUTOR_KEYS } from "../core/config/executor-kinds.js";
import type { AgentClock, AgentLimit, LimitKind } from "../core/agent/agent-limits.js";
import { type AgentUsage, count } from "../core/agent/agent-usage.js";
import { oneLine } from "../core/base/text-limits.js";
import type { ExecutorConfig } from "../schemas/types.generated.js";
import { isolationOf, type AgentDefinition, type AgentSession, type Json, object, text, VERSION_OPTION } from "./agent.js";

/**
 * The rules that let Copilot run the guard: `shell(just ci)` alone does not allow `just ci` (Copilot
 * matches `just` by its name: `shell(just)`), while `shell(npm)` does not allow `npm test` (npm is
 * matched with its subcommand: `shell(npm test)`).
 */
export function copilotGuardRules(guardCommand: readonly string[]): string[] {
  if (guardCommand.length === 0) return [];
  return [...new Set([`shell(${guardCommand.join(" ")})`, `shell(${guardCommand[0]})`])];
}

export function copilotArgv(config: ExecutorConfig, guardCommand: readonly string[], usageFile: string): string[] {
  const argv = ["copilot", "--output-format", "json", "--no-auto-update"];
  const rules = new Set(["write", ...copilotGuardRules(guardCommand), ...(config.allowed_tools ?? [])]);
  for (const rule of rules) argv.push("--allow-tool", rule);
  argv.push("--usage-output-file", usageFile);
  if (isolationOf(config) === "clean") argv.push("--disable-builtin-mcps");
  if (config.model) argv.push("--model", config.model);
  argv.push(...(config.extra_args ?? []));
  return argv;
}

/**
 * The usage report (--usage-output-file): `modelMetrics.<model>.usage` per model, whose inputTokens
 * are the prompt tokens (cached ones included) and outputTokens the completion tokens (reasoning
 * included); the premium requests (`totalPremiumRequestCost`) and AI credits (`totalNanoAiu`, in
 * billionths) it was billed. Copilot states no price in dollars.
 */
export function copilotUsage(report: Json): AgentUsage | undefined {
  const models = object(report.modelMetrics);
  if (!models) return undefined;
  const sum = { input: 0, cached: 0, output: 0, reasoning: 0, requests: 0 };
  for (const metrics of Object.values(models)) {
    const usage = object(object(metrics)?.usage) ?? {};
    sum.input += count(usage.inputTokens) ?? 0;
    sum.cached += count(usage.cacheReadTokens) ?? 0;
    sum.output += count(usage.outputTokens) ?? 0;
    sum.reasoning += count(usage.reasoningTokens) ?? 0;
    sum.requests += count(object(object(metrics)?.requests)?.count) ?? 0;
  }
  return {
    input_tokens: sum.input,
    cached_input_tokens: sum.cached,
    output_tokens: sum.output,
    reasoning_tokens: sum.reasoning,
    cost_usd: null,
    copilot: {
      model_requests: sum.requests,
      premium_requests: count(report.totalPremiumRequestCost) ?? null,
      nano_ai_credits: count(report.totalNanoAiu) ?? null,
      models,
    },
  };
}

/** A quota rather than a rate: 402 "You have no quota", the premium request allowance, AI credits. */
const COPILOT_USAGE = /quota|premium request allowance|AI credits|billing/i;
/** A rate limit: Copilot's own ("Sorry, you've hit a rate limit …", "… session limits … (user_global_rate_limited:pro)") or the provider's 429. */
const COPILOT_RATE = /rate.?limit|too many requests/i;

/** "Please try again in 2 hours.", "Please try again in 2.4s.", "Please retry after 2733 seconds." as seconds. */
export function copilotRetryDelay(message: string): number | undefined {
  const match =
    /\b(?:try again|retry) (?:in|after) (\d+(?:\.\d+)?) ?(ms|milliseconds?|s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?)\b/i.exec(message);
  if (!match) return undefined;
  const value = Number(match[1]);
  const unit = match[2]!.toLowerCase();
  const scale =
    unit.startsWith("ms") || unit.startsWith("milli")
      ? 0.001
      : unit.startsWith("s")
        ? 1
        : unit.startsWith("m")
          ? 60
          : unit.startsWith("h")
            ? 3600
            : 86400;
  return Number.isFinite(value) ? value * scale : undefined;
}

/**
 * A limit in Copilot's `session.error` (after its own retries gave up): a 402 or a quota is a usage
 * limit, a 429 or `errorType: "rate_limit"` a rate limit. The reset is the delay the message names,
 * counted from the event's timestamp; Copilot passes on no retry-after header.
 */
export function copilotLimit(event: Json, clock: AgentClock): AgentLimit | undefined {
  const data = object(event.data) ?? {};
  const message = oneLine(text(data.message) ?? "", 2000);
  const status = count(data.statusCode);
  const usage = status === 402 || COPILOT_USAGE.test(message);
  if (!usage && status !== 429 && data.errorType !== "rate_limit" && !COPILOT_RATE.test(message)) return undefined;
  const kind: LimitKind = usage ? "usage" : "rate";
  const delay = copilotRetryDelay(message);
  const at = text(event.timestamp) === undefined ? undefined : clock.isoSeconds(text(event.timestamp)!);
  const resetsAt = delay !== undefined && at !== undefined ? clock.epochSeconds(at + delay) : undefined;
  return { kind, ...(resetsAt ? { resetsAt } : {}), message };
}

/**
 * What Copilot says on stderr when it stops before a session (no event): "Error: No authentication
 * information found." or "Error: Authentication token found but could not be validated." and the
 * lines after it (why, and the ways to sign in), on one line.
 */
export function copilotStderrError(stderr: string): string | undefined {
  const at = stderr.search(/^Error: /m);
  return at === -1 ? undefined : oneLine(stderr.slice(at + "Error: ".length), 2000) || undefined;
}

/** A tool call as Copilot announced it (tool.execution_start), until it completes. */
interface ToolCall {
  name: string;
  args: Json;
}

/** The line for a completed tool call: the command's outcome, the file written, or why it was refused. */
function completedLines(call: ToolCall, data: Json): string[] {
  const error = object(data.error);
  if (data.success === false) {
    const said = oneLine(text(error?.message) ?? "tool error");
    return [error?.code === "denied" ? `⛔ ${call.name}: ${said}` : `✗ ${call.name}: ${said}`];
  }
  switch (call.name) {
    case "bash": {
      const command = oneLine(text(call.args.command) ?? "");
      const exit = object(data.shellExecution)?.exitCode;
      return [typeof exit === "number" && exit !== 0 ? `✗ ${command} (exit ${exit})` : `✓ ${command}`];
    }
    case "create":
    case "edit":
      return [`✎ ${text(call.args.path) ?? "?"} (${call.name})`];
    default:
      return [];
  }
}

/** The line for a tool call as it starts. */
function startedLines(call: ToolCall): string[] {
  switch (call.name) {
    case "bash":
      return [`$ ${oneLine(text(call.args.command) ?? "")}`];
    case "create":
    case "edit":
      return [];
    case "view":
      return [`◦ read ${text(call.args.path) ?? "?"}`];
    default:
      return [`⚙ ${call.name}`];
  }
}

/** Copilot's failure in its own words, on one line, with the HTTP status when the words do not name it. */
function copilotError(data: Json): string {
  const words = oneLine(text(data.message) ?? text(data.errorType) ?? "Copilot CLI reported an error", 2000);
  const status = count(data.statusCode);
  return status !== undefined && !words.includes(String(status)) ? `${words} (HTTP ${status})` : words;
}

// Events (`--output-format json`): session.*, user.message, assistant.turn_start / message /
// reasoning / turn_retry / turn_end, tool.execution_start / complete, model.call_*, session.error,
// and last `result` (sessionId, exitCode, premium requests).
function copilotEvents(clock: AgentClock) {
  const calls = new Map<string, ToolCall>();
  let model: string | undefined;
  return {
    event(event: Json, session: AgentSession): string[] {
      const data = object(event.data) ?? {};
      switch (event.type) {
        case "session.tools_updated": {
          const named = text(data.model);
          if (!named || named === model) return [];
          model = named;
          return [`session ${named}`];
        }
        case "assistant.turn_start":
          session.turns += 1;
          return [];
        case "assistant.message":
          return text(data.content)?.trim() ? [`» ${oneLine(text(data.content)!)}`] : [];
        case "assistant.reasoning":
          return text(data.content)?.trim() ? [`… ${oneLine(text(data.content)!)}`] : [];
        case "assistant.turn_retry":
          return [`↻ retry after ${text(data.reason) ?? "an error"}`];
        case "tool.execution_start": {
          const call = { name: text(data.toolName) ?? "?", args: object(data.arguments) ?? {} };
          calls.set(text(data.toolCallId) ?? "", call);
          return startedLines(call);
        }
        case "tool.execution_complete": {
          const id = text(data.toolCallId) ?? "";
          const call = calls.get(id) ?? { name: "a tool", args: {} };
          calls.delete(id);
          return completedLines(call, data);
        }
        case "model.call_failure": {
          const said = text(data.errorMessage) ?? "model call failed";
          session.lastErrorEvent = count(data.statusCode) !== undefined ? `${String(data.statusCode)} ${said}` : said;
          return [];
        }
        case "session.warning":
          return text(data.message)?.trim() ? [`! ${oneLine(text(data.message)!)}`] : [];
        case "session.error":
          session.error = copilotError(data);
          session.limit = copilotLimit(event, clock) ?? session.limit;
          return [`✗ ${session.error}`];
        case "result":
          session.sessionId = text(event.sessionId) ?? session.sessionId;
          session.result = event;
          return [];
        default:
          return [];
      }
    },
  };
}

export const copilot: AgentDefinition = {
  kind: "copilot",
  title: "GitHub Copilot CLI",
  program: "copilot",
  package: "@github/copilot",
  testedVersions: ["1.0.102"],
  install: "install GitHub Copilot CLI (`npm install -g @github/copilot`)",
  // `copilot --version` prints "GitHub Copilot CLI 1.0.102." and an update hint.
  version: VERSION_OPTION,
  // A GitHub token with the Copilot Requests permission (in this order of precedence), or a model
  // provider of your own (BYOK: COPILOT_PROVIDER_BASE_URL with its key); else `copilot login`'s.
  authEnv: ["COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN", "COPILOT_PROVIDER_API_KEY", "COPILOT_PROVIDER_BEARER_TOKEN"],
  configKeys: EXECUTOR_KEYS.copilot,
  template: `# model = "claude-sonnet-5"      # --model; unset: Copilot's default (or COPILOT_MODEL)
# allowed_tools = ["shell(npm test)", "shell(node)"]  # --allow-tool; added to write, shell(<guard command>) and shell(<guard program>), which the runner always allows
# isolation = "clean"            # user (default): your Copilot config, MCP servers and the built-in GitHub MCP server; clean: no built-in MCP servers
# extra_args = []`,
  statusWord: "turn",
  argv: ({ config, guardCommand, usageFile }) => copilotArgv(config, guardCommand, usageFile),
  answer: { kind: "file" },
  events: copilotEvents,
  stderrError: copilotStderrError,
  usageReport(report, session) {
    const usage = copilotUsage(report);
    if (usage) session.usage = usage;
  },
};
