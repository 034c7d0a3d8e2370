// kind = "cline": Cline's CLI in its one-shot JSON mode, as Cline CLI 3.0.65 (npm `cline`) takes it
// (docs/agents.md, docs/decisions.md):
//   cline --json --auto-approve true [--config <iteration folder>/cline] [-m <model>] 'Your task follows.' [extra_args ...]
// The prompt goes on stdin through a pipe as a shell makes one (`cat | cline …`: Cline reads stdin
// only when it is a FIFO, and Node's pipes are sockets): with a prompt argument and piped stdin,
// Cline's prompt is the argument, a blank line and stdin (`--json` refuses stdin alone). Cline has no output-schema mode: the prompt
// asks for the answer in RUNNER_OUTPUT_FILE, which the agent writes with its own `editor` tool, and
// the runner reads and validates it like every answer. stdout is one JSON object per line:
// `agent_event` (iteration_start/end, content_start/update/end of text, reasoning and tools, usage
// with the session's totals, notice, error, done), `hook_event`, and a last `run_result` with the
// finish reason, the final text and the session's usage and cost; Cline's own error is also a JSON
// line on stderr. `--auto-approve true` approves every tool (edits and commands: the guard too),
// overriding a saved "ask" that no one could answer without a terminal. The environment keeps the
// session in this process (CLINE_SESSION_BACKEND_MODE=local: no hub daemon that would run the tools
// outside the runner's containment, deadline and environment) and off `npm i -g cline` at its exit
// (CLINE_NO_AUTO_UPDATE=1). With isolation = "clean", --config points all of Cline's configuration
// and state (providers, settings, MCP servers, hooks, sessions, logs) at a fresh folder in the
// iteration's folder: credentials then come from the environment (CLINE_API_KEY, ANTHROPIC_API_KEY,
// … with `-P` in extra_args) or CLINE_PROVIDER_SETTINGS_PATH.
import { EXECUTOR_KEYS } from "../core/config/executor-kinds.js";
import path from "node:path";
import type { AgentClock, AgentLimit, LimitKind } from "../core/agent/agent-limits.js";
import { type AgentUsage, count } from "../core/agent/agent-usage.js";
import { oneLine } from "../core/base/text-limits.js";
import { object, objects, text, type AgentDefinition, type AgentSession, type Json, VERSION_OPTION } from "./agent.js";

/** The prompt argument `--json` needs; stdin (the runner's prompt) follows it after a blank line. */
const CLINE_LEAD = "Your task follows.";

/** A quota rather than a rate: OpenAI's `insufficient_quota`, credits, billing, ClinePass, the free model's daily limit. */
const CLINE_USAGE =
  /insufficient_quota|exceeded your current quota|out of credits|credit balance|billing|clinepass limit|free limit reached|usage limit/i;
/** A rate limit in the provider's words (Cline states no status code): Cline's own pattern (rate[\s_-]?limit), 429, "too many requests". */
const CLINE_RATE = /rate[\s_-]?limit|too many requests|\b429\b|per[\s_-]?minute/i;
/** "try again in 1m12.5s" (OpenAI), "Try again in 3h 20m" (Cline's free model limit). */
const RETRY_IN = /try again in ((?:\s*\d+(?:\.\d+)?\s*(?:milliseconds?|ms|seconds?|secs?|s|minutes?|mins?|m|hours?|hrs?|h|days?|d)(?![a-z]))+)/i;
const UNIT_SECONDS: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400 };

/** The seconds a "try again in …" names, or undefined. */
function retryInSeconds(message: string): number | undefined {
  const words = RETRY_IN.exec(message)?.[1];
  if (!words) return undefined;
  let seconds = 0;
  for (const [, amount, unit] of words.matchAll(/(\d+(?:\.\d+)?)\s*([a-z]+)/gi)) {
    const key = /^ms|^milli/i.test(unit!) ? "ms" : unit!.slice(0, 1).toLowerCase();
    seconds += Number(amount) * (UNIT_SECONDS[key] ?? 0);
  }
  return seconds;
}

