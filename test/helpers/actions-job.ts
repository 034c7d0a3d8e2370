// A GitHub Actions job, run here step by step as the Actions runner runs it: a workflow's job (its
// `if:`, env and steps) and the composite action its `uses:` names (action.yml), with `${{ }}`
// expressions, the status functions (an `if:` without one means `success() && …`), bash run steps
// (`bash --noprofile --norc -eo pipefail`, in GITHUB_WORKSPACE), and each step's outputs read from
// its GITHUB_OUTPUT file whether it succeeded or failed (actions/runner processes the file in a
// `finally`: src/Runner.Worker/ActionRunner.cs). What lives on github.com is stood in for:
// actions/checkout clones the given remote (a bare repository), setup-node is the Node these tests
// run on, actions/cache and actions/upload-artifact record what they were given. Only the subset of
// the workflow syntax and the expression language our action and its examples use is known; anything
// else is an error here, never silently skipped.
import { execa } from "execa";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parse } from "yaml";
import { tempDir } from "./sandbox.js";

type Value = string | number | boolean | null | { [key: string]: Value } | Value[];
type Context = Record<string, Value>;

export interface StepRecord {
  /** "job", or the `uses:` of the composite action the step belongs to. */
  scope: string;
  id: string;
  name: string;
  outcome: "success" | "failure" | "skipped";
  outputs: Record<string, string>;
  stdout: string;
  stderr: string;
}

export interface JobResult {
  conclusion: "success" | "failure" | "skipped";
  steps: StepRecord[];
  /** actions/upload-artifact: the name and path it was given, and whether the file was there. */
  artifacts: { name: string; path: string; exists: boolean }[];
  /** actions/cache: the key and path it was given. */
  caches: { key: string; path: string }[];
  workspace: string;
  temp: string;
}

export interface JobOptions {
  /** The workflow's YAML text and the job to run. */
  workflow: string;
  job: string;
  /** The event: its name (github.event_name) and payload (the GITHUB_EVENT_PATH file, github.event). */
  event: { name: string; payload: Record<string, unknown> };
  /** The repository's clone URL for actions/checkout (a bare repository) and its owner/name. */
  remote: string;
  repository: string;
  /** The runner machine's environment (PATH, HOME, git's settings …). */
  env: Record<string, string>;
  secrets?: Record<string, string>;
  vars?: Record<string, string>;
  apiUrl?: string;
  /** `uses:` references served from a local folder holding action.yml (e.g. "OWNER/runner@v1"). */
  actions: Record<string, string>;
  /** Steps (by name) not run but counted as succeeded, e.g. an install whose result is already on PATH. */
  standIns?: string[];
  /** Stop after the step of this name has run. */
  stopAfter?: string;
  stepTimeoutMs?: number;
}

interface Job {
  if?: string | boolean;
  env?: Record<string, unknown>;
  steps?: Step[];
}

interface Step {
  id?: string;
  name?: string;
  if?: string | boolean;
  uses?: string;
  run?: string;
  shell?: string;
  with?: Record<string, unknown>;
  env?: Record<string, unknown>;
  "timeout-minutes"?: number;
}

const STEP_KEYS = new Set(["id", "name", "if", "uses", "run", "shell", "with", "env", "timeout-minutes"]);
const JOB_KEYS = new Set(["name", "if", "runs-on", "permissions", "concurrency", "timeout-minutes", "env", "steps"]);

class Stop extends Error {}

