// What the Codex and Claude executors share: the agent's JSON-lines stdout read as it arrives
// (src/core/agent-events.ts) into readable live lines and the session's facts, stderr passed
// through, secrets redacted from both; and the agent output schema file they are given.
import path from "node:path";
import { AgentEventReader, type AgentName, type AgentSession } from "../../core/agent-events.js";
import type { AgentClock } from "../../core/agent-limits.js";
import { redactSecrets } from "../../core/text-limits.js";
import { packageRoot } from "../../package-files.js";
import { runArgv } from "./command.js";
import type { ExecutorRequest, ExecutorResult } from "./executor.js";

/**
 * The agent output schema as the agents get it, absolute (Codex resolves a relative path against
 * its own cwd, not -C): generated from schemas/agent_output/v1.schema.json without `$schema` and
 * `$id` by scripts/gen-schemas.mjs.
 */
export function agentSchemaFile(): string {
  return path.join(packageRoot(), "schemas", "agent_output", "v1.agent.json");
}

/** Every string in a JSON-like value with the secrets replaced. */
function redactDeep<T>(value: T, secrets: readonly string[]): T {
  if (typeof value === "string") return redactSecrets(value, secrets) as T;
  if (Array.isArray(value)) return value.map((item: unknown) => redactDeep(item, secrets)) as T;
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, redactDeep(item, secrets)])) as T;
  }
  return value;
}

/** Stated reset times in this machine's time zone (the agents run here too); "today" by the runner's clock. */
export function localClock(now: () => number): AgentClock {
  return {
    localTime({ date, hours, minutes }) {
      const today = new Date(now());
      const at = date
        ? new Date(date.year, date.month - 1, date.day, hours, minutes)
        : new Date(today.getFullYear(), today.getMonth(), today.getDate(), hours, minutes);
      return Number.isNaN(at.getTime()) ? undefined : at.toISOString();
    },
    epochSeconds: (seconds) => new Date(seconds * 1000).toISOString(),
  };
}

/** Runs an agent CLI whose stdout is JSON lines; the result carries its session. */
export async function runAgentCli(agent: AgentName, argv: string[], request: ExecutorRequest): Promise<ExecutorResult & { session: AgentSession }> {
  const reader = new AgentEventReader(agent, localClock(request.now));
  const show = (lines: string[]) => {
    for (const line of lines) request.onOutput?.(`${redactSecrets(line, request.secrets)}\n`, "stdout");
  };
  const result = await runArgv(argv, {
    ...request,
    // stdout is shown as readable lines made from the events, not as raw JSON (it is kept raw in the log).
    onOutput: (chunk, stream) => {
      if (stream === "stderr") request.onOutput?.(chunk, stream);
    },
    observeStdout: (chunk) => {
      show(reader.push(chunk));
      request.observeStdout?.(chunk);
    },
  });
  show(reader.end());
  return { ...result, session: redactDeep(reader.session, request.secrets) };
}

/** `isolation` as configured; "user" when unset (docs/decisions.md). */
export function isolationOf(request: ExecutorRequest): "user" | "clean" {
  return request.config.isolation ?? "user";
}
