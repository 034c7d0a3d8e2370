// Configuration (.runner/state/config.toml, CONTRACT §5): parse, check against schemas/config/v1,
// and fill the defaults.
import { parse as parseToml, TomlError } from "smol-toml";
import type { ExecutorConfig, RunnerConfig } from "../../schemas/types.generated.js";
import { EXECUTOR_KEYS, type ExecutorKind } from "./executor-kinds.js";
import type { GuardDefinition, ProtectedScripts } from "../guard/guard-definition.js";
import { JUSTFILE_NAMES } from "../guard/justfile.js";
import { LAYOUT, nodeSidecar } from "../base/layout.js";
import { pathEntryProblem } from "../guard/path-rules.js";
import type { Problem } from "../base/problems.js";
import { validateConfigSchema } from "../base/schema.js";
import { DEFAULT_TEST_PATTERNS } from "../guard/test-files.js";

export type { ExecutorKind } from "./executor-kinds.js";

export interface ResolvedConfig {
  executor: ExecutorConfig & { kind: ExecutorKind };
  guard: {
    command: string[];
    protectedPaths: string[];
    /** Globs naming the test files an iteration's record lists (src/core/guard/test-files.ts). */
    testPatterns: string[];
    /** The package.json script entries of the guard's definition (src/core/guard/guard-definition.ts), added when a step reads it from the starting commit. */
    protectedScripts?: ProtectedScripts[];
    /** Run in a clean checkout before the guard there (audit --replay, isolation = worktree). */
    setup: string[] | undefined;
    isolation: "in-place" | "worktree";
  };
  limits: {
    iterationTimeoutSeconds: number;
    maxIterations: number;
    outputCapBytes: number;
    maxRepairAttempts: number;
    /** 0: never stop for it. */
    maxStalledIterations: number;
    maxConsecutiveRunnerErrors: number;
    retryBackoffSeconds: number;
    maxLimitWaitSeconds: number;
    /** The budgets of one `runner run` (undefined: none). */
    maxRunSeconds: number | undefined;
    maxRunTokens: number | undefined;
    maxRunCostUsd: number | undefined;
  };
  hooks: {
    onIteration: string[] | undefined;
    onRunEnd: string[] | undefined;
    onStuck: string[] | undefined;
    timeoutSeconds: number;
    bell: boolean;
  };
}

export const DEFAULT_GUARD_COMMAND = ["just", "ci"];
export const CONFIG_PATH = LAYOUT.config;
/** Always protected, whatever the config says: the agent never edits the runner's own rules, nor a node's write policy. */
export const ALWAYS_PROTECTED = [CONFIG_PATH, LAYOUT.schema, LAYOUT.finished, nodeSidecar("*", "policy.json")];
/** The guard's own files (every justfile name `just` looks for), protected unless `[guard] protected_paths` says otherwise. */
export const DEFAULT_GUARD_FILES = JUSTFILE_NAMES;
const SCRIPT_FILE = /\.(sh|bash|js|mjs|cjs|ts|py|rb|pl)$/;

export const DEFAULT_LIMITS: ResolvedConfig["limits"] = {
  iterationTimeoutSeconds: 1800,
  maxIterations: 50,
  outputCapBytes: 1_048_576,
  maxRepairAttempts: 3,
  maxStalledIterations: 3,
  maxConsecutiveRunnerErrors: 3,
  retryBackoffSeconds: 30,
  maxLimitWaitSeconds: 6 * 3600,
  maxRunSeconds: undefined,
  maxRunTokens: undefined,
  maxRunCostUsd: undefined,
};

export const DEFAULT_HOOK_TIMEOUT_SECONDS = 30;

/** The `[executor]` keys each kind takes: an agent's are declared in its module (src/agents/). */
function kindKeys(kind: ExecutorKind): readonly string[] {
  return ["kind", ...EXECUTOR_KEYS[kind]];
}

export type ConfigResult = { ok: true; config: ResolvedConfig } | { ok: false; problems: Problem[] };

/** Parses a config file's text and resolves it. */
export function parseConfig(text: string): ConfigResult {
  let raw: unknown;
  try {
    raw = parseToml(text);
  } catch (error) {
    if (error instanceof TomlError) {
      const first = error.message.split("\n")[0]!.replace(/^Invalid TOML document: /, "");
      return { ok: false, problems: [{ path: "$", message: `is not valid TOML (line ${error.line}, column ${error.column}: ${first})` }] };
    }
    throw error;
  }
  return resolveConfig(raw);
}

