// kind = "codex": OpenAI Codex CLI in non-interactive mode (`codex exec`), as Codex 0.169.0 takes it
// (docs/agents.md, docs/decisions.md):
//   codex exec --json --skip-git-repo-check -C <repo> --sandbox <mode> -c allow_login_shell=false
//              [--ignore-user-config --ephemeral]
//              --output-schema <runner>/schemas/agent_output/v1.agent.json
//              --output-last-message <iteration>/output.json
//              [-m <model>] [-p <profile>] [-c key=value ...] [extra_args ...] -
// `allow_login_shell=false`: Codex runs commands in `bash -lc` by default, and a login shell's
// /etc/profile resets PATH, so the agent would not find `just` for the guard. The isolation flags
// come with isolation = "clean". The prompt goes on stdin (`-`); the JSONL events go to executor.log
// and become the live lines; Codex writes its final message, shaped by the output schema, to
// output.json (an empty file when the turn failed).
import { EXECUTOR_KEYS } from "../core/config/executor-kinds.js";
import type { AgentClock, AgentLimit, LimitKind, LocalTime } from "../core/agent/agent-limits.js";
import type { AgentUsage } from "../core/agent/agent-usage.js";
import { count } from "../core/agent/agent-usage.js";
import { oneLine } from "../core/base/text-limits.js";
import { object, objects, text, unwrapShell, type AgentDefinition, type AgentSession, type Json, VERSION_OPTION } from "./agent.js";

const CODEX_DEFAULT_SANDBOX = "workspace-write";

/** Codex `turn.completed.usage` (summed over the turn's model requests by Codex itself). */
export function codexUsage(usage: unknown, extra: Json = {}): AgentUsage | undefined {
  const raw = object(usage);
  if (!raw) return undefined;
  return {
    input_tokens: count(raw.input_tokens) ?? 0,
    cached_input_tokens: count(raw.cached_input_tokens) ?? 0,
    output_tokens: count(raw.output_tokens) ?? 0,
    reasoning_tokens: count(raw.reasoning_output_tokens) ?? count(raw.reasoning_tokens) ?? null,
    cost_usd: null,
    codex: { ...extra, usage: raw },
  };
}

// Rate and usage limits in Codex's words (the pinned version's; docs/agents.md).
/** A plan's quota ("You’ve hit your usage limit. …"), a workspace's credits or spend cap. */
const CODEX_USAGE = /hit your usage limit|usage limit reached|out of credits|hit your spend cap|workspace credit limit/i;
/** Codex gives up on a 429 without a usage-limit body: "exceeded retry limit, last status: 429 Too Many Requests". */
const CODEX_RATE = /last status: 429\b|\b429 Too Many Requests|rate limit (?:reached|exceeded)/i;

const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];

/**
 * Codex's reset time, "try again at 11:39 PM." (today) or "try again at Aug 8th, 2026 11:39 PM."
 * (codex-rs format_retry_timestamp: `%-I:%M %p`, or `%b %-d{st|nd|rd|th}, %Y %-I:%M %p`), in the
 * local time zone of the machine (Codex and the runner share it).
 */
export function codexResetTime(message: string): LocalTime | undefined {
  const match = /try again at (?:([A-Za-z]{3}) (\d{1,2})(?:st|nd|rd|th)?, (\d{4}) )?(\d{1,2}):(\d{2}) ?([AP]M)/i.exec(message);
  if (!match) return undefined;
  const [, monthName, day, year, hour, minute, half] = match;
  const time = { hours: (Number(hour) % 12) + (half!.toUpperCase() === "PM" ? 12 : 0), minutes: Number(minute) };
  if (!monthName) return time;
  const month = MONTHS.indexOf(monthName.toLowerCase());
  return month < 0 ? undefined : { ...time, date: { year: Number(year), month: month + 1, day: Number(day) } };
}

/**
 * A limit in Codex's failure message (`turn.failed.error.message` or an `error` event). Codex formats
 * the reset to the minute, rounded down (11:39:50 shows as 11:39): the limit is known to be gone only
 * at the end of the minute it names, which is what `resetsAt` says.
 */