/** Runs one job of a workflow; see the file's comment for what is real and what is stood in for. */
export async function runJob(options: JobOptions): Promise<JobResult> {
  const workflow = parse(options.workflow) as { env?: Record<string, unknown>; jobs: Record<string, Job> };
  const job = workflow.jobs[options.job];
  if (!job) throw new Error(`the workflow has no job ${options.job}`);
  for (const key of Object.keys(job)) if (!JOB_KEYS.has(key)) throw new Error(`job key ${key} is not known here`);
  const root = tempDir("runner-actions-job-");
  const workspace = path.join(root, "work", options.repository.split("/")[1]!);
  const temp = path.join(root, "temp");
  mkdirSync(workspace, { recursive: true });
  mkdirSync(temp, { recursive: true });
  const eventPath = path.join(root, "event.json");
  writeFileSync(eventPath, JSON.stringify(options.event.payload));
  const token = options.secrets?.GITHUB_TOKEN ?? "";
  const github: Context = {
    event: options.event.payload as Value,
    event_name: options.event.name,
    event_path: eventPath,
    repository: options.repository,
    repository_owner: options.repository.split("/")[0]!,
    workspace,
    token,
    run_id: "4242",
    api_url: options.apiUrl ?? "https://api.github.com",
  };
  const machineEnv: Record<string, string> = {
    ...options.env,
    CI: "true",
    GITHUB_ACTIONS: "true",
    GITHUB_WORKSPACE: workspace,
    GITHUB_EVENT_PATH: eventPath,
    GITHUB_EVENT_NAME: options.event.name,
    GITHUB_REPOSITORY: options.repository,
    GITHUB_RUN_ID: "4242",
    GITHUB_API_URL: options.apiUrl ?? "https://api.github.com",
    RUNNER_TEMP: temp,
    RUNNER_OS: "Linux",
  };
  const result: JobResult = { conclusion: "success", steps: [], artifacts: [], caches: [], workspace, temp };
  const base: Context = { github, runner: { temp, os: "Linux" }, secrets: options.secrets ?? {}, vars: options.vars ?? {} };
  const jobEnv = { ...stringMap(workflow.env, base), ...stringMap(job.env, base) };
  if (!condition(job.if, { ...base, env: jobEnv }, true)) return { ...result, conclusion: "skipped" };
  let counter = 0;

  /**
   * Runs a list of steps in one scope (the job's, or a composite action's); returns whether they all
   * succeeded. Each step's env: its own over the scope's (a composite's: the env of the step that
   * uses it) over the machine's and the job's as they are at that step (GITHUB_ENV changes them).
   */
  async function runSteps(steps: Step[], scope: string, context: Context, scopeEnv: Record<string, string>, actionPath?: string): Promise<boolean> {
    let ok = true;
    const stepsContext: Record<string, Value> = {};
    context.steps = stepsContext;
    for (const step of steps) {
      for (const key of Object.keys(step)) if (!STEP_KEYS.has(key)) throw new Error(`step key ${key} is not known here`);
      const id = step.id ?? `__${++counter}`;
      const name = step.name ?? step.uses ?? String(step.run).split("\n")[0]!;
      const env = { ...machineEnv, ...jobEnv, ...scopeEnv };
      const ownEnv = { ...scopeEnv, ...stringMap(step.env, { ...context, env }) };
      const stepEnv = { ...env, ...ownEnv };
      const record: StepRecord = { scope, id, name, outcome: "skipped", outputs: {}, stdout: "", stderr: "" };
      result.steps.push(record);
      const jobOk = ok && result.conclusion === "success";
      if (condition(step.if, { ...context, env: stepEnv }, jobOk)) {
        const inputs = Object.fromEntries(Object.entries(step.with ?? {}).map(([k, v]) => [k, template(String(v), { ...context, env: stepEnv })]));
        const succeeded = await runStep(step, record, inputs, { ...context, env: stepEnv }, stepEnv, ownEnv, actionPath);
        record.outcome = succeeded ? "success" : "failure";
        if (!succeeded) {
          ok = false;
          result.conclusion = "failure";
        }
      }
      stepsContext[id] = { outputs: record.outputs, outcome: record.outcome, conclusion: record.outcome };
      if (options.stopAfter === name) throw new Stop();
    }
    return ok;
  }

  async function runStep(
    step: Step,
    record: StepRecord,
    inputs: Record<string, string>,
    context: Context,
    env: Record<string, string>,
    ownEnv: Record<string, string>,
    actionPath?: string,
  ): Promise<boolean> {
    if (options.standIns?.includes(record.name)) return true;
    if (step.run !== undefined) return runShell(template(step.run, context), record, env, actionPath);
    const uses = String(step.uses);
    const local = options.actions[uses];
    if (local) return runComposite(uses, local, inputs, record, ownEnv);
    const [action] = uses.split("@");
    switch (action) {
      case "actions/checkout": {
        const depth = inputs["fetch-depth"] === "0" ? [] : ["--depth", inputs["fetch-depth"] || "1"];
        const cloned = await execa("git", ["clone", "-q", ...depth, `file://${options.remote}`, workspace], { env, reject: false });
        record.stderr = String(cloned.stderr);
        return cloned.exitCode === 0;
      }
      case "actions/setup-node":
        return true;
      case "actions/cache":
        result.caches.push({ key: inputs.key ?? "", path: inputs.path ?? "" });
        return true;
      case "actions/upload-artifact":
        result.artifacts.push({ name: inputs.name ?? "", path: inputs.path ?? "", exists: existsSync(inputs.path ?? "") });
        return true;
      default:
        throw new Error(`the action ${uses} is not stood in for here`);
    }
  }

  async function runShell(script: string, record: StepRecord, env: Record<string, string>, actionPath?: string): Promise<boolean> {
    const files = path.join(root, `step-${++counter}`);
    mkdirSync(files);
    const scriptFile = path.join(files, "script.sh");
    writeFileSync(scriptFile, script);
    const output = path.join(files, "output");
    const envFile = path.join(files, "env");
    const pathFile = path.join(files, "path");
    for (const file of [output, envFile, pathFile]) writeFileSync(file, "");
    const ran = await execa("bash", ["--noprofile", "--norc", "-eo", "pipefail", scriptFile], {
      cwd: workspace,
      env: {
        ...env,
        GITHUB_OUTPUT: output,
        GITHUB_ENV: envFile,
        GITHUB_PATH: pathFile,
        GITHUB_STEP_SUMMARY: path.join(root, "summary.md"),
        ...(actionPath ? { GITHUB_ACTION_PATH: actionPath } : {}),
      },
      extendEnv: false,
      reject: false,
      timeout: options.stepTimeoutMs ?? 300_000,
    });
    record.stdout = String(ran.stdout);
    record.stderr = String(ran.stderr);
    Object.assign(record.outputs, fileCommands(readFileSync(output, "utf8")));
    Object.assign(jobEnv, fileCommands(readFileSync(envFile, "utf8")));
    const added = readFileSync(pathFile, "utf8").split("\n").filter(Boolean);
    if (added.length > 0) machineEnv.PATH = [...added.reverse(), machineEnv.PATH].join(":");
    return ran.exitCode === 0;
  }

  async function runComposite(
    uses: string,
    folder: string,
    given: Record<string, string>,
    record: StepRecord,
    ownEnv: Record<string, string>,
  ): Promise<boolean> {
    const action = parse(readFileSync(path.join(folder, "action.yml"), "utf8")) as {
      inputs?: Record<string, { default?: string; required?: boolean }>;
      outputs?: Record<string, { value: string }>;
      runs: { using: string; steps: Step[] };
    };
    if (action.runs.using !== "composite") throw new Error(`${uses} is not a composite action`);
    for (const name of Object.keys(given)) if (!action.inputs?.[name]) throw new Error(`${uses} has no input ${name}`);
    const context: Context = { ...base, github: { ...github, action_path: folder } };
    const env = { ...machineEnv, ...jobEnv, ...ownEnv };
    const inputs: Record<string, string> = {};
    for (const [name, spec] of Object.entries(action.inputs ?? {}))
      inputs[name] = given[name] ?? template(String(spec.default ?? ""), { ...context, env });
    context.inputs = inputs;
    let ok: boolean;
    try {
      ok = await runSteps(action.runs.steps, uses, context, ownEnv, folder);
    } finally {
      for (const [name, spec] of Object.entries(action.outputs ?? {})) record.outputs[name] = template(spec.value, { ...context, env });
    }
    return ok;
  }

  try {
    await runSteps(job.steps ?? [], "job", { ...base }, {});
  } catch (error) {
    if (!(error instanceof Stop)) throw error;
  }
  return result;
}

