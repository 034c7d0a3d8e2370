// kind = "claude": Claude Code in print mode (`claude -p`), as Claude Code 2.1.330 takes it
// (docs/agents.md, docs/decisions.md):
//   claude -p --output-format stream-json --verbose --json-schema '<agent output schema>'
//          --permission-mode <mode> --allowedTools <guard rule> [<tool> ...]
//          [--setting-sources project --strict-mcp-config --no-session-persistence]
//          [--max-turns N] [--max-budget-usd X] [--model M] [extra_args ...]
// The schema is schemas/agent_output/v1.agent.json (Claude refuses `$schema`/`$id`). The guard rule
// is `Bash(<guard command>:*)`: in print mode acceptEdits lets Claude edit files but denies every
// command no rule allows, and the agent must be able to run the guard itself. The isolation flags
// (and CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1) come with isolation = "clean". The prompt goes on
// stdin. Claude streams one JSON event per line (kept in executor.log, shown as live lines); the
// last event, `{"type":"result", ...}`, carries `structured_output`, which the runner writes to
// output.json.
import { readFileSync } from "node:fs";
import { writeSafely } from "../safe-files.js";
import type { ExecutorConfig } from "../../schemas/types.generated.js";
import { redactSecrets } from "../../core/text-limits.js";
import { agentSchemaFile, isolationOf, runAgentCli } from "./agent-cli.js";
import type { Executor, ExecutorResult } from "./executor.js";

export const CLAUDE_DEFAULT_PERMISSION_MODE = "acceptEdits";

/** The agent output schema as one line of JSON, for --json-schema. */
function outputSchemaText(): string {
  return JSON.stringify(JSON.parse(readFileSync(agentSchemaFile(), "utf8")));
}

/** The permission rule that lets Claude run the guard (and any longer command starting with it). */
export function guardRule(guardCommand: readonly string[]): string {
  return `Bash(${guardCommand.join(" ")}:*)`;
}

export function claudeArgv(config: ExecutorConfig, guardCommand: readonly string[]): string[] {
  const argv = ["claude", "-p", "--output-format", "stream-json", "--verbose", "--json-schema", outputSchemaText()];
  argv.push("--permission-mode", config.permission_mode ?? CLAUDE_DEFAULT_PERMISSION_MODE);
  const rules = [...new Set([...(guardCommand.length > 0 ? [guardRule(guardCommand)] : []), ...(config.allowed_tools ?? [])])];
  if (rules.length > 0) argv.push("--allowedTools", ...rules);
  if ((config.isolation ?? "user") === "clean") argv.push("--setting-sources", "project", "--strict-mcp-config", "--no-session-persistence");
  if (config.max_turns !== undefined) argv.push("--max-turns", String(config.max_turns));
  if (config.max_budget_usd !== undefined) argv.push("--max-budget-usd", String(config.max_budget_usd));
  if (config.model) argv.push("--model", config.model);
  argv.push(...(config.extra_args ?? []));
  return argv;
}

/**
 * Claude Code refuses to skip permissions as root unless IS_SANDBOX=1 (its bundle:
 * `getuid() === 0 && IS_SANDBOX !== "1"`, unless CLAUDE_CODE_BUBBLEWRAP is set): say so before
 * starting it, rather than let it fail with "cannot be used with root/sudo privileges".
 */
export function rootRefusal(argv: readonly string[], env: Record<string, string>, uid: number | undefined): string | undefined {
  const mode = argv.lastIndexOf("--permission-mode");
  const bypass = (mode !== -1 && argv[mode + 1] === "bypassPermissions") || argv.includes("--dangerously-skip-permissions");
  if (!bypass || uid !== 0 || env.IS_SANDBOX === "1" || env.CLAUDE_CODE_BUBBLEWRAP) return undefined;
  return 'Claude Code refuses permission_mode = "bypassPermissions" when run as root unless IS_SANDBOX=1 is set (meaning the machine is a sandbox); set IS_SANDBOX=1 in the runner\'s environment or choose another permission_mode';
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
    const argv = claudeArgv(request.config, request.guardCommand);
    const isolation = isolationOf(request);
    const refusal = rootRefusal(argv, request.env, process.getuid?.());
    if (refusal !== undefined) {
      return { exitCode: undefined, timedOut: false, aborted: false, spawnError: refusal, durationMs: 0, argv, tail: "", stderrTail: "", isolation };
    }
    const env = isolation === "clean" ? { ...request.env, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1" } : request.env;
    const result = await runAgentCli("claude", argv, { ...request, env });
    const output = outputFromResult(result.session.result);
    // The runner writes this file (not the agent): secrets are redacted like in every other log (CONTRACT §9).
    if (output !== undefined) writeSafely(request.outputFile, redactSecrets(output, request.secrets));
    return { ...result, isolation };
  },
};
