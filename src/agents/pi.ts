// kind = "pi": pi (`@mariozechner/pi-coding-agent`) in its JSON event mode, as pi 0.73.1 takes it
// (docs/agents.md, docs/decisions.md):
//   pi --mode json [--no-session --no-extensions --no-skills --no-prompt-templates --offline]
//      [--model <provider/id>] [extra_args ...]
// The prompt goes on stdin (a piped stdin is read as the first message; `--mode json` is print mode
// with every session event as one JSON line on stdout). pi has no output-schema mode: the prompt
// asks for the answer in RUNNER_OUTPUT_FILE, which the agent writes with its own `write` tool, and
// the runner reads and validates it like every answer. pi has no permission prompts: its default
// tools (read, bash, edit, write) run without asking, so the agent can edit files and run the guard
// as it is. Usage and cost come with each assistant message (`message_end`). pi exits 0 when the
// model API failed: its failure is the last assistant message's `errorMessage` (stopReason
// "error"), or, before any event, a sentence on stderr with exit code 1. The isolation flags come
// with isolation = "clean".
import { EXECUTOR_KEYS } from "../core/config/executor-kinds.js";
import type { AgentClock, AgentLimit } from "../core/agent/agent-limits.js";
import { addUsage, type AgentUsage, count } from "../core/agent/agent-usage.js";
import { oneLine } from "../core/base/text-limits.js";
import { type AgentDefinition, type AgentSession, type Json, object, objects, text, VERSION_OPTION } from "./agent.js";

/** isolation = "clean": no saved session, none of the user's extensions, skills or prompt templates, no start-up network chores. */
const PI_CLEAN_FLAGS = ["--no-session", "--no-extensions", "--no-skills", "--no-prompt-templates", "--offline"];

/** One assistant message's `usage` {input (uncached), output, cacheRead, cacheWrite, cost: {total, …}}: input counts the cached tokens. */
export function piMessageUsage(usage: unknown): AgentUsage | undefined {
  const raw = object(usage);
  if (!raw) return undefined;
  const read = count(raw.cacheRead) ?? 0;
  return {
    input_tokens: (count(raw.input) ?? 0) + read + (count(raw.cacheWrite) ?? 0),
    cached_input_tokens: read,
    // pi counts reasoning within output (the API's completion tokens) and names it nowhere apart.
    output_tokens: count(raw.output) ?? 0,
    reasoning_tokens: null,
    cost_usd: count(object(raw.cost)?.total) ?? null,
    pi: { responses: 1, cache_write_tokens: count(raw.cacheWrite) ?? 0 },
  };
}

/** The session's usage so far plus one response's. */
function addPiResponse(sum: AgentUsage | undefined, response: AgentUsage): AgentUsage {
  if (!sum) return response;
  const own = (usage: AgentUsage) => (usage.pi as Json | undefined) ?? {};
  return {
    ...addUsage(sum, response)!,
    pi: {
      responses: Number(own(sum).responses ?? 0) + 1,
      cache_write_tokens: Number(own(sum).cache_write_tokens ?? 0) + Number(own(response).cache_write_tokens ?? 0),
    },
  };
}

/**
 * pi's error message in its own words: the provider SDK's "<status> <message>" as "<message> (API
 * status <status>)"; a JSON body after the status (Anthropic's) as its message.
 */
export function piWords(errorMessage: string): string {
  const match = /^(\d{3}) ([\s\S]*)$/.exec(errorMessage.trim());
  if (!match) return oneLine(errorMessage, 2000);
  let words = match[2]!.trim();
  if (words.startsWith("{")) {
    try {
      const body = object(JSON.parse(words));
      words = text(object(body?.error)?.message) ?? text(body?.message) ?? words;
    } catch {
      // not JSON: the text as it is
    }
  }
  return oneLine(`${words} (API status ${match[1]})`, 2000);
}

