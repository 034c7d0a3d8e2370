// What the runner knows about one agent CLI, declared in one module per agent (src/agents/<kind>.ts):
// how it is started (argv, prompt, output schema, permissions, isolation), how its answer is read,
// what its event stream means (live lines, usage and cost, its own errors, rate and usage limits
// with their reset times) and the facts the preflight and `runner doctor` check (program, package,
// tested versions, version command, credentials). The shared part — the process, containment, caps,
// redaction, reading the answer — is src/adapters/executors/agent-session.ts; the list of agents is
// registry.ts. Pure, like core/ (eslint.config.js): no process, no file, no clock.
import type { AgentClock, AgentLimit } from "../core/agent/agent-limits.js";
import { addUsage, type AgentUsage, type UsageTotals } from "../core/agent/agent-usage.js";
import { oneLine } from "../core/base/text-limits.js";
import type { ExecutorConfig } from "../schemas/types.generated.js";
import { isJsonObject, jsonObject } from "../core/base/json-object.js";

export type Json = Record<string, unknown>;

export type Isolation = "user" | "clean";

/** What an agent's event stream said, so far (the executor result's `session`). */
export interface AgentSession {
  /** The agent's kind ("codex", "claude", …). */
  agent: string;
  /** The agent's own id of the session (Codex `thread_id`, Claude `session_id`). */
  sessionId?: string;
  /** Model responses or steps so far (the status line names them with `statusWord`). */
  turns: number;
  /** Final usage, else the sum of what arrived so far. */
  usage?: AgentUsage;
  /** The agent's own failure message (Codex `turn.failed`, Claude's result with `is_error`). */
  error?: string;
  /** The last error event (Codex reports reconnects this way, before a turn fails). */
  lastErrorEvent?: string;
  limit?: AgentLimit;
  /** The agent's final result event, when it has one (Claude's `result`). */
  result?: Json;
}

/** Live lines whose text starts with this are the status (turns, tokens), not activity (src/agents/event-reader.ts). */
export const STATUS_PREFIX = "\u0001status ";

/** Reads one agent's events (one JSON object per stdout line); keeps what it needs between events. */
export interface AgentEventParser {
  /** The lines to show for one event; records what it says in `session`. */
  event(event: Json, session: AgentSession): string[];
}

/** What an argv is built from. */
export interface AgentArgvInput {
  config: ExecutorConfig;
  /** The repository root (the agent's working directory). */
  root: string;
  /** The iteration's output.json (absolute). */
  outputFile: string;
  /** The file an agent writes its usage report to, next to output.json (absolute; read back through `usageReport`). */
  usageFile: string;
  /** The agent output schema file (absolute), and its text as one line of JSON. */
  schemaFile: string;
  schemaText: string;
  /** The guard's argv: the agent must be allowed to run it itself. */
  guardCommand: readonly string[];
  isolation: Isolation;
}

/**
 * How the structured answer reaches output.json.
 * - "flag": the agent writes it itself, shaped by the schema it was given by a flag (Codex
 *   --output-schema with --output-last-message).
 * - "event": the agent's final event carries it (Claude's `structured_output`); the runner writes it.
 * - "file": the prompt asks the agent to write it (RUNNER_OUTPUT_FILE); read and validated the same way.
 */
export type AnswerMode = { kind: "flag" } | { kind: "file" } | { kind: "event"; from(session: AgentSession): string | undefined };

export interface AgentDefinition {
  /** `[executor] kind`. */
  kind: string;
  /** The agent's name for people ("Codex CLI"). */
  title: string;
  /** The program started (found on PATH). */
  program: string;
  /** The npm package that installs it, and the versions the runner's tests drive (test/real-agents/versions.json). */
  package: string;
  testedVersions: readonly string[];
  /** The way out when the program is missing: how to install it. */
  install: string;
  /** `<program> <args>` prints the version; `pattern` finds it in the output. */
  version: { args: readonly string[]; pattern: RegExp };
  /** Environment variables that carry credentials for it (any one of them; it may also have its own login). */
  authEnv: readonly string[];
  /** The `[executor]` keys that apply to this kind (besides `kind`). */
  configKeys: readonly string[];
  /** The `[executor]` lines `runner init --executor <kind>` writes (after `kind = …`); every commented option must be valid. */
  template: string;
  /** What the status line counts: Codex completes steps, Claude answers turns. */
  statusWord: string;
  /** The argv, program first; the prompt goes on stdin. */
  argv(input: AgentArgvInput): string[];
  /** The prompt reaches stdin through a pipe as a shell makes one (a FIFO), not Node's socket (an agent that reads stdin only from a FIFO: Cline). */
  promptThroughPipe?: boolean;
  /** Environment variables added for the session. */
  env?(config: ExecutorConfig, isolation: Isolation): Record<string, string>;
  /** Why the agent would refuse to start with this argv and environment (one sentence with the way out), before it is started. */
  refusal?(argv: readonly string[], env: Readonly<Record<string, string>>, uid: number | undefined): string | undefined;
  answer: AnswerMode;
  /** A fresh reader of its events; reset times are turned into instants by `clock`. */
  events(clock: AgentClock): AgentEventParser;
  /** The agent's own failure message in the end of its stderr, for failures it reports there and not in its events (Copilot CLI's sign-in errors, pi's "No API key found for …"). */
  stderrError?(stderr: string): string | undefined;
  /** Reads the usage report the agent wrote to `usageFile` when it ended (Copilot CLI, whose events carry no token counts). */
  usageReport?(report: Json, session: AgentSession): void;
  /** The config with the run's remaining cost budget as the session's own cap, when the agent has one (Claude --max-budget-usd). */
  capCost?(config: ExecutorConfig, usd: number): ExecutorConfig;
}

