// The command line, parsed from the command table (src/cli/commands.ts) and nothing else: help,
// `--version`, and for any mistake one sentence naming the argument and what it may be.
import { parseArgs, type ParseArgsConfig } from "node:util";
import { camelCase, defaultOf, type AnyCommand, type OptionSpec, type ParsedArgs } from "./command-table.js";
import { COMMANDS, GLOBAL_OPTIONS } from "./commands.js";
import { UsageError } from "../errors.js";
import { sentence, suggestion } from "./refusal-words.js";

export type Parsed = { kind: "help"; text: string } | { kind: "version" } | { kind: "run"; spec: AnyCommand; args: ParsedArgs };

const PROGRAM = "runner";
const ABOUT = "Drives an AI coding agent through the task tree in .runner/state/tree.json, one committed iteration at a time.";

export function parseCommandLine(argv: readonly string[]): Parsed {
  const tokens = [...argv];
  // The command is the first argument that is neither an option nor the value of -C.
  let commandAt = -1;
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token === "--") break;
    if (token === "-C") i += 1;
    else if (!token.startsWith("-")) {
      commandAt = i;
      break;
    }
  }
  const wantsHelp = tokens.some((token) => token === "--help" || token === "-h");
  if (commandAt < 0) {
    if (tokens.includes("--version") || tokens.includes("-V") || tokens.includes("-v")) return { kind: "version" };
    const unknown = tokens.find((token) => token.startsWith("-") && !["--help", "-h", "--debug", "-C"].includes(token) && !token.startsWith("-C"));
    if (unknown && !wantsHelp)
      throw new UsageError(`Unknown option ${unknown}; name a command first (${COMMANDS.map((c) => c.name).join(", ")}). See \`${PROGRAM} --help\`.`);
    return { kind: "help", text: programHelp() };
  }
  // `runner help [command]` is `runner [command] --help`.
  const asksHelp = tokens[commandAt] === "help";
  const helpFor = asksHelp ? tokens.slice(commandAt + 1).find((token) => !token.startsWith("-")) : undefined;
  if (asksHelp && helpFor === undefined) return { kind: "help", text: programHelp() };
  const name = helpFor ?? tokens[commandAt]!;
  const spec = COMMANDS.find((candidate) => candidate.name === name);
  if (!spec) {
    throw new UsageError(
      `Unknown command "${name}"${suggestion(
        name,
        COMMANDS.map((c) => c.name),
      )}; the commands are ${COMMANDS.map((c) => c.name).join(", ")}. See \`${PROGRAM} --help\`.`,
    );
  }
  if (wantsHelp || asksHelp) return { kind: "help", text: commandHelp(spec) };
  tokens.splice(commandAt, 1);
  return { kind: "run", spec, args: parseOptions(spec, tokens) };
}

function parseOptions(spec: AnyCommand, argv: string[]): ParsedArgs {
  const table: Record<string, OptionSpec> = { ...GLOBAL_OPTIONS, ...spec.options };
  const values: Record<string, unknown> = {};
  const positionals: string[] = [];
  const where = `\`${PROGRAM} ${spec.name}\``;
  // node:util's parseArgs splits the words (--name=value, -Cdir, --); the checks and their sentences are ours.
  const known: NonNullable<ParseArgsConfig["options"]> = {};
  for (const [name, option] of Object.entries(table))
    known[name] = { type: option.type === "boolean" ? "boolean" : "string", ...(name.length === 1 ? { short: name } : {}) };
  const { tokens } = parseArgs({ args: argv, options: known, strict: false, allowPositionals: true, tokens: true });
  for (const token of tokens) {
    if (token.kind === "positional") positionals.push(token.value);
    if (token.kind !== "option") continue;
    const negated = token.name.startsWith("no-") && table[token.name.slice(3)]?.type === "boolean";
    const name = negated ? token.name.slice(3) : token.name;
    const option = table[name];
    if (!option) {
      const names = Object.keys(spec.options).map(flag);
      const own = names.length > 0 ? `its options are ${names.join(", ")}` : "it takes no options";
      throw new UsageError(
        `Unknown option ${token.rawName} for ${where}${suggestion(token.name, Object.keys(table), flag)}; ${own} (and -C <dir>, --debug). See \`${PROGRAM} ${spec.name} --help\`.`,
      );
    }
    if (option.type === "boolean") {
      if (token.value !== undefined)
        throw new UsageError(`${flag(name)} takes no value (given "${token.value}"). See \`${PROGRAM} ${spec.name} --help\`.`);
      values[name] = !negated;
      continue;
    }
    // (a value that looks like another option is a missing value: `--run-id --json`)
    const value = token.value;
    if (value === undefined || (!token.inlineValue && value.startsWith("-") && value !== "-" && !/^-[0-9]/.test(value))) {
      throw new UsageError(`${flag(name)} needs a value (${flag(name)} <${valueName(option)}>). See \`${PROGRAM} ${spec.name} --help\`.`);
    }
    const checked = checkValue(name, option, value, spec.name);
    values[name] = option.type === "string" && option.multiple ? [...((values[name] as string[] | undefined) ?? []), checked] : checked;
  }
  if (positionals.length > (spec.positional ? 1 : 0)) {
    const extra = positionals[spec.positional ? 1 : 0]!;
    throw new UsageError(
      `Unexpected argument "${extra}" for ${where}; ${spec.positional ? `it takes one <${spec.positional.name}>` : "it takes none"}. See \`${PROGRAM} ${spec.name} --help\`.`,
    );
  }
  const args: Record<string, unknown> = {};
  for (const [name, option] of Object.entries(table)) {
    const value = values[name] ?? defaultOf(option);
    if (value !== undefined) args[name.length === 1 ? name : camelCase(name)] = value;
  }
  if (spec.positional) {
    if (positionals[0] === undefined && spec.positional.required)
      throw new UsageError(`${where} needs <${spec.positional.name}>: ${spec.positional.describe}. See \`${PROGRAM} ${spec.name} --help\`.`);
    if (positionals[0] !== undefined) {
      const problem = spec.positional.check?.(positionals[0]);
      if (problem !== undefined) throw new UsageError(sentence(problem));
      args[camelCase(spec.positional.name)] = positionals[0];
    }
  }
  return args as ParsedArgs;
}