/** "Please try again in 2.4s" (OpenAI), "in 1m30s", "in 20ms", "Please retry in 12.3s" (Google): seconds. */
export function piRetryDelay(message: string): number | undefined {
  const match = /(?:try again|retry) (?:in|after) ((?:[\d.]+(?:ms|h|m|s))+)/i.exec(message);
  if (!match) return undefined;
  let seconds = 0;
  for (const [, value, unit] of match[1]!.matchAll(/([\d.]+)(ms|h|m|s)/g)) {
    seconds += Number(value) * { ms: 0.001, s: 1, m: 60, h: 3600 }[unit as "ms" | "s" | "m" | "h"];
  }
  return Number.isFinite(seconds) ? seconds : undefined;
}

/** A quota that lasts (a plan's, a workspace's, a day's). */
const PI_USAGE = /insufficient_quota|exceeded your current quota|usage limit|out of credits|credit balance|billing|daily quota|hit your .*limit/i;
/** A rate limit: the API's 429, in any provider's words. */
const PI_RATE = /^429\b|\b429\b|rate.?limit|too many requests|RESOURCE_EXHAUSTED/i;

/**
 * A limit in the error of pi's last assistant message (after its own retries gave up). The reset is
 * the delay the provider named, counted from the message's timestamp (ms since the epoch).
 */
export function piLimit(errorMessage: string, timestampMs: number | undefined, clock: AgentClock): AgentLimit | undefined {
  const usage = PI_USAGE.test(errorMessage);
  if (!usage && !PI_RATE.test(errorMessage)) return undefined;
  const delay = piRetryDelay(errorMessage);
  const resetsAt = delay !== undefined && timestampMs !== undefined ? clock.epochSeconds(timestampMs / 1000 + delay) : undefined;
  return { kind: usage ? "usage" : "rate", ...(resetsAt ? { resetsAt } : {}), message: piWords(errorMessage) };
}

/**
 * What pi says on stderr when it stops before the session runs (exit code 1): a diagnostic
 * ("Error: Model "x" not found. …", "Error: Unknown option: --x") or its auth guidance, whose first
 * line is the sentence ("No API key found for anthropic." then how to log in).
 */
export function piStderrError(stderr: string): string | undefined {
  const lines = stderr.split(/\r?\n/).map((line) => line.trim());
  const diagnostic = lines.find((line) => line.startsWith("Error: "));
  if (diagnostic) return diagnostic.slice("Error: ".length);
  return lines.find((line) => /^No (?:API key found for|models available|model selected)\b/.test(line));
}

/** A tool call as a line, when it starts. */
function toolStartLine(name: string, args: Json): string {
  switch (name) {
    case "bash":
      return `$ ${oneLine(text(args.command) ?? "")}`;
    case "write":
    case "edit":
      return `✎ ${text(args.path) ?? "?"} (${name})`;
    case "read":
      return `◦ read ${text(args.path) ?? "?"}`;
    default:
      return `⚙ ${name}`;
  }
}

/** The text of a tool result (`result.content[].text`). */
function resultText(result: unknown): string {
  return objects(object(result)?.content)
    .map((part) => text(part?.text) ?? "")
    .join("\n");
}

/** A finished tool call as a line: a command's outcome, or another tool's error (an extension's block among them). */
function toolEndLine(event: Json, commands: Map<string, string>): string[] {
  const said = resultText(event.result);
  if (event.toolName === "bash") {
    const command = commands.get(text(event.toolCallId) ?? "") ?? "?";
    if (event.isError !== true) return [`✓ ${command}`];
    const exit = /Command exited with code (\d+)\s*$/.exec(said)?.[1];
    return [exit ? `✗ ${command} (exit ${exit})` : `✗ ${command}: ${oneLine(said.trim().split("\n").at(-1) ?? "")}`];
  }
  return event.isError === true ? [`✗ ${text(event.toolName) ?? "a tool"}: ${oneLine(said || "tool error")}`] : [];
}