/** name=value lines and name<<DELIMITER blocks (GITHUB_OUTPUT, GITHUB_ENV). */
export function fileCommands(text: string): Record<string, string> {
  const values: Record<string, string> = {};
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const heredoc = /^([^=<]+)<<(.+)$/.exec(line);
    if (heredoc) {
      const end = lines.indexOf(heredoc[2]!, i + 1);
      if (end < 0) throw new Error(`no end of ${heredoc[1]}'s value (${heredoc[2]})`);
      values[heredoc[1]!] = lines.slice(i + 1, end).join("\n");
      i = end;
    } else if (line.includes("=")) values[line.slice(0, line.indexOf("="))] = line.slice(line.indexOf("=") + 1);
  }
  return values;
}

function stringMap(map: Record<string, unknown> | undefined, context: Context): Record<string, string> {
  return Object.fromEntries(Object.entries(map ?? {}).map(([key, value]) => [key, template(String(value), context)]));
}

/** An `if:`: an expression (optionally inside `${{ }}`); without a status function it means `success() && (…)`. */
function condition(raw: string | boolean | undefined, context: Context, succeeded: boolean): boolean {
  if (raw === undefined) return succeeded;
  const text = String(raw)
    .trim()
    .replace(/^\$\{\{([\s\S]*)\}\}$/, "$1");
  const value = evaluate(text, context, succeeded);
  return /\b(always|success|failure|cancelled)\(\)/.test(text) ? truthy(value) : succeeded && truthy(value);
}