/**
 * A limit in the message of Cline's failure (after its own retries: five, honouring retry-after):
 * "rate" or "usage" by the words, reset at `ts` plus the "try again in …" the message names.
 */
export function clineLimit(message: string, ts: string | undefined, clock: AgentClock): AgentLimit | undefined {
  const kind: LimitKind | undefined = CLINE_USAGE.test(message) ? "usage" : CLINE_RATE.test(message) ? "rate" : undefined;
  if (!kind) return undefined;
  const after = retryInSeconds(message);
  const from = ts === undefined ? undefined : clock.isoSeconds(ts);
  const resetsAt = after !== undefined && from !== undefined ? clock.epochSeconds(from + after) : undefined;
  return { kind, ...(resetsAt ? { resetsAt } : {}), message };
}

/** Cline's usage totals ({inputTokens (cached included), outputTokens, cacheReadTokens, cacheWriteTokens, totalCost}). */
function clineUsage(raw: Json, extra: Json): AgentUsage {
  return {
    input_tokens: count(raw.totalInputTokens ?? raw.inputTokens) ?? 0,
    cached_input_tokens: count(raw.totalCacheReadTokens ?? raw.cacheReadTokens) ?? 0,
    output_tokens: count(raw.totalOutputTokens ?? raw.outputTokens) ?? 0,
    reasoning_tokens: null,
    cost_usd: count(raw.totalCost) ?? null,
    cline: extra,
  };
}

/** What a tool approval nobody can give says (`--auto-approve false`, no terminal). */
const NEEDS_APPROVAL = /requires approval in a TTY session/;

/** The words of a tool's error: Cline wraps them as JSON text `{"error": "…"}`. */
function toolError(event: Json): string {
  const raw = text(event.error) ?? "";
  try {
    return text(object(JSON.parse(raw))?.error) ?? raw;
  } catch {
    return raw;
  }
}

function commandLines(event: Json): string[] {
  return objects(event.output).map((result) => {
    const command = oneLine(text(result?.query) ?? "?");
    if (result?.success === true) return `✓ ${command}`;
    const exit = /exited with code (\d+)/.exec(text(result?.error) ?? "")?.[1];
    return exit ? `✗ ${command} (exit ${exit})` : `✗ ${command}: ${oneLine(text(result?.error) ?? "failed")}`;
  });
}

function toolStart(event: Json): string[] {
  if (event.toolName !== "run_commands") return [];
  const commands = object(event.input)?.commands;
  return (Array.isArray(commands) ? commands : []).map((command) => `$ ${oneLine(text(command) ?? text(object(command)?.command) ?? "?")}`);
}

function toolEnd(event: Json, session: AgentSession): string[] {
  const tool = text(event.toolName) ?? "?";
  if (text(event.error)) {
    const said = toolError(event);
    if (!NEEDS_APPROVAL.test(said)) return [`✗ ${tool}: ${oneLine(said)}`];
    session.error = `${tool} needs an approval, and a session without a terminal cannot give it: ${said}`;
    return [`⛔ ${tool}: ${oneLine(said)}`];
  }
  const input = object(event.input) ?? {};
  switch (tool) {
    case "run_commands":
      return commandLines(event);
    case "editor":
    case "apply_patch":
      return [`✎ ${text(object(event.output)?.query)?.replace(/^edit:/, "") ?? text(input.path) ?? "?"} (${tool})`];
    case "read_files":
      return [
        `◦ read ${
          text(object(event.output)?.query) ??
          objects(event.output)
            .map((file) => text(file?.query) ?? "?")
            .join(", ")
        }`,
      ];
    default:
      return [`⚙ ${tool}`];
  }
}