// Events (`--mode json`): the session header, agent_start/end, turn_start/end, message_start/update/end,
// tool_execution_start/update/end, auto_retry_start/end, compaction_start/end, queue_update.
function piEvents(clock: AgentClock) {
  const commands = new Map<string, string>();
  let modelShown = false;

  function assistantEnd(message: Json, session: AgentSession): string[] {
    const response = piMessageUsage(message.usage);
    if (response && response.input_tokens + response.output_tokens > 0) session.usage = addPiResponse(session.usage, response);
    if (message.stopReason === "error" || message.stopReason === "aborted") {
      const said = text(message.errorMessage) ?? `Request ${String(message.stopReason)}`;
      session.error = piWords(said);
      session.limit = piLimit(said, count(message.timestamp), clock);
      return [`✗ ${session.error}`];
    }
    // A response after an error: pi retried it successfully, no failure and no limit of the session.
    delete session.error;
    delete session.limit;
    session.turns += 1;
    return objects(message.content).flatMap((block) => {
      if (block?.type === "text" && text(block.text)?.trim()) return [`» ${oneLine(text(block.text)!)}`];
      if (block?.type === "thinking" && text(block.thinking)?.trim()) return [`… ${oneLine(text(block.thinking)!)}`];
      return [];
    });
  }

  return {
    event(event: Json, session: AgentSession): string[] {
      switch (event.type) {
        case "session":
          session.sessionId = text(event.id) ?? session.sessionId;
          return [];
        case "message_start": {
          const message = object(event.message) ?? {};
          if (message.role !== "assistant" || modelShown) return [];
          modelShown = true;
          return [`session ${text(message.provider) ?? "?"}/${text(message.model) ?? "?"}`];
        }
        case "message_end": {
          const message = object(event.message) ?? {};
          return message.role === "assistant" ? assistantEnd(message, session) : [];
        }
        case "tool_execution_start": {
          const name = text(event.toolName) ?? "?";
          const args = object(event.args) ?? {};
          if (name === "bash") commands.set(text(event.toolCallId) ?? "", oneLine(text(args.command) ?? ""));
          return [toolStartLine(name, args)];
        }
        case "tool_execution_end":
          return toolEndLine(event, commands);
        case "auto_retry_start":
          return [
            `↻ retry ${String(event.attempt ?? "?")}/${String(event.maxAttempts ?? "?")} in ${Number(event.delayMs ?? 0) / 1000} s after: ${oneLine(piWords(text(event.errorMessage) ?? "an error"))}`,
          ];
        case "compaction_end":
          return text(event.errorMessage) ? [`! compaction: ${oneLine(text(event.errorMessage)!)}`] : [];
        default:
          return [];
      }
    },
  };
}

export const pi: AgentDefinition = {
  kind: "pi",
  title: "pi",
  program: "pi",
  package: "@mariozechner/pi-coding-agent",
  testedVersions: ["0.73.1"],
  install: "install pi (`npm install -g @mariozechner/pi-coding-agent`)",
  // `pi --version` prints "0.73.1" (on stderr when stdin is no terminal).
  version: VERSION_OPTION,
  // Each provider's own variable (pi-ai's env-api-keys.js), or `/login`'s ~/.pi/agent/auth.json, or a models.json apiKey.
  authEnv: [
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_OAUTH_TOKEN",
    "OPENAI_API_KEY",
    "GEMINI_API_KEY",
    "OPENROUTER_API_KEY",
    "GROQ_API_KEY",
    "XAI_API_KEY",
    "MISTRAL_API_KEY",
    "DEEPSEEK_API_KEY",
  ],
  configKeys: EXECUTOR_KEYS.pi,
  template: `# model = "anthropic/claude-opus-4-7"  # --model provider/id (":high" sets the thinking level); unset: your pi settings' defaultProvider/defaultModel
# isolation = "clean"            # user (default): your pi extensions, skills and saved sessions; clean: none of them (--no-session --no-extensions --no-skills --no-prompt-templates --offline)
# extra_args = ["--thinking", "high"]`,
  statusWord: "turn",
  argv({ config, isolation }) {
    const argv = ["pi", "--mode", "json"];
    if (isolation === "clean") argv.push(...PI_CLEAN_FLAGS);
    if (config.model) argv.push("--model", config.model);
    argv.push(...(config.extra_args ?? []));
    return argv;
  },
  stderrError: piStderrError,
  answer: { kind: "file" },
  events: piEvents,
};
