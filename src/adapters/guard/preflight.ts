// Preflight: what a step needs before anything is spent on it — the agent's program, the guard's
// program (with the runner's own `just` first on PATH, as the step runs it), and for a `just` guard
// a justfile that has the recipe. Each problem is one sentence with the way out. `runner doctor`
// shows these checks and more; `start`, `step`, `run` and `recheck` refuse on a problem.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { findAgent } from "../../agents/registry.js";
import type { ResolvedConfig } from "../../core/config/config.js";
import { definesRecipe, JUSTFILE_NAMES, justRecipe, summaryRecipes } from "../../core/guard/justfile.js";
import { contractSection } from "../../package-files.js";
import { withRunnerJust } from "./just-bin.js";
import { interpreterProblem, lookupProgram } from "../process/program-path.js";

export interface PreflightCheck {
  /** What was checked, e.g. "agent program". */
  name: string;
  /** What was found. */
  detail: string;
  /** A program's check: the file found (the step runs the guard by this path). */
  file?: string;
  /** The problem, one sentence with the way out; undefined when the check passed. */
  problem?: string;
  /** The check concerns the agent (a re-check, which runs no agent, skips it). */
  agent?: boolean;
}

/** The program an executor kind starts, where the config names it, and how to install it (an agent's module says). */
function agentProgram(executor: ResolvedConfig["executor"]): { program: string; where: string; install?: string } | undefined {
  if (executor.kind === "command") return { program: executor.command?.[0] ?? "", where: "[executor] command" };
  const agent = findAgent(executor.kind);
  return agent && { program: agent.program, where: `[executor] kind = "${executor.kind}"`, install: agent.install };
}

function programCheck(name: string, program: string, where: string, env: Record<string, string>, root: string, wayOut: string): PreflightCheck {
  const { file, problem } = lookupProgram(program, env, root);
  if (file !== undefined) {
    const interpreter = interpreterProblem(file);
    if (interpreter !== undefined) {
      return {
        name,
        file,
        detail: `${file} (its #! interpreter ${interpreter} is missing)`,
        problem: `The ${name} ${JSON.stringify(program)} (${where}) names an interpreter that does not exist (${interpreter}, in its #! line); fix that line or install the interpreter.`,
      };
    }
    return { name, file, detail: file };
  }
  const what = problem === "EACCES" ? "is not executable" : program.includes("/") ? "does not exist" : "is not on PATH";
  return { name, detail: `${program} (${problem})`, problem: `The ${name} ${JSON.stringify(program)} (${where}) ${what}; ${wayOut}.` };
}

/** The guard's program as the preflight found it. */
export function guardProgramOf(checks: readonly PreflightCheck[]): string | undefined {
  return checks.find((check) => check.name === "guard's program")?.file;
}

/** The checks of a step's preflight, in order. `env` is the runner's environment (its PATH). */
export function preflight(root: string, config: ResolvedConfig, env: Record<string, string>): PreflightCheck[] {
  const stepEnv = withRunnerJust(env);
  const checks: PreflightCheck[] = [];
  const agent = agentProgram(config.executor);
  if (agent) {
    const way = agent.install
      ? `${agent.install} or choose another [executor] kind in .runner/state/config.toml`
      : "fix [executor] command in .runner/state/config.toml";
    const check = programCheck("agent's program", agent.program, agent.where, stepEnv, root, way);
    const script = check.problem === undefined && config.executor.kind === "command" ? scriptCheck(config.executor.command ?? [], root) : undefined;
    checks.push({ ...(script ?? check), agent: true });
  } else {
    checks.push({ name: "agent's program", detail: "the built-in demo agent", agent: true });
  }
  const guard = config.guard.command;
  const guardCheck = programCheck(
    "guard's program",
    guard[0]!,
    "[guard] command",
    stepEnv,
    root,
    "install it or fix [guard] command in .runner/state/config.toml",
  );
  checks.push(guardCheck);
  const just = justRecipe(guard);
  if (
    just.isJust &&
    guardCheck.problem === undefined &&
    !guard.some((arg) => arg === "-f" || arg === "--justfile" || arg.startsWith("--justfile="))
  ) {
    checks.push(justfileCheck(root, guard, just.recipe, stepEnv));
  }
  return checks;
}

/** Interpreters whose first argument, when it is not an option, is the script they run. */
const INTERPRETERS = new Set(["sh", "bash", "dash", "zsh", "ksh", "node", "python", "python3", "ruby", "perl"]);

/** `["bash", "agent.sh"]`: the interpreter is there, so the script it runs must be too (else the agent fails at once, every iteration). */
function scriptCheck(command: readonly string[], root: string): PreflightCheck | undefined {
  const [program = "", script] = command;
  if (!INTERPRETERS.has(path.basename(program)) || script === undefined || script.startsWith("-")) return undefined;
  if (existsSync(path.resolve(root, script))) return undefined;
  return {
    name: "agent's program",
    detail: `${script} (missing)`,
    problem: `The agent's script ${JSON.stringify(script)} ([executor] command = ${JSON.stringify(command)}) does not exist in the repository; write it (${contractSection(6)} describes what it receives) and commit it, or fix [executor] command in .runner/state/config.toml.`,
  };
}

function justfileCheck(root: string, guard: readonly string[], recipe: string | undefined, env: Record<string, string>): PreflightCheck {
  const name = "guard's recipe";
  const command = `\`${guard.join(" ")}\``;
  let file: string | undefined;
  let text = "";
  for (const candidate of JUSTFILE_NAMES) {
    try {
      text = readFileSync(path.join(root, candidate), "utf8");
      file = candidate;
      break;
    } catch {
      // not this one
    }
  }
  if (file === undefined) {
    const needs = recipe ? `with a \`${recipe}\` recipe` : "with a recipe";
    return {
      name,
      detail: "no justfile",
      problem: `The guard is ${command} but the repository has no justfile; add one ${needs} that runs the project's checks (or set [guard] command in .runner/state/config.toml), commit it, and try again.`,
    };
  }
  if (recipe === undefined || definesRecipe(text, recipe)) return { name, detail: recipe ? `${file}: ${recipe}` : `${file}: its default recipe` };
  // The text does not show it: ask `just` (imports, modules), as the guard will run it.
  const result = spawnSync(guard[0]!, ["--summary"], { cwd: root, env, encoding: "utf8", timeout: 10_000 });
  if (result.status === 0 && summaryRecipes(result.stdout).includes(recipe)) return { name, detail: `${file}: ${recipe}` };
  if (result.status !== 0 && result.error === undefined) {
    const first = (result.stderr || "").trim().split("\n")[0] ?? "";
    return {
      name,
      detail: `${file} does not parse`,
      problem: `The guard is ${command} but ${file} does not parse (${first}); fix it, commit it, and try again.`,
    };
  }
  return {
    name,
    detail: `${file}: no ${recipe}`,
    problem: `The guard is ${command} but ${file} has no \`${recipe}\` recipe; add one that runs the project's checks (or set [guard] command in .runner/state/config.toml), commit it, and try again.`,
  };
}