function checkValue(name: string, option: OptionSpec, value: string, command: string): string | number {
  const help = `See \`${PROGRAM} ${command} --help\`.`;
  if (option.type === "integer") {
    const min = option.min ?? Number.MIN_SAFE_INTEGER;
    const number = /^-?[0-9]+$/.test(value) ? Number(value) : Number.NaN;
    if (!Number.isSafeInteger(number) || number < min) {
      throw new UsageError(
        `${flag(name)} must be a whole number${option.min !== undefined ? ` of at least ${option.min}` : ""}, not "${value}". ${help}`,
      );
    }
    return number;
  }
  const problem = option.type === "string" ? option.check?.(value) : undefined;
  if (problem !== undefined) throw new UsageError(sentence(problem));
  if (option.type === "string" && !option.multiple && option.choices && !option.choices.includes(value)) {
    throw new UsageError(`${flag(name)} must be one of ${option.choices.join(", ")}, not "${value}"${suggestion(value, option.choices)}. ${help}`);
  }
  return value;
}

const flag = (name: string) => (name.length === 1 ? `-${name}` : `--${name}`);
const valueName = (option: OptionSpec) =>
  option.type === "boolean"
    ? ""
    : option.type === "string" && !option.multiple && option.choices
      ? option.choices.join("|")
      : (option.value ?? option.type);

function optionLines(options: Record<string, OptionSpec>, extra: (readonly [string, string])[] = []): string[] {
  const rows = Object.entries(options).map(([name, option]) => {
    const left = option.type === "boolean" ? flag(name) : `${flag(name)} <${valueName(option)}>`;
    const fallback =
      option.type === "string" && option.multiple
        ? " (may be given more than once)"
        : option.type !== "boolean" && option.default !== undefined
          ? ` (default: ${option.default})`
          : "";
    return [left, `${option.describe}${fallback}`] as const;
  });
  rows.push(...extra);
  const width = Math.max(...rows.map(([left]) => left.length));
  return rows.map(([left, right]) => `  ${left.padEnd(width)}  ${right}`);
}

export function programHelp(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    `Usage: ${PROGRAM} <command> [options]`,
    "",
    ABOUT,
    "",
    "Commands:",
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.describe}`),
    "",
    "Options of every command:",
    ...optionLines(GLOBAL_OPTIONS, [
      ["--help, -h", "Show help (of a command: runner <command> --help, or runner help <command>)"],
      ["--version, -v", "Show the runner's version"],
    ]),
    "",
  ].join("\n");
}

export function commandHelp(spec: AnyCommand): string {
  const positional = spec.positional ? (spec.positional.required ? ` <${spec.positional.name}>` : ` [${spec.positional.name}]`) : "";
  const own = Object.keys(spec.options).length > 0 ? ["", "Options:", ...optionLines(spec.options)] : [];
  return [
    `Usage: ${PROGRAM} ${spec.name}${positional} [options]`,
    "",
    spec.describe,
    ...(spec.positional ? ["", `  <${spec.positional.name}>  ${spec.positional.describe}`] : []),
    ...own,
    "",
    "Options of every command:",
    ...optionLines(GLOBAL_OPTIONS),
    "",
  ].join("\n");
}
