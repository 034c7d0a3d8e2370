// kind = "claude": Claude Code in print mode (`claude -p`). Flags as documented for headless mode
// (see docs/decisions.md):
//   claude -p --output-format stream-json --verbose --json-schema '<agent output schema>'
//          --permission-mode <mode> [--allowedTools <tool> ...] [--max-turns N] [--model M] [extra_args ...]
// The prompt goes on stdin. Claude streams one JSON event per line (kept in executor.log, shown as
// live progress); the last event, `{"type":"result", ...}`, carries `structured_output`, which the
// runner writes to output.json.
import { readFileSync } from "node:fs";
import { writeSafely } from "../safe-files.js";
import type { ExecutorConfig } from "../../schemas/types.generated.js";
import { schemaFile } from "../../package-files.js";
import { redactSecrets } from "../../core/text-limits.js";
import { runArgv } from "./command.js";
import type { Executor, ExecutorResult } from "./executor.js";

export const CLAUDE_DEFAULT_PERMISSION_MODE = "acceptEdits";

/** The agent output schema as one line of JSON, for --json-schema. */
function outputSchemaText(): string {
  return JSON.stringify(JSON.parse(readFileSync(schemaFile("agent_output"), "utf8")));
}

export function claudeArgv(config: ExecutorConfig): string[] {
  const argv = [
    "claude",
    "-p",
    "--output-format",
    "stream-json",
    "--verbose",
    "--json-schema",
    outputSchemaText(),
    "--permission-mode",
    config.permission_mode ?? CLAUDE_DEFAULT_PERMISSION_MODE,
  ];
  if (config.allowed_tools && config.allowed_tools.length > 0) argv.push("--allowedTools", ...config.allowed_tools);
  if (config.max_turns !== undefined) argv.push("--max-turns", String(config.max_turns));
  if (config.model) argv.push("--model", config.model);
  argv.push(...(config.extra_args ?? []));
  return argv;
}

/** Keeps the last complete `{"type":"result"}` line of a JSON-lines stream, memory bounded. */
export class ResultLineWatcher {
  private partial = "";
  result: Record<string, unknown> | undefined;
  private static readonly MAX_LINE = 16 * 1024 * 1024;

  push(chunk: string): void {
    const lines = (this.partial + chunk).split("\n");
    this.partial = lines.pop() ?? "";
    if (this.partial.length > ResultLineWatcher.MAX_LINE) this.partial = "";
    for (const line of lines) this.consider(line);
  }

  end(): void {
    this.consider(this.partial);
    this.partial = "";
  }

  private consider(line: string): void {
    const trimmed = line.trim();
    if (!trimmed.startsWith("{") || !trimmed.includes('"result"')) return;
    try {
      const event = JSON.parse(trimmed) as Record<string, unknown>;
      if (event.type === "result") this.result = event;
    } catch {
      // not a complete JSON event
    }
  }
}

/** The agent output carried by Claude's result event, as the text of output.json. */
export function outputFromResult(result: Record<string, unknown> | undefined): string | undefined {
  if (!result) return undefined;
  const structured = result.structured_output;
  if (structured !== null && typeof structured === "object") return `${JSON.stringify(structured)}\n`;
  // Without structured output, the final message may hold the JSON answer: the whole text, the last
  // fenced block, or the object the text ends with (models often put a sentence before it).
  if (typeof result.result === "string") {
    const text = result.result.trim();
    const fenced = [...text.matchAll(/```(?:json)?\s*\n([\s\S]*?)\n?```/g)].map((match) => match[1]!);
    const braces = text.lastIndexOf("}") > text.indexOf("{") ? [text.slice(text.indexOf("{"), text.lastIndexOf("}") + 1)] : [];
    for (const candidate of [text, ...fenced.reverse(), ...braces]) {
      try {
        const value: unknown = JSON.parse(candidate);
        if (value !== null && typeof value === "object" && !Array.isArray(value)) return `${JSON.stringify(value)}\n`;
      } catch {
        // not this one
      }
    }
  }
  return undefined;
}

export const claudeExecutor: Executor = {
  async run(request): Promise<ExecutorResult> {
    const watcher = new ResultLineWatcher();
    const result = await runArgv(claudeArgv(request.config), { ...request, observeStdout: (chunk) => watcher.push(chunk) });
    watcher.end();
    const output = outputFromResult(watcher.result);
    // The runner writes this file (not the agent): secrets are redacted like in every other log (CONTRACT §9).
    if (output !== undefined) writeSafely(request.outputFile, redactSecrets(output, request.secrets));
    return result;
  },
};
