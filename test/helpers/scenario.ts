// Scenario builder for `runner step` integration tests: a real git repository in a temp folder with
// `.runner/` committed, a scripted agent (agent.mjs) and a scripted guard (guard.mjs), on the run
// branch (made by `runner start`, or by git the same way where the test is about something else). The agent and the guard read their per-iteration instructions from
// a script file OUTSIDE the repository (so writing it never makes an iteration EXECUTE), and record
// what they saw (environment, stdin, context files) next to it.
import { copyFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, expect } from "vitest";
import { serializeTree } from "../../src/core/tree/canonical.js";
import { RUNNER_GITIGNORE } from "../../src/core/base/layout.js";
import { repositoryState } from "../../src/adapters/state/runner-state.js";
import type { TaskNode, TaskTree } from "../../src/core/tree/tree.js";
import { PROJECT_ROOT, git, node, runner, tempDir, testEnv, tree, writeFiles, type CliResult } from "./sandbox.js";

export const TREE_FILE = ".runner/state/tree.json";
export const CONFIG_FILE = ".runner/state/config.toml";

/** What the scripted agent does in one iteration (keyed by RUNNER_ITERATION in the script). */
export interface AgentAction {
  /** Children added under the selected node (RUNNER_NODE_ID); fields default as in `node()`. */
  decompose?: Partial<TaskNode>[];
  /** Children added under the given node ids. */
  addChildren?: Record<string, Partial<TaskNode>[]>;
  /** Fields overwritten on the given nodes (by id), e.g. `{ a: { passes: true } }`. */
  set?: Record<string, Partial<TaskNode>>;
  /** The tree file's whole new text (garbage, or a restored tree). */
  treeText?: string;
  /** Repository-relative files written (created or overwritten). */
  write?: Record<string, string>;
  /** Repository-relative files appended to. */
  append?: Record<string, string>;
  /** Printed on stdout / stderr. */
  print?: string;
  printErr?: string;
  /** The output file: `status` (+ `summary`) as JSON, or `rawOutput` verbatim; neither = no output file. */
  status?: "done" | "retry" | "decomposed";
  summary?: string;
  rawOutput?: string;
  /** A shell script the agent runs in the repository after it wrote its files and its output (git tricks, hooks, symlinks). */
  sh?: string;
  /** Spawn a background `sleep 1000` in the agent's process group; its pid goes to `agent-child-<n>.pid`. */
  spawnChild?: boolean;
  /** Seconds to sleep after everything else. */
  sleep?: number;
  /** Exit code of the agent (default 0). */
  exit?: number;
  /** What the guard does in this iteration (default: exit 0). */
  guard?: GuardAction;
}

export interface GuardAction {
  exit?: number;
  print?: string;
  spawnChild?: boolean;
  sleep?: number;
}

/** What the agent saw in one iteration. */
export interface AgentRecord {
  env: Record<string, string | undefined>;
  stdin: string;
  promptFileText: string | null;
  promptFileExists: boolean;
  context: Record<string, string | null>;
  cwd: string;
}

