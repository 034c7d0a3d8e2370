// One session of an agent CLI, the same for every agent (src/agents/<kind>.ts declares what
// differs): the argv and environment the agent's module builds, a refusal it foresees said before
// anything starts, the process run with the iteration's deadline, containment and output cap
// (src/adapters/process/process-runner.ts through runArgv), its JSON-lines stdout read as it arrives into
// readable live lines and the session's facts (src/agents/event-reader.ts), stderr passed through,
// secrets redacted from both, and the answer written to output.json by the runner when the agent's
// final event carries it (the step reads and checks output.json once, whoever wrote it:
// src/adapters/agent/agent-answer.ts).
import { readFileSync } from "node:fs";
import path from "node:path";
import { isolationOf, type AgentDefinition, type AgentSession } from "../../agents/agent.js";
import { AgentEventReader } from "../../agents/event-reader.js";
import type { AgentClock } from "../../core/agent/agent-limits.js";
import { redactSecrets } from "../../core/base/text-limits.js";
import { packageRoot } from "../../package-files.js";
import { readAgentFile, writeSafely } from "../files/safe-files.js";
import { runArgv } from "./command.js";
import type { ExecutorRequest, ExecutorResult } from "./executor.js";
import { jsonObject } from "../../core/base/json-object.js";

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
    isoSeconds: (iso) => {
      const ms = Date.parse(iso);
      return Number.isFinite(ms) ? ms / 1000 : undefined;
    },
  };
}

/**
 * The usage report an agent writes when it ends (Copilot CLI's --usage-output-file), next to
 * output.json in the iteration's folder (CONTRACT §2), which begins empty.
 */
const USAGE_REPORT_FILE = "agent-usage.json";

/** The usage report the agent wrote, as JSON: only a regular file, never through a link (the folder is in the agent's reach). */
function readUsageReport(file: string): Record<string, unknown> | undefined {
  const read = readAgentFile(file);
  if (read.kind !== "text") return undefined;
  try {
    const report: unknown = JSON.parse(read.text);
    return jsonObject(report);
  } catch {
    return undefined;
  }
}

/** The agent output schema as one line of text (it never changes while the runner runs). */
let schemaText: string | undefined;

/** Runs one session of `agent`; the result carries what its events said and its answer's text. */
export async function runAgentSession(agent: AgentDefinition, request: ExecutorRequest): Promise<ExecutorResult & { session: AgentSession }> {
  const isolation = isolationOf(request.config);
  const schemaFile = agentSchemaFile();
  const usageFile = path.join(path.dirname(request.outputFile), USAGE_REPORT_FILE);
  const argv = agent.argv({
    config: request.config,
    root: request.root,
    outputFile: request.outputFile,
    usageFile,
    schemaFile,
    // (read only by an agent that takes the schema as text, and once per process)
    get schemaText() {
      schemaText ??= JSON.stringify(JSON.parse(readFileSync(schemaFile, "utf8")));
      return schemaText;
    },
    guardCommand: request.guardCommand,
    isolation,
  });
  const env = { ...request.env, ...agent.env?.(request.config, isolation) };
  const refusal = agent.refusal?.(argv, env, process.getuid?.());
  if (refusal !== undefined) {
    const session = { agent: agent.kind, turns: 0 };
    return {
      exitCode: undefined,
      timedOut: false,
      aborted: false,
      spawnError: refusal,
      durationMs: 0,
      argv,
      tail: "",
      stderrTail: "",
      isolation,
      session,
    };
  }
  const reader = new AgentEventReader(agent, localClock(request.now));
  const show = (lines: string[]) => {
    for (const line of lines) request.onOutput?.(`${redactSecrets(line, request.secrets)}\n`, "stdout");
  };
  const result = await runArgv(
    argv,
    {
      ...request,
      env,
      // stdout is shown as readable lines made from the events, not as raw JSON (it is kept raw in the log).
      onOutput: (chunk, stream) => {
        if (stream === "stderr") request.onOutput?.(chunk, stream);
      },
      observeStdout: (chunk) => {
        show(reader.push(chunk));
        request.observeStdout?.(chunk);
      },
    },
    { throughPipe: agent.promptThroughPipe === true },
  );
  show(reader.end());
  const report = agent.usageReport ? readUsageReport(usageFile) : undefined;
  if (report) show(reader.report(report));
  // A failure the agent states on stderr only (its events said none): in its words, not as its last stderr lines.
  if (reader.session.error === undefined && result.exitCode !== undefined && result.exitCode !== 0) {
    reader.session.error = agent.stderrError?.(result.stderrTail) ?? reader.session.error;
  }
  const session = redactDeep(reader.session, request.secrets);
  const answer = agent.answer.kind === "event" ? agent.answer.from(session) : undefined;
  // The runner writes this file (not the agent): secrets are redacted like in every other log (CONTRACT §9).
  if (answer !== undefined) writeSafely(request.outputFile, redactSecrets(answer, request.secrets));
  return { ...result, isolation, session };
}