/** The version command of every agent so far: `<program> --version`, whose first x.y.z is the version. */
export const VERSION_OPTION: AgentDefinition["version"] = { args: ["--version"], pattern: /(\d+\.\d+\.\d+(?:-[\w.]+)?)/ };

/** `value` as an object, else undefined. */
export const object = (value: unknown): Json | undefined => jsonObject(value);

/** `value` as a string, else undefined. */
export const text = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);

/** `value` as a list of objects (non-objects become undefined). */
export const objects = (value: unknown): (Json | undefined)[] => (Array.isArray(value) ? (value as unknown[]).map(object) : []);

/** `/bin/bash -c 'just ci'` → `just ci` (agents show the shell wrapper they ran). */
export function unwrapShell(command: string): string {
  const match = /^(?:\/(?:usr\/)?bin\/)?(?:ba|z)?sh -l?c (['"])([\s\S]*)\1$/.exec(command.trim());
  if (!match) return command;
  return match[1] === "'" ? match[2]!.replace(/'\\''/g, "'") : match[2]!;
}

/** The version in what `<program> --version` printed, or undefined. */
export function agentVersion(agent: AgentDefinition, output: string): string | undefined {
  return agent.version.pattern.exec(output)?.[1];
}

/** The rules an agent is allowed: the one that lets it run the guard (`rule`), then the user's `allowed_tools`, each once. */
export function allowedRules(config: ExecutorConfig, guardCommand: readonly string[], rule: (guardCommand: readonly string[]) => string): string[] {
  return [...new Set([...(guardCommand.length > 0 ? [rule(guardCommand)] : []), ...(config.allowed_tools ?? [])])];
}

/** The usage of one more model response added to the session's sum so far (before its final figures arrive). */
export function addResponseUsage(session: AgentSession, usage: Omit<UsageTotals, "cost_usd">): void {
  session.usage = { ...addUsage(session.usage, { ...usage, reasoning_tokens: null, cost_usd: null })! };
}

/** The line for the answer an agent gives through its structured-output tool: `» answer: done — <summary>`. */
export function answerLine(input: Json): string {
  const summary = text(input.summary);
  return `» answer: ${text(input.status) ?? "?"}${summary ? ` — ${oneLine(summary, 200)}` : ""}`;
}

/** The isolation the config asks for; "user" when unset (docs/decisions.md). */
export function isolationOf(config: ExecutorConfig): Isolation {
  return config.isolation ?? "user";
}

/**
 * The JSON object a final message holds, as the text of output.json: the whole text, the last
 * fenced block, or the object the text ends with (models often put a sentence before it); undefined
 * when it holds none.
 */
export function jsonAnswerIn(message: string): string | undefined {
  const answer = message.trim();
  const fenced = [...answer.matchAll(/```(?:json)?\s*\n([\s\S]*?)\n?```/g)].map((match) => match[1]!);
  const braces = answer.lastIndexOf("}") > answer.indexOf("{") ? [answer.slice(answer.indexOf("{"), answer.lastIndexOf("}") + 1)] : [];
  for (const candidate of [answer, ...fenced.reverse(), ...braces]) {
    try {
      const value: unknown = JSON.parse(candidate);
      if (isJsonObject(value)) return `${JSON.stringify(value)}\n`;
    } catch {
      // not this one
    }
  }
  return undefined;
}

/**
 * The answer of an agent whose final result event carries a structured answer (Claude Code's
 * `structured_output`, Qwen Code's `structured_result`): that object, else the JSON answer in the
 * result's text (jsonAnswerIn).
 */
export function resultAnswer(structured: unknown, resultText: unknown): string | undefined {
  if (isJsonObject(structured)) return `${JSON.stringify(structured)}\n`;
  return typeof resultText === "string" ? jsonAnswerIn(resultText) : undefined;
}

/**
 * `[executor] approval_mode` as an agent spells its auto-edit mode (Gemini CLI `auto_edit`, Qwen
 * Code `auto-edit`): either spelling is taken for both; unset, the agent's default.
 */
export function approvalModeFor(config: ExecutorConfig, autoEdit: "auto_edit" | "auto-edit", fallback: string): string {
  const mode = config.approval_mode ?? fallback;
  return mode === "auto_edit" || mode === "auto-edit" ? autoEdit : mode;
}

/**
 * A failed tool call's line, one shape for every agent that reports one: `✗` for the tool's own
 * error, `⛔` for a denial (a policy, a permission), the tool's name where the agent gives it.
 */
export function toolErrorLine(said: string | undefined, tool: { name?: string; denied?: boolean } = {}): string {
  return `${tool.denied ? "⛔" : "✗"} ${tool.name !== undefined ? `${tool.name}: ` : ""}${oneLine(said ?? "") || "tool error"}`;
}