function runResult(event: Json, session: AgentSession, clock: AgentClock): string[] {
  session.result = event;
  if (typeof event.iterations === "number" && event.iterations > 0) session.turns = event.iterations;
  const model = object(event.model);
  const raw = object(event.aggregateUsage) ?? object(event.usage);
  if (raw) {
    session.usage = clineUsage(raw, {
      iterations: event.iterations ?? null,
      finish_reason: event.finishReason ?? null,
      duration_ms: event.durationMs ?? null,
      ...(model ? { model: `${text(model.provider) ?? "?"}/${text(model.id) ?? "?"}` } : {}),
      usage: raw,
    });
  }
  if (event.finishReason === "completed" || session.error !== undefined) return [];
  session.error = oneLine(text(event.text) || `the session ended: ${text(event.finishReason) ?? "?"}`, 2000);
  session.limit = clineLimit(session.error, text(event.ts), clock) ?? session.limit;
  return [`✗ ${session.error}`];
}

// Lines: {ts, type: "agent_event", event}, {ts, type: "hook_event", …}, {ts, type: "run_result", …}.
function clineEvents(clock: AgentClock) {
  function agentEvent(event: Json, ts: string | undefined, session: AgentSession): string[] {
    switch (event.type) {
      case "iteration_start":
        session.turns = count(event.iteration) ?? session.turns + 1;
        return [];
      case "usage":
        session.usage = clineUsage(event, { iterations: session.turns });
        return [];
      case "content_start":
        return event.contentType === "tool" ? toolStart(event) : [];
      case "content_end":
        if (event.contentType === "tool") return toolEnd(event, session);
        if (event.contentType === "text" && text(event.text)?.trim()) return [`» ${oneLine(text(event.text)!)}`];
        if (event.contentType === "reasoning" && text(event.reasoning)?.trim()) return [`… ${oneLine(text(event.reasoning)!)}`];
        return [];
      case "notice": {
        const message = text(event.message)?.trim();
        if (!message) return [];
        return [/retry/i.test(message) ? `↻ ${oneLine(message)}` : `! ${oneLine(message)}`];
      }
      case "error": {
        // A recoverable error (a failed tool call) is shown by its tool's line; Cline goes on.
        if (event.recoverable === true) return [];
        const message = text(object(event.error)?.message)?.trim() || "Cline reported an error";
        session.error = oneLine(message, 2000);
        session.limit = clineLimit(message, ts, clock) ?? session.limit;
        return [`✗ ${session.error}`];
      }
      default:
        return [];
    }
  }

  return {
    event(line: Json, session: AgentSession): string[] {
      if (line.type === "agent_event") return agentEvent(object(line.event) ?? {}, text(line.ts), session);
      if (line.type === "run_result") return runResult(line, session, clock);
      return [];
    },
  };
}

export const cline: AgentDefinition = {
  kind: "cline",
  title: "Cline CLI",
  program: "cline",
  package: "cline",
  testedVersions: ["3.0.65"],
  install: "install Cline's CLI (`npm install -g cline`)",
  // `cline --version` prints "3.0.65".
  version: VERSION_OPTION,
  // The provider's own variable (README "Environment variables"), else what `cline auth` saved in ~/.cline.
  authEnv: ["CLINE_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY", "AI_GATEWAY_API_KEY"],
  configKeys: EXECUTOR_KEYS.cline,
  template: `# model = "anthropic/claude-sonnet-4.6"  # -m; unset: the model \`cline auth\` saved for the provider
# extra_args = ["-P", "anthropic"]  # -P: the provider (unset: the last one used); ["--thinking", "high"]
# isolation = "clean"            # user (default): your ~/.cline (providers, settings, MCP servers, hooks, sessions); clean: a fresh one per iteration`,
  statusWord: "step",
  argv({ config, outputFile, isolation }) {
    const argv = ["cline", "--json", "--auto-approve", "true"];
    if (isolation === "clean") argv.push("--config", path.join(path.dirname(outputFile), "cline"));
    if (config.model) argv.push("-m", config.model);
    argv.push(CLINE_LEAD, ...(config.extra_args ?? []));
    return argv;
  },
  // Cline reads a piped prompt only from a FIFO or a file (`stdinHasPipedInput`; its Bun runtime reads nothing from a file), and Node's pipes are sockets.
  promptThroughPipe: true,
  env: (): Record<string, string> => ({ CLINE_SESSION_BACKEND_MODE: "local", CLINE_NO_AUTO_UPDATE: "1" }),
  answer: { kind: "file" },
  events: clineEvents,
};