/** Checks a parsed config against the schema and the rules the schema cannot say, then fills defaults. */
export function resolveConfig(raw: unknown): ConfigResult {
  const schema = validateConfigSchema(raw);
  if (!schema.ok) return { ok: false, problems: schema.problems };
  const config: RunnerConfig = schema.value;
  const problems: Problem[] = [];
  const executor = config.executor ?? {};
  const kind: ExecutorKind = executor.kind ?? "command";
  if (kind === "command" && executor.command === undefined) {
    problems.push({ path: "$.executor.command", message: 'is required when kind = "command": give the agent\'s argv, e.g. ["bash", "agent.sh"]' });
  }
  for (const key of Object.keys(executor)) {
    if (!kindKeys(kind).includes(key)) {
      problems.push({ path: `$.executor.${key}`, message: `does not apply to kind = "${kind}"; remove it or change the kind` });
    }
  }
  const protectedPaths = config.guard?.protected_paths;
  protectedPaths?.forEach((entry, i) => {
    const problem = pathEntryProblem(entry);
    if (problem) problems.push({ path: `$.guard.protected_paths[${i}]`, message: problem });
  });
  if (problems.length > 0) return { ok: false, problems };
  const guardCommand = config.guard?.command ?? DEFAULT_GUARD_COMMAND;
  return {
    ok: true,
    config: {
      executor: { ...executor, kind },
      guard: {
        command: [...guardCommand],
        protectedPaths: unique([...ALWAYS_PROTECTED, ...(protectedPaths ?? defaultGuardFiles(guardCommand))]),
        setup: config.guard?.setup ? [...config.guard.setup] : undefined,
        testPatterns: [...(config.guard?.test_patterns ?? DEFAULT_TEST_PATTERNS)],
        isolation: config.guard?.isolation ?? "in-place",
      },
      limits: {
        iterationTimeoutSeconds: config.limits?.iteration_timeout_seconds ?? DEFAULT_LIMITS.iterationTimeoutSeconds,
        maxIterations: config.limits?.max_iterations ?? DEFAULT_LIMITS.maxIterations,
        outputCapBytes: config.limits?.output_cap_bytes ?? DEFAULT_LIMITS.outputCapBytes,
        maxRepairAttempts: config.limits?.max_repair_attempts ?? DEFAULT_LIMITS.maxRepairAttempts,
        maxStalledIterations: config.limits?.max_stalled_iterations ?? DEFAULT_LIMITS.maxStalledIterations,
        maxConsecutiveRunnerErrors: config.limits?.max_consecutive_runner_errors ?? DEFAULT_LIMITS.maxConsecutiveRunnerErrors,
        retryBackoffSeconds: config.limits?.retry_backoff_seconds ?? DEFAULT_LIMITS.retryBackoffSeconds,
        maxLimitWaitSeconds: config.limits?.max_limit_wait_seconds ?? DEFAULT_LIMITS.maxLimitWaitSeconds,
        maxRunSeconds: config.limits?.max_run_seconds,
        maxRunTokens: config.limits?.max_run_tokens,
        maxRunCostUsd: config.limits?.max_run_cost_usd,
      },
      hooks: {
        onIteration: config.hooks?.on_iteration ? [...config.hooks.on_iteration] : undefined,
        onRunEnd: config.hooks?.on_run_end ? [...config.hooks.on_run_end] : undefined,
        onStuck: config.hooks?.on_stuck ? [...config.hooks.on_stuck] : undefined,
        timeoutSeconds: config.hooks?.timeout_seconds ?? DEFAULT_HOOK_TIMEOUT_SECONDS,
        bell: config.hooks?.bell ?? false,
      },
    },
  };
}

/** The justfile variants, plus any repository script the guard's argv names (`bash ci.sh`). */
function defaultGuardFiles(guardCommand: readonly string[]): string[] {
  const scripts = guardCommand.map((arg) => arg.replace(/^\.\//, "")).filter((arg) => SCRIPT_FILE.test(arg) && pathEntryProblem(arg) === undefined);
  return [...DEFAULT_GUARD_FILES, ...scripts];
}

/** The config with the guard's definition protected on top of what it names: its files whole, its script entries one by one. */
export function protectGuardDefinition(config: ResolvedConfig, definition: GuardDefinition): ResolvedConfig {
  return {
    ...config,
    guard: { ...config.guard, protectedPaths: unique([...config.guard.protectedPaths, ...definition.files]), protectedScripts: definition.scripts },
  };
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}