/** A string with `${{ expression }}` parts. */
function template(text: string, context: Context): string {
  return text.replace(/\$\{\{([\s\S]*?)\}\}/g, (_, expression: string) => show(evaluate(expression, context, true)));
}

function show(value: Value): string {
  if (value === null) return "";
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

function truthy(value: Value): boolean {
  return !(value === false || value === null || value === "" || value === 0 || Number.isNaN(value));
}

function number(value: Value): number {
  if (value === null || value === "") return 0;
  if (typeof value === "boolean") return value ? 1 : 0;
  return typeof value === "object" ? Number.NaN : Number(value);
}

/** `==` as GitHub compares: strings case-insensitively, values of different types as numbers. */
function equal(a: Value, b: Value): boolean {
  if (typeof a === "string" && typeof b === "string") return a.toLowerCase() === b.toLowerCase();
  if (typeof a === typeof b && typeof a !== "object") return a === b;
  if (typeof a === "object" || typeof b === "object") return a === b;
  return number(a) === number(b);
}

/** The expression language's subset: property paths, 'strings', numbers, true/false/null, ! == != && || ( ), the status functions, contains(). */
function evaluate(text: string, context: Context, succeeded: boolean): Value {
  const tokens = text.match(/\s*('(?:[^']|'')*'|==|!=|&&|\|\||[()!,]|[A-Za-z_][\w.-]*|-?\d+(?:\.\d+)?)\s*/g) ?? [];
  if (tokens.join("").trim() !== text.trim()) throw new Error(`the expression ${JSON.stringify(text)} is not understood here`);
  const list = tokens.map((token) => token.trim());
  let at = 0;
  const peek = () => list[at];
  const expect = (token: string) => {
    if (list[at++] !== token) throw new Error(`expected ${token} in ${JSON.stringify(text)}`);
  };
  const primary = (): Value => {
    const token = list[at++];
    if (token === undefined) throw new Error(`the expression ${JSON.stringify(text)} ends early`);
    if (token === "(") {
      const value = or();
      expect(")");
      return value;
    }
    if (token === "!") return !truthy(primary());
    if (token.startsWith("'")) return token.slice(1, -1).replace(/''/g, "'");
    if (/^-?\d/.test(token)) return Number(token);
    if (token === "true" || token === "false") return token === "true";
    if (token === "null") return null;
    if (peek() === "(") {
      expect("(");
      const args: Value[] = [];
      while (peek() !== ")") {
        args.push(or());
        if (peek() === ",") expect(",");
      }
      expect(")");
      if (token === "always") return true;
      if (token === "success") return succeeded;
      if (token === "failure") return !succeeded;
      if (token === "cancelled") return false;
      if (token === "contains")
        return show(args[0] ?? null)
          .toLowerCase()
          .includes(show(args[1] ?? null).toLowerCase());
      throw new Error(`the function ${token}() is not known here`);
    }
    let value: Value = context as Value;
    for (const part of token.split(".")) value = value !== null && typeof value === "object" && !Array.isArray(value) ? (value[part] ?? null) : null;
    return value;
  };
  const comparison = (): Value => {
    const left = primary();
    if (peek() === "==" || peek() === "!=") {
      const op = list[at++];
      const same = equal(left, primary());
      return op === "==" ? same : !same;
    }
    return left;
  };
  const and = (): Value => {
    let value = comparison();
    while (peek() === "&&") {
      at++;
      const right = comparison();
      value = truthy(value) ? right : value;
    }
    return value;
  };
  const or = (): Value => {
    let value = and();
    while (peek() === "||") {
      at++;
      const right = and();
      value = truthy(value) ? value : right;
    }
    return value;
  };
  const value = or();
  if (at !== list.length) throw new Error(`the expression ${JSON.stringify(text)} has more after ${list.slice(0, at).join(" ")}`);
  return value;
}
