// kind = "opencode": OpenCode (`opencode run`), as OpenCode 1.18.33 (npm `opencode-ai`) takes it
// (docs/agents.md, docs/decisions.md):
//   opencode run --format json --print-logs --log-level WARN --dir <repo> [--pure] [-m <provider/model>] [extra_args ...]
// The prompt goes on stdin. OpenCode has no output-schema mode: the prompt asks for the answer in
// RUNNER_OUTPUT_FILE, which the agent writes with its own write tool, and the runner reads and
// validates it like every answer. stdout is one JSON event per line (step_start, tool_use, text,
// reasoning, step_finish with the step's tokens and cost, error); --print-logs sends OpenCode's
// warnings and errors (its retries of a 429 among them) to stderr, which the live view passes through.
// Permissions: OpenCode's defaults allow editing files and running commands; an "ask" in a user's
// config cannot be answered in `opencode run` ("permission requested: …; auto-rejecting"), which
// ends the session with exit code 0 — the runner says so in OpenCode's words. With isolation =
// "clean": --pure (no external plugins) and no Claude Code files, external skills, models.dev
// fetch or auto-update (environment variables below).
import { EXECUTOR_KEYS } from "../core/config/executor-kinds.js";
import type { AgentClock, AgentLimit, LimitKind } from "../core/agent/agent-limits.js";
import { count, type AgentUsage } from "../core/agent/agent-usage.js";
import { oneLine } from "../core/base/text-limits.js";
import { object, text, unwrapShell, type AgentDefinition, type AgentSession, type Json, VERSION_OPTION } from "./agent.js";

/** Environment for isolation = "clean": none of the user's Claude Code files or skills, no network chores. */
const OPENCODE_CLEAN_ENV: Readonly<Record<string, string>> = {
  OPENCODE_DISABLE_CLAUDE_CODE: "1",
  OPENCODE_DISABLE_EXTERNAL_SKILLS: "1",
  OPENCODE_DISABLE_MODELS_FETCH: "1",
  OPENCODE_DISABLE_AUTOUPDATE: "1",
  OPENCODE_DISABLE_SHARE: "1",
};

/** What OpenCode puts in a tool's error when a permission set to "ask" was rejected (nobody can answer in `opencode run`). */
const REJECTED = /user rejected permission/i;

/** One `step_finish.part`: tokens {input (uncached), output (without reasoning), reasoning, cache {read, write}} and cost. */
export function opencodeStepUsage(part: Json): AgentUsage | undefined {
  const tokens = object(part.tokens);
  if (!tokens) return undefined;
  const cache = object(tokens.cache) ?? {};
  const read = count(cache.read) ?? 0;
  const reasoning = count(tokens.reasoning) ?? 0;
  return {
    input_tokens: (count(tokens.input) ?? 0) + read + (count(cache.write) ?? 0),
    cached_input_tokens: read,
    // OpenCode reports output without the reasoning tokens; the runner's output counts them (as the OpenAI API does).
    output_tokens: (count(tokens.output) ?? 0) + reasoning,
    reasoning_tokens: reasoning,
    cost_usd: count(part.cost) ?? null,
    opencode: { steps: 1, tokens },
  };
}

/** The session's usage so far plus one step's. */
function addOpencodeStep(sum: AgentUsage | undefined, step: AgentUsage): AgentUsage {
  if (!sum) return step;
  const steps = Number((sum.opencode as Json | undefined)?.steps ?? 0) + 1;
  return {
    input_tokens: sum.input_tokens + step.input_tokens,
    cached_input_tokens: sum.cached_input_tokens + step.cached_input_tokens,
    output_tokens: sum.output_tokens + step.output_tokens,
    reasoning_tokens: (sum.reasoning_tokens ?? 0) + (step.reasoning_tokens ?? 0),
    cost_usd: sum.cost_usd === null && step.cost_usd === null ? null : (sum.cost_usd ?? 0) + (step.cost_usd ?? 0),
    opencode: { steps },
  };
}

/** A quota rather than a rate: OpenAI's `insufficient_quota`, "exceeded your current quota", credits, usage limits. */
const OPENCODE_USAGE = /insufficient_quota|exceeded your current quota|usage limit|out of credits|credit balance|billing/i;

/**
 * A limit in OpenCode's `error` event: an APIError with statusCode 429 (OpenCode has already retried
 * it, honouring retry-after, and given up). The reset is the event's time plus the provider's
 * `retry-after` seconds, when it sent one.
 */