const AGENT_SCRIPT = String.raw`// Scripted test agent: does what the scenario's script says for RUNNER_ITERATION.
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { execFileSync, spawn } from "node:child_process";
import path from "node:path";

const dir = process.env.SCENARIO_DIR;
const iter = process.env.RUNNER_ITERATION;
const script = JSON.parse(readFileSync(path.join(dir, "script.json"), "utf8"));
const act = script[iter] ?? {};
const read = (file) => (file && existsSync(file) ? readFileSync(file, "utf8") : null);

let stdin = "";
try { stdin = readFileSync(0, "utf8"); } catch { stdin = ""; }
const env = {};
for (const [k, v] of Object.entries(process.env)) if (k.startsWith("RUNNER_") || k === "MY_API_TOKEN") env[k] = v;
const context = {};
for (const name of ["failure.md", "history.md", "node.md", "goal.md"]) context[name] = read(path.join(".runner", "context", name));
writeFileSync(path.join(dir, "agent-" + iter + ".json"), JSON.stringify({
  env, stdin, promptFileText: read(process.env.RUNNER_PROMPT_FILE),
  promptFileExists: Boolean(process.env.RUNNER_PROMPT_FILE) && existsSync(process.env.RUNNER_PROMPT_FILE),
  context, cwd: process.cwd(),
}));

const TREE = path.join(".runner", "state", "tree.json");
const defaults = (fields) => ({ id: "x", order: 0, title: "Title of " + fields.id, goal: "Goal of " + fields.id, acceptance: [],
  passes: false, attempts: 0, max_attempts: 3, children: [], ...fields });
const find = (n, id) => { if (n.id === id) return n; for (const c of n.children) { const f = find(c, id); if (f) return f; } return undefined; };
if (act.decompose || act.addChildren || act.set) {
  const tree = JSON.parse(readFileSync(TREE, "utf8"));
  const adds = { ...(act.addChildren ?? {}) };
  if (act.decompose) adds[process.env.RUNNER_NODE_ID] = act.decompose;
  for (const [id, children] of Object.entries(adds)) find(tree.root, id).children.push(...children.map(defaults));
  for (const [id, fields] of Object.entries(act.set ?? {})) Object.assign(find(tree.root, id), fields);
  writeFileSync(TREE, JSON.stringify(tree, null, 4));
}
if (act.treeText !== undefined) writeFileSync(TREE, act.treeText);
for (const [file, text] of Object.entries(act.write ?? {})) { mkdirSync(path.dirname(file), { recursive: true }); writeFileSync(file, text); }
for (const [file, text] of Object.entries(act.append ?? {})) appendFileSync(file, text);
if (act.print) process.stdout.write(act.print + "\n");
if (act.printErr) process.stderr.write(act.printErr + "\n");
if (act.rawOutput !== undefined) writeFileSync(process.env.RUNNER_OUTPUT_FILE, act.rawOutput);
else if (act.status) writeFileSync(process.env.RUNNER_OUTPUT_FILE, JSON.stringify({ status: act.status, summary: act.summary ?? ("iteration " + iter) }));
if (act.sh) execFileSync("sh", ["-c", act.sh], { stdio: ["ignore", "inherit", "inherit"] });
if (act.spawnChild) {
  const child = spawn("sleep", ["1000"], { stdio: "ignore" });
  child.unref();
  writeFileSync(path.join(dir, "agent-child-" + iter + ".pid"), String(child.pid));
}
if (act.sleep) await new Promise((resolve) => setTimeout(resolve, act.sleep * 1000));
process.exit(act.exit ?? 0);
`;

const GUARD_SCRIPT = String.raw`// Scripted test guard: does what the scenario's script says for RUNNER_ITERATION.
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { spawn } from "node:child_process";
import path from "node:path";

const dir = process.env.SCENARIO_DIR;
const iter = process.env.RUNNER_ITERATION;
const script = JSON.parse(readFileSync(path.join(dir, "script.json"), "utf8"));
const act = (script[iter] ?? {}).guard ?? {};
appendFileSync(path.join(dir, "guard-runs.txt"), iter + "\n");
if (act.print) process.stdout.write(act.print + "\n");
if (act.spawnChild) {
  const child = spawn("sleep", ["1000"], { stdio: "ignore" });
  child.unref();
  writeFileSync(path.join(dir, "guard-child-" + iter + ".pid"), String(child.pid));
}
if (act.sleep) await new Promise((resolve) => setTimeout(resolve, act.sleep * 1000));
process.exit(act.exit ?? 0);
`;

