// A tool's input, from the command table (src/cli/commands.ts), the one place every option is
// declared: its JSON Schema for the client (names in snake_case: `max-attempts` is `max_attempts`,
// the positional `<node-id>` is `node_id`), and the same checks as the command line's, each failure
// one sentence. The SDK validates input with the zod schema it is given before a tool runs, and
// answers a mistake in zod's words, several lines under its own prefix; so the zod schema here only
// carries the JSON Schema (zod copies `.meta()` into it) and accepts any value, and toolArgs checks.
import * as z from "zod/v4";
import { camelCase, defaultOf, type AnyCommand, type OptionSpec } from "../cli/command-table.js";
import { sentence, suggestion } from "../cli/refusal-words.js";
import { UsageError } from "../errors.js";
import { jsonObject } from "../core/base/json-object.js";

/** A tool's input: the JSON Schema its zod object carries, and the check that turns what a client sent into a command's arguments. */
export interface ToolInput {
  schema: z.ZodType;
  /** The arguments as the command's handler gets them (camel-cased, defaults filled in), or a UsageError with one sentence. */
  args: (input: unknown) => Record<string, unknown>;
}

/** `max-attempts` → `max_attempts`: JSON's spelling of an option. */
const snakeCase = (name: string) => name.replace(/-/g, "_");

/** The JSON Schema of one option. */
function optionSchema(option: OptionSpec): Record<string, unknown> {
  const described = { description: option.describe };
  switch (option.type) {
    case "boolean":
      return { type: "boolean", ...described };
    case "integer":
      return {
        type: "integer",
        ...(option.min !== undefined ? { minimum: option.min } : {}),
        ...(option.default !== undefined ? { default: option.default } : {}),
        ...described,
      };
    case "string":
      if (option.multiple) return { type: "array", items: { type: "string" }, ...described };
      return {
        type: "string",
        ...(option.choices ? { enum: [...option.choices] } : {}),
        ...(option.default !== undefined ? { default: option.default } : {}),
        ...described,
      };
  }
}

/**
 * The input of the tool `tool` that does what `spec` does: its options except `omit` (what only a
 * terminal needs: --json, --open, …) and its positional argument.
 */
export function toolInput(tool: string, spec: AnyCommand, omit: readonly string[] = []): ToolInput {
  const options = Object.entries(spec.options).filter(([name]) => !omit.includes(name));
  const properties: Record<string, z.ZodType> = {};
  const required: string[] = [];
  const positional = spec.positional;
  if (positional) {
    properties[snakeCase(positional.name)] = z.unknown().optional().meta({ type: "string", description: positional.describe });
    if (positional.required) required.push(snakeCase(positional.name));
  }
  for (const [name, option] of options) properties[snakeCase(name)] = z.unknown().optional().meta(optionSchema(option));
  const schema = z.looseObject(properties).meta({ additionalProperties: false, ...(required.length > 0 ? { required } : {}) });
  const names = Object.keys(properties);

  const args = (input: unknown): Record<string, unknown> => {
    const given = jsonObject(input) ?? {};
    const unknown = Object.keys(given).find((key) => !names.includes(key));
    if (unknown !== undefined)
      throw new UsageError(
        `The ${tool} tool has no argument \`${unknown}\`${suggestion(unknown, names, (name) => `\`${name}\``)}; ${names.length > 0 ? `its arguments are ${names.join(", ")}` : "it takes none"}.`,
      );
    const out: Record<string, unknown> = {};
    if (positional) {
      const key = snakeCase(positional.name);
      const value = given[key];
      if (value === undefined) {
        if (positional.required) throw new UsageError(`The ${tool} tool needs \`${key}\`: ${positional.describe}.`);
      } else {
        if (typeof value !== "string") throw new UsageError(`\`${key}\` must be a string, not ${JSON.stringify(value)}.`);
        const problem = positional.check?.(value);
        if (problem !== undefined) throw new UsageError(sentence(problem));
        out[camelCase(positional.name)] = value;
      }
    }
    for (const [name, option] of options) {
      const value = given[snakeCase(name)];
      const fallback = defaultOf(option);
      if (value === undefined) {
        if (fallback !== undefined) out[camelCase(name)] = fallback;
        continue;
      }
      out[camelCase(name)] = checkValue(snakeCase(name), option, value);
    }
    return out;
  };
  return { schema, args };
}

/** A value a client gave for an option, as the command line would take it; else one sentence naming the argument and what it may be. */
function checkValue(key: string, option: OptionSpec, value: unknown): unknown {
  const wrong = (what: string) => new UsageError(`\`${key}\` must be ${what}, not ${JSON.stringify(value)}.`);
  switch (option.type) {
    case "boolean":
      if (typeof value !== "boolean") throw wrong("true or false");
      return value;
    case "integer":
      if (typeof value !== "number" || !Number.isSafeInteger(value) || value < (option.min ?? Number.MIN_SAFE_INTEGER))
        throw wrong(`a whole number${option.min !== undefined ? ` of at least ${option.min}` : ""}`);
      return value;
    case "string": {
      if (option.multiple) {
        if (!Array.isArray(value) || !value.every((item) => typeof item === "string")) throw wrong("an array of strings");
        for (const item of value) checkString(option, item);
        return value;
      }
      if (typeof value !== "string") throw wrong("a string");
      checkString(option, value);
      if (option.choices && !option.choices.includes(value)) throw wrong(`one of ${option.choices.join(", ")}`);
      return value;
    }
  }
}

function checkString(option: OptionSpec, value: string): void {
  const problem = option.type === "string" ? option.check?.(value) : undefined;
  if (problem !== undefined) throw new UsageError(sentence(problem));
}
