// Schema validation against schemas/*/v1.schema.json through ajv's precompiled standalone code
// (src/schemas/validators.generated.ts), with each ajv error turned into a readable Problem.
import {
  validateAgentOutput as agentOutputValidator,
  validateNodePolicy as nodePolicyValidator,
  validateRunnerConfig as runnerConfigValidator,
  validateTaskTree as taskTreeValidator,
} from "../../schemas/validators.generated.js";
import type { AgentOutput, NodePolicy, RunnerConfig, TaskTree } from "../../schemas/types.generated.js";
import { childPath, pointerToPath, type Problem } from "./problems.js";

interface AjvError {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
}
type CompiledValidator = ((data: unknown) => boolean) & { errors?: AjvError[] | null };

export type SchemaResult<T> = { ok: true; value: T } | { ok: false; problems: Problem[] };

function describeType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "number" && !Number.isInteger(value)) return `the number ${value}`;
  if (typeof value === "string") return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  if (typeof value === "object") return "an object";
  return `${typeof value} ${String(value)}`;
}

function valueAt(data: unknown, pointer: string): unknown {
  if (pointer === "") return data;
  let current: unknown = data;
  for (const raw of pointer.slice(1).split("/")) {
    const step = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (current === null || typeof current !== "object") return undefined;
    current = (current as Record<string, unknown>)[step];
  }
  return current;
}

const TYPE_WORDS: Record<string, string> = {
  integer: "an integer",
  number: "a number",
  string: "a string",
  boolean: "true or false",
  array: "an array",
  object: "an object",
};

/** Explains a failed `pattern` rule in words, given the offending value. */
type PatternHelp = Record<string, (value: unknown) => string>;

/** One readable sentence for one ajv error. */
function toProblem(error: AjvError, data: unknown, patternHelp: PatternHelp): Problem {
  const path = pointerToPath(error.instancePath);
  const value = valueAt(data, error.instancePath);
  // The key that names the value: `id` for /root/id, `config_overrides` for /executor/config_overrides/0.
  const field = [...error.instancePath.split("/")].reverse().find((step) => !/^[0-9]+$/.test(step)) ?? "";
  switch (error.keyword) {
    case "additionalProperties": {
      const key = String(error.params.additionalProperty);
      return { path: childPath(path, key), message: `unexpected key ${JSON.stringify(key)}; remove it (extra keys are not allowed)` };
    }
    case "required":
      return { path, message: `missing key ${JSON.stringify(String(error.params.missingProperty))}` };
    case "type": {
      const expected = String(error.params.type);
      return { path, message: `must be ${TYPE_WORDS[expected] ?? expected}, not ${describeType(value)}` };
    }
    case "const":
      return { path, message: `must be ${JSON.stringify(error.params.allowedValue)}, not ${JSON.stringify(value)}` };
    case "enum":
      return {
        path,
        message: `must be one of ${(error.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(", ")}, not ${JSON.stringify(value)}`,
      };
    case "pattern":
      return { path, message: patternHelp[field]?.(value) ?? `${JSON.stringify(value)} does not match ${String(error.params.pattern)}` };
    case "minLength":
      return { path, message: "must not be empty" };
    case "minItems":
      return { path, message: `must have at least ${String(error.params.limit)} item(s)` };
    case "minimum":
    case "maximum":
      return { path, message: `must be ${error.keyword === "minimum" ? "at least" : "at most"} ${String(error.params.limit)}, not ${String(value)}` };
    default:
      return { path, message: error.message ?? `fails the ${error.keyword} rule` };
  }
}

function run<T>(validator: CompiledValidator, data: unknown, patternHelp: PatternHelp = {}): SchemaResult<T> {
  if (validator(data)) return { ok: true, value: data as T };
  const errors = validator.errors ?? [];
  const problems: Problem[] = [];
  const seen = new Set<string>();
  for (const error of errors) {
    const problem = toProblem(error, data, patternHelp);
    const key = `${problem.path}\u0000${problem.message}`;
    if (!seen.has(key)) {
      seen.add(key);
      problems.push(problem);
    }
  }
  return { ok: false, problems };
}

export const ID_RULE = "an id is 1 to 128 letters, digits, '.', '_' or '-', starting with a letter or digit";

export function validateTreeSchema(data: unknown): SchemaResult<TaskTree> {
  return run<TaskTree>(taskTreeValidator as CompiledValidator, data, {
    id: (value) => `${JSON.stringify(value)} is not a valid id: ${ID_RULE}`,
  });
}

export function validateAgentOutputSchema(data: unknown): SchemaResult<AgentOutput> {
  return run<AgentOutput>(agentOutputValidator as CompiledValidator, data);
}

export function validateConfigSchema(data: unknown): SchemaResult<RunnerConfig> {
  return run<RunnerConfig>(runnerConfigValidator as CompiledValidator, data, {
    config_overrides: (value) => `${JSON.stringify(value)} must look like "key=value"`,
  });
}

export function validatePolicySchema(data: unknown): SchemaResult<NodePolicy> {
  return run<NodePolicy>(nodePolicyValidator as CompiledValidator, data);
}