export interface ScenarioOptions {
  /** The run id given to `runner start` (default "t1"). */
  runId?: string;
  /** The initial tree (default: a root leaf with max_attempts 3). */
  tree?: TaskTree;
  /** The executor's argv (default ["node", "agent.mjs"]). */
  executor?: string[];
  /** The guard's argv (default ["node", "guard.mjs"]). */
  guard?: string[];
  /** [limits] iteration_timeout_seconds (default 60). */
  timeoutSeconds?: number;
  /** Extra lines appended to the [limits] table. */
  limits?: string;
  /** Extra lines appended to the [guard] table (e.g. `isolation = "worktree"`). */
  guardConfig?: string;
  /** Extra environment for the runner (and so for the agent and the guard). */
  env?: Record<string, string>;
  /** Whether the runner's environment carries a git identity (default true). */
  identity?: boolean;
  /** Extra files committed with the project. */
  files?: Record<string, string>;
  /** The initial branch (default "main"). */
  initialBranch?: string;
  /**
   * How the run branch is made: "runner" runs `runner start --run-id <runId>` through the binary;
   * "branch" (the default, cheaper) checks out `runner/<runId>` with git, as `runner start` does;
   * false stays on the initial branch.
   */
  start?: "runner" | "branch" | false;
}

/** Pids of background children the scripts spawned, killed after the test file in case a test failed. */
const spawnedPids = new Set<number>();
const scriptDirs: string[] = [];
afterAll(() => {
  for (const dir of scriptDirs) {
    const files = existsSync(dir) ? readdirSync(dir) : [];
    for (const file of files.filter((name) => /^(agent|guard)-child-\d+\.pid$/.test(name))) {
      const pid = Number(readFileSync(path.join(dir, file), "utf8"));
      if (Number.isSafeInteger(pid) && pid > 0) spawnedPids.add(pid);
    }
  }
  for (const pid of spawnedPids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
});

/** Whether a process is alive (a zombie — dead, not yet reaped — counts as dead). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

export interface IterationMeta {
  run_id: string;
  iteration: number;
  step_kind: string;
  node_id: string | null;
  kind: string;
  agent_status: string | null;
  guard_outcome: string;
  attempts_before: number | null;
  attempts_after: number | null;
  max_attempts: number | null;
  passes_after: boolean | null;
  failure: string | null;
  runner_error: { kind: string; message: string } | null;
  durations: { agent_ms: number; guard_ms: number; total_ms: number };
  outcome: string;
  subject: string;
  commit: string | null;
  path: string[];
  [key: string]: unknown;
}

export class Scenario {
  private entries: Record<string, AgentAction> = {};

  constructor(
    readonly dir: string,
    readonly runId: string,
    /** The folder outside the repository holding script.json and the agent's records. */
    readonly scriptDir: string,
    /** The runner's environment. */
    public env: Record<string, string>,
    /** The environment for setup git commands (always with an identity). */
    readonly gitEnv: Record<string, string>,
  ) {}

  /** Sets what the agent (and guard) do in the given iterations; merges with earlier calls. */
  script(entries: Record<number, AgentAction>): this {
    for (const [iteration, action] of Object.entries(entries)) this.entries[iteration] = action;
    writeFileSync(path.join(this.scriptDir, "script.json"), JSON.stringify(this.entries));
    return this;
  }

  /** The runner's journal of this repository (in its own state folder, outside the repository). */
  journalFile(): string {
    return repositoryState(this.env, path.join(this.dir, ".git")).journal;
  }

  /** `runner step` through the built binary. */
  step(args: string[] = [], options: { timeout?: number } = {}): Promise<CliResult> {
    return this.runner(["step", ...args], options);
  }

  /** How long one call of the binary may take (ms): longer for a real agent, slow to start on a loaded machine (real-agent-repo.ts). */
  callTimeout = 60_000;

  /** The built binary; `timeout` (ms) overrides callTimeout. */
  runner(args: string[], options: { timeout?: number } = {}): Promise<CliResult> {
    return runner(this.dir, args, { env: this.env, timeout: options.timeout ?? this.callTimeout });
  }

  /** git in the repository (setup environment: with an identity). */
  git(args: string[]): Promise<string> {
    return git(this.dir, args, this.gitEnv);
  }

  async head(): Promise<string> {
    return (await this.git(["rev-parse", "HEAD"])).trim();
  }

  /** `git status --porcelain` including ignored files: everything a command could have changed. */
  async porcelain(): Promise<string> {
    return this.git(["status", "--porcelain", "--ignored", "--untracked-files=all"]);
  }

  /** Subjects of the commits after the run started, oldest first. */
  async subjects(): Promise<string[]> {
    const out = await this.git(["log", "--format=%s", "--reverse", `${this.baseRef}..HEAD`]);
    return out.split("\n").filter((line) => line.length > 0);
  }

  /** The commit the run branch started from. */
  baseRef = "main";

  /** The full message of a commit. */
  async message(rev = "HEAD"): Promise<string> {
    return this.git(["log", "-1", "--format=%B", rev]);
  }

  readTree(): TaskTree {
    return JSON.parse(this.read(TREE_FILE)) as TaskTree;
  }

  /** A node of the tree on disk by id. */
  node(id: string): TaskNode {
    const stack = [this.readTree().root];
    while (stack.length > 0) {
      const current = stack.pop()!;
      if (current.id === id) return current;
      stack.push(...current.children);
    }
    throw new Error(`no node ${id} in ${TREE_FILE}`);
  }

  read(relative: string): string {
    return readFileSync(path.join(this.dir, relative), "utf8");
  }

  exists(relative: string): boolean {
    return existsSync(path.join(this.dir, relative));
  }

  /** Repository-relative path of a file in an iteration's log folder. */
  iterFile(iteration: number, name: string): string {
    return `.runner/iterations/${this.runId}/${String(iteration).padStart(4, "0")}/${name}`;
  }

  meta(iteration: number): IterationMeta {
    return JSON.parse(this.read(this.iterFile(iteration, "meta.json"))) as IterationMeta;
  }

  events(): { iteration: number; from: string; event: string; to: string; time: string }[] {
    return this.read(`.runner/iterations/${this.runId}/events.jsonl`)
      .split("\n")
      .filter((line) => line.length > 0)
      .map((line) => JSON.parse(line) as { iteration: number; from: string; event: string; to: string; time: string });
  }

  /** What the agent saw in an iteration. */
  agent(iteration: number): AgentRecord {
    return JSON.parse(readFileSync(path.join(this.scriptDir, `agent-${iteration}.json`), "utf8")) as AgentRecord;
  }

  agentRan(iteration: number): boolean {
    return existsSync(path.join(this.scriptDir, `agent-${iteration}.json`));
  }

  /** The iterations in which the guard ran. */
  guardRuns(): number[] {
    const file = path.join(this.scriptDir, "guard-runs.txt");
    if (!existsSync(file)) return [];
    return readFileSync(file, "utf8").split("\n").filter(Boolean).map(Number);
  }

  /** The pid of a background child the agent or guard spawned in an iteration. */
  childPid(who: "agent" | "guard", iteration: number): number {
    const pid = Number(readFileSync(path.join(this.scriptDir, `${who}-child-${iteration}.pid`), "utf8"));
    spawnedPids.add(pid);
    return pid;
  }
}