export function codexLimit(message: string, clock: AgentClock): AgentLimit | undefined {
  const kind: LimitKind | undefined = CODEX_USAGE.test(message) ? "usage" : CODEX_RATE.test(message) ? "rate" : undefined;
  if (!kind) return undefined;
  const time = codexResetTime(message);
  // The minute after the one named (minutes past 59 carry over into the hour, the day, the year).
  const resetsAt = time ? clock.localTime({ ...time, minutes: time.minutes + 1 }) : undefined;
  return { kind, ...(resetsAt ? { resetsAt } : {}), message };
}

// Events: thread.started, turn.started/completed/failed, item.started/updated/completed, error.
function codexEvents(clock: AgentClock) {
  return {
    event(event: Json, session: AgentSession): string[] {
      switch (event.type) {
        case "thread.started":
          session.sessionId = text(event.thread_id) ?? session.sessionId;
          return [];
        case "turn.completed":
          session.usage = codexUsage(event.usage, session.sessionId ? { thread_id: session.sessionId } : {}) ?? session.usage;
          return [];
        case "turn.failed": {
          const message = text(object(event.error)?.message) ?? session.lastErrorEvent ?? "the turn failed";
          session.error = message;
          const limit = codexLimit(message, clock);
          if (limit) session.limit = limit;
          return [`✗ ${oneLine(message)}`];
        }
        case "error": {
          // Also a reconnect after a transient failure: a limit is taken only from the turn's failure.
          const message = text(event.message) ?? "";
          session.lastErrorEvent = message;
          return message ? [`! ${oneLine(message)}`] : [];
        }
        case "item.started":
        case "item.completed":
          return codexItem(object(event.item) ?? {}, event.type === "item.completed", session);
        default:
          return [];
      }
    },
  };
}

function codexItem(item: Json, completed: boolean, session: AgentSession): string[] {
  if (completed) session.turns += 1;
  switch (item.type) {
    case "command_execution": {
      const command = oneLine(unwrapShell(text(item.command) ?? ""));
      if (!completed) return [`$ ${command}`];
      const exit = item.exit_code;
      return [typeof exit === "number" && exit !== 0 ? `✗ ${command} (exit ${exit})` : `✓ ${command}`];
    }
    case "file_change":
      if (!completed) return [];
      return objects(item.changes).map((change) => `✎ ${text(change?.path) ?? "?"}${text(change?.kind) ? ` (${text(change?.kind)})` : ""}`);
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
      session.lastErrorEvent = text(item.message);
      return [`! ${oneLine(text(item.message)!)}`];
    }
    default:
      return [];
  }
}

export const codex: AgentDefinition = {
  kind: "codex",
  title: "Codex CLI",
  program: "codex",
  package: "@openai/codex",
  testedVersions: ["0.169.0"],
  install: "install the Codex CLI (`npm install -g @openai/codex`)",
  // `codex --version` prints "codex-cli 0.169.0".
  version: VERSION_OPTION,
  authEnv: ["OPENAI_API_KEY", "CODEX_API_KEY"],
  configKeys: EXECUTOR_KEYS.codex,
  template: `sandbox = "workspace-write"      # read-only | workspace-write | danger-full-access
# model = "gpt-6.1-sol"          # unset: Codex's default model
# profile = "ci"                 # -p ci: $CODEX_HOME/ci.config.toml on top of config.toml
# config_overrides = ["model_reasoning_effort=high"]
# isolation = "clean"            # user (default): your Codex config and saved sessions; clean: --ignore-user-config --ephemeral
# extra_args = []`,
  statusWord: "step",
  argv({ config, root, outputFile, schemaFile, isolation }) {
    const argv = [
      "codex",
      "exec",
      "--json",
      "--skip-git-repo-check",
      "-C",
      root,
      "--sandbox",
      config.sandbox ?? CODEX_DEFAULT_SANDBOX,
      "-c",
      "allow_login_shell=false",
    ];
    if (isolation === "clean") argv.push("--ignore-user-config", "--ephemeral");
    argv.push("--output-schema", schemaFile, "--output-last-message", outputFile);
    if (config.model) argv.push("-m", config.model);
    if (config.profile) argv.push("-p", config.profile);
    for (const override of config.config_overrides ?? []) argv.push("-c", override);
    argv.push(...(config.extra_args ?? []), "-");
    return argv;
  },
  answer: { kind: "flag" },
  events: codexEvents,
};