export function opencodeLimit(event: Json, clock: AgentClock): AgentLimit | undefined {
  const error = object(event.error);
  const data = object(error?.data) ?? {};
  const message = text(data.message) ?? text(error?.name) ?? "";
  const body = text(data.responseBody) ?? "";
  const usage = OPENCODE_USAGE.test(message) || OPENCODE_USAGE.test(body);
  if (data.statusCode !== 429 && !usage) return undefined;
  const kind: LimitKind = usage ? "usage" : "rate";
  const retryAfter = Number(text(object(data.responseHeaders)?.["retry-after"]) ?? Number.NaN);
  const at = count(event.timestamp);
  const resetsAt = at !== undefined && Number.isFinite(retryAfter) && retryAfter >= 0 ? clock.epochSeconds(at / 1000 + retryAfter) : undefined;
  return { kind, ...(resetsAt ? { resetsAt } : {}), message };
}

/** OpenCode's error in its own words: the provider's message, with the HTTP status. */
function opencodeError(event: Json): string {
  const error = object(event.error);
  const data = object(error?.data) ?? {};
  const words = (text(data.message) ?? text(error?.name) ?? "error").trim();
  const status = count(data.statusCode);
  return status !== undefined && !words.includes(String(status)) ? `${words} (API status ${status})` : words;
}

function toolLines(part: Json, session: AgentSession): string[] {
  const state = object(part.state) ?? {};
  const input = object(state.input) ?? {};
  const tool = text(part.tool) ?? "?";
  if (state.status === "error") {
    const error = text(state.error) ?? "tool error";
    if (REJECTED.test(error)) session.error = `${tool} needs a permission OpenCode would ask for, and \`opencode run\` cannot ask: ${error}`;
    return [`✗ ${tool}: ${oneLine(error)}`];
  }
  switch (tool) {
    case "bash": {
      const command = oneLine(unwrapShell(text(input.command) ?? ""));
      const exit = object(state.metadata)?.exit;
      return [`$ ${command}`, typeof exit === "number" && exit !== 0 ? `✗ ${command} (exit ${exit})` : `✓ ${command}`];
    }
    case "write":
    case "edit":
    case "patch":
    case "multiedit":
      return [`✎ ${text(input.filePath) ?? "?"} (${tool})`];
    case "read":
      return [`◦ read ${text(input.filePath) ?? "?"}`];
    default:
      return [`⚙ ${tool}`];
  }
}

// Events (`--format json`): step_start, tool_use, text, reasoning, step_finish, error; each with sessionID and part.
function opencodeEvents(clock: AgentClock) {
  return {
    event(event: Json, session: AgentSession): string[] {
      session.sessionId = text(event.sessionID) ?? session.sessionId;
      const part = object(event.part) ?? {};
      switch (event.type) {
        case "tool_use":
          return toolLines(part, session);
        case "text":
          return text(part.text)?.trim() ? [`» ${oneLine(text(part.text)!)}`] : [];
        case "reasoning":
          return text(part.text)?.trim() ? [`… ${oneLine(text(part.text)!)}`] : [];
        case "step_finish": {
          session.turns += 1;
          const step = opencodeStepUsage(part);
          if (step) session.usage = addOpencodeStep(session.usage, step);
          return [];
        }
        case "error": {
          session.error = opencodeError(event);
          session.limit = opencodeLimit(event, clock) ?? session.limit;
          return [`✗ ${oneLine(session.error)}`];
        }
        default:
          return [];
      }
    },
  };
}

export const opencode: AgentDefinition = {
  kind: "opencode",
  title: "OpenCode",
  program: "opencode",
  package: "opencode-ai",
  testedVersions: ["1.18.33"],
  install: "install OpenCode (`npm install -g opencode-ai`)",
  // `opencode --version` prints "1.18.33".
  version: VERSION_OPTION,
  // Any provider's key works (OpenCode reads each provider's own variable, or `opencode auth login`'s auth.json).
  authEnv: ["OPENCODE_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENROUTER_API_KEY", "GEMINI_API_KEY"],
  configKeys: EXECUTOR_KEYS.opencode,
  template: `# model = "provider/model"       # -m; unset: the model of your OpenCode config
# isolation = "clean"            # user (default): your OpenCode config and plugins; clean: --pure, no Claude Code files or external skills
# extra_args = ["--agent", "build"]`,
  statusWord: "step",
  argv({ config, root, isolation }) {
    const argv = ["opencode", "run", "--format", "json", "--print-logs", "--log-level", "WARN", "--dir", root];
    if (isolation === "clean") argv.push("--pure");
    if (config.model) argv.push("-m", config.model);
    argv.push(...(config.extra_args ?? []));
    return argv;
  },
  env: (_config, isolation): Record<string, string> => (isolation === "clean" ? { ...OPENCODE_CLEAN_ENV } : {}),
  answer: { kind: "file" },
  events: opencodeEvents,
};