/** The config.toml of a scenario. */
export function scenarioConfig(options: Pick<ScenarioOptions, "executor" | "guard" | "timeoutSeconds" | "limits" | "guardConfig"> = {}): string {
  const list = (argv: string[]) => `[${argv.map((arg) => JSON.stringify(arg)).join(", ")}]`;
  return [
    "[executor]",
    'kind = "command"',
    `command = ${list(options.executor ?? ["node", "agent.mjs"])}`,
    "",
    "[guard]",
    `command = ${list(options.guard ?? ["node", "guard.mjs"])}`,
    ...(options.guardConfig ? [options.guardConfig] : []),
    "",
    "[limits]",
    `iteration_timeout_seconds = ${options.timeoutSeconds ?? 60}`,
    ...(options.limits ? [options.limits] : []),
    "",
  ].join("\n");
}

/** Builds the repository, commits it on the initial branch, and (by default) starts the run. */
export async function scenario(options: ScenarioOptions = {}): Promise<Scenario> {
  const dir = tempDir("runner-step-");
  const scriptDir = tempDir("runner-script-");
  scriptDirs.push(scriptDir);
  const runId = options.runId ?? "t1";
  const extra = { ...(options.env ?? {}), SCENARIO_DIR: scriptDir };
  const env = testEnv(extra, options.identity ?? true);
  const gitEnv = testEnv(extra, true);
  const initial = options.tree ?? tree(node("root", { title: "Project goal", goal: "Make the project", max_attempts: 3 }));
  writeFiles(dir, {
    ".runner/.gitignore": RUNNER_GITIGNORE,
    ".runner/GOAL.md": "# Goal\n\nMake the project.\n",
    [TREE_FILE]: serializeTree(initial),
    [CONFIG_FILE]: scenarioConfig(options),
    ".runner/state/assumptions.md": "# Assumptions\n",
    ".runner/state/questions.md": "# Open questions\n",
    "agent.mjs": AGENT_SCRIPT,
    "guard.mjs": GUARD_SCRIPT,
    ...(options.files ?? {}),
  });
  copyFileSync(path.join(PROJECT_ROOT, "schemas", "task_tree", "v1.schema.json"), path.join(dir, ".runner/state/schema.json"));
  const branch = options.initialBranch ?? "main";
  await git(dir, ["init", "-q", "-b", branch], gitEnv);
  await git(dir, ["add", "-A"], gitEnv);
  await git(dir, ["commit", "-q", "-m", "project"], gitEnv);
  const result = new Scenario(dir, runId, scriptDir, env, gitEnv);
  result.baseRef = branch;
  result.script({});
  const start = options.start ?? "branch";
  if (start === "runner") {
    const started = await result.runner(["start", "--run-id", runId]);
    expect(started.stderr).toBe("");
    expect(started.exitCode).toBe(0);
    expect((await result.git(["branch", "--show-current"])).trim()).toBe(`runner/${runId}`);
  } else if (start === "branch") {
    await result.git(["checkout", "-q", "-b", `runner/${runId}`]);
  }
  return result;
}

