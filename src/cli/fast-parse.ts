// The fast path of the CLI: a plain invocation (a known command, known options with valid values,
// no help) is parsed with node:util's parseArgs from the same option table yargs uses, so the
// common case never loads yargs. Anything else returns undefined and goes to yargs, which owns
// help, suggestions and every error message.
import { parseArgs, type ParseArgsConfig } from "node:util";
import { camelCase, COMMANDS, GLOBAL_OPTIONS, type CommandSpec, type OptionSpec } from "./commands.js";

export interface FastParse {
  spec: CommandSpec;
  argv: Record<string, unknown>;
}

export function fastParse(args: readonly string[]): FastParse | undefined {
  const spec = COMMANDS.find((candidate) => candidate.command === args[0]);
  if (!spec) return undefined;
  const rest = args.slice(1);
  if (rest.some((arg) => arg === "--help" || arg === "-h" || arg === "--version" || arg.startsWith("--no-"))) return undefined;
  const table: Record<string, OptionSpec> = { ...GLOBAL_OPTIONS, ...spec.options };
  const options: NonNullable<ParseArgsConfig["options"]> = {};
  for (const [name, option] of Object.entries(table)) {
    options[name] = { type: option.type === "boolean" ? "boolean" : "string", ...(name.length === 1 ? { short: name } : {}) };
  }
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: [...rest], options, strict: true, allowPositionals: false });
  } catch {
    return undefined;
  }
  const argv: Record<string, unknown> = { _: [spec.command] };
  for (const [name, option] of Object.entries(table)) {
    const raw = (parsed.values as Record<string, unknown>)[name];
    if (Array.isArray(raw)) return undefined;
    let value: unknown = raw ?? option.default;
    if (value === undefined) continue;
    if (option.type === "number" && typeof value === "string") {
      if (!/^-?[0-9]+(\.[0-9]+)?$/.test(value)) return undefined;
      value = Number(value);
    }
    if (option.choices && !option.choices.includes(String(value))) return undefined;
    argv[name] = value;
    argv[camelCase(name)] = value;
  }
  return { spec, argv };
}