/** The done-when scenario: iteration 1 decomposes root into a and b, iterations 2 and 3 execute them (guard green). */
export const DONE_WHEN_SCRIPT: Record<number, AgentAction> = {
  1: {
    decompose: [
      { id: "b", order: 1, title: "Second" },
      { id: "a", order: 0, title: "First" },
    ],
    status: "decomposed",
    summary: "split root into a and b",
  },
  2: { write: { "src/a.txt": "a\n" }, status: "done", summary: "wrote a" },
  3: { write: { "src/b.txt": "b\n" }, status: "done", summary: "wrote b" },
};

/** Exactly one non-empty line on stderr; returns it. */
export function oneSentence(stderr: string): string {
  const lines = stderr.trim().split("\n");
  expect(lines, stderr).toHaveLength(1);
  expect(lines[0]!.length).toBeGreaterThan(10);
  return lines[0]!;
}

/** `chore(loop): run <id> iter <n> node <node> <kind> guard=<g>` */
export function subject(
  runId: string,
  iteration: number,
  nodeId: string,
  kind: "decompose" | "execute" | "recheck" | "interrupted",
  guard: "pass" | "fail" | "skipped",
): string {
  return `chore(loop): run ${runId} iter ${iteration} node ${nodeId} ${kind} guard=${guard}`;
}

export function repairSubject(runId: string, iteration: number): string {
  return `chore(loop): run ${runId} iter ${iteration} repair guard=skipped`;
}
