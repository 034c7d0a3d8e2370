// What the real-agent tests (test/real-agents/runner.test.ts for Codex and Claude, <kind>.test.ts
// for each other agent) share: a repository whose guard is `just ci` (check.mjs, which records every
// run with who ran it), the scripted model's hands (act.mjs), the three-leaf model (and its runs for
// the agents without a schema mode, which write the answer file the prompt names: OpenCode, pi), and
// a scenario started with the real agent as its executor.
//
// The scripted model works through the project's own tools: `node act.mjs …` (committed) edits the
// tree or writes a leaf's file, then the agent runs `just ci` itself; the guard (`just ci`, the
// runner's own `just`) records every run in CHECK_LOG (who ran it: the agent, whose environment has
// RUNNER_OUTPUT_FILE, or the guard) and fails while a leaf's file is wrong.
import { existsSync, readdirSync, readFileSync, realpathSync, symlinkSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeAll, expect } from "vitest";
import { installTestAgent } from "../../scripts/install-test-agents.mjs";
import { documentedFlags } from "./fake-agents.js";
import type { ErrorTurn, MockServerHandle, ModelTurn, ScriptSource } from "./mock-model-script.js";
import { CONFIG_FILE, scenario, subject, type Scenario } from "./scenario.js";
import { PROJECT_ROOT, node, runEvents, tempDir, tree, writeFiles } from "./sandbox.js";

/** The native `just` of the rust-just package the runner was installed with (its platform package's bin/). */
export const JUST_BIN = path.join(PROJECT_ROOT, "node_modules", `rust-just-${process.platform}-${process.arch}`, "bin");

/** The guard (`just ci` runs it): every src/<id>.txt must say `ok <id>`; each run is logged with who ran it and which `just` PATH finds. */
export const CHECK = String.raw`import { appendFileSync, existsSync, readdirSync, readFileSync } from "node:fs";
const justDir = (process.env.PATH ?? "").split(":").find((dir) => dir && existsSync(dir + "/just")) ?? null;
const files = existsSync("src") ? readdirSync("src").filter((f) => f.endsWith(".txt")) : [];
const bad = files.filter((f) => readFileSync("src/" + f, "utf8") !== "ok " + f.slice(0, -4) + "\n");
const who = process.env.RUNNER_OUTPUT_FILE ? "agent" : "guard";
appendFileSync(process.env.CHECK_LOG, JSON.stringify({ who, iteration: Number(process.env.RUNNER_ITERATION), ok: bad.length === 0, justDir }) + "\n");
if (bad.length > 0) { console.error("wrong content: " + bad.join(", ")); process.exit(1); }
console.log("ci ok: " + files.length + " file(s)");
`;

/** The scripted model's hands: `node act.mjs decompose [ids…]` splits the root into a, b, c (or the ids given); `node act.mjs write <id> ok|bad`. */
export const ACT = String.raw`import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
const [what, id, quality] = process.argv.slice(2);
if (what === "decompose") {
  const file = ".runner/state/tree.json";
  const tree = JSON.parse(readFileSync(file, "utf8"));
  const leaves = process.argv.length > 3 ? process.argv.slice(3) : ["a", "b", "c"];
  tree.root.children = leaves.map((leaf, order) => ({ id: leaf, order, title: "Leaf " + leaf, goal: "src/" + leaf + ".txt says ok " + leaf,
    acceptance: ["just ci passes"], passes: false, attempts: 0, max_attempts: 3, children: [] }));
  writeFileSync(file, JSON.stringify(tree, null, 2) + "\n");
  console.log("split root into " + leaves.join(", "));
} else {
  mkdirSync("src", { recursive: true });
  writeFileSync("src/" + id + ".txt", (quality === "bad" ? "not yet " : "ok ") + id + "\n");
  console.log("wrote src/" + id + ".txt");
}
`;

/**
 * The model of the three-leaf run, per conversation: the root is decomposed (into a, b, c, or the
 * leaves given); each leaf gets its file written and `just ci` run by the agent; leaf b's first
 * attempt writes a wrong file (the guard fails once, the runner retries it).
 */
export function threeLeafModel(leaves: readonly string[] = ["a", "b", "c"]): (conversation: string) => ModelTurn[] {
  const scripts = new Map<string, ModelTurn[]>();
  return (conversation) => {
    const nodeId = /Your task: node `([^`]+)`/.exec(conversation)?.[1] ?? "?";
    const attempts = Number(/Attempts used: (\d+) of/.exec(conversation)?.[1] ?? "0");
    const key = `${nodeId}/${attempts}`;
    if (!scripts.has(key)) {
      scripts.set(
        key,
        nodeId === "root"
          ? [
              { kind: "shell", command: leaves.join(",") === "a,b,c" ? "node act.mjs decompose" : `node act.mjs decompose ${leaves.join(" ")}` },
              { kind: "final", answer: { status: "decomposed", summary: `Split root into ${leaves.join(", ")}` } },
            ]
          : [
              { kind: "shell", command: `node act.mjs write ${nodeId} ${nodeId === "b" && attempts === 0 ? "bad" : "ok"}` },
              { kind: "shell", command: "just ci" },
              { kind: "final", answer: { status: "done", summary: `Wrote src/${nodeId}.txt and ran just ci` } },
            ],
      );
    }
    return scripts.get(key)!;
  };
}

/** The answer file the prompt names (an agent without a schema mode writes it with its own file tool). */
export function answerFileOf(conversation: string): string {
  const file = /Write your answer as JSON to the file `([^`]+)`/.exec(conversation)?.[1];
  if (!file) throw new Error("mock: the prompt names no answer file");
  return file;
}

/** One session of an agent that answers in the file: its work, the answer written to the file the prompt names, then a last word. */
export function answerFileSession(conversation: string, work: ModelTurn[], answer: Record<string, unknown> | string): ModelTurn[] {
  return [...work, { kind: "write", path: answerFileOf(conversation), content: `${JSON.stringify(answer)}\n` }, { kind: "final", answer: "Done." }];
}

/**
 * threeLeafModel(["b"]) for an agent that answers in the file (decompose, a guard failure, a retry,
 * a pass: 3 sessions): each session's final answer is written to the file the prompt names; b's
 * first request meets `errorsBefore` (rate limits the agent waits out itself).
 */
export function answerFileOneLeafModel(errorsBefore: ErrorTurn[]): (conversation: string) => ModelTurn[] {
  const model = threeLeafModel(["b"]);
  const scripts = new WeakMap<ModelTurn[], ModelTurn[]>();
  return (conversation) => {
    const script = model(conversation);
    if (!scripts.has(script)) {
      const final = script.at(-1);
      const work = script
        .slice(0, -1)
        .map((turn, i) =>
          i === 0 && /Your task: node `b`/.test(conversation) && /Attempts used: 0 of/.test(conversation) ? { ...turn, errorsBefore } : turn,
        );
      scripts.set(script, answerFileSession(conversation, work, final?.kind === "final" ? final.answer : "no answer"));
    }
    return scripts.get(script)!;
  };
}

/**
 * The rate-limit run of an agent that answers in the file: one script per session (the answer file
 * names the iteration) that writes src/root.txt and answers done; the first session's first request
 * meets `errors` (more than the agent waits out).
 */
export function answerFileLimitModel(errors: ErrorTurn[]): (conversation: string) => ModelTurn[] {
  const scripts = new Map<string, ModelTurn[]>();
  return (conversation) => {
    const file = answerFileOf(conversation);
    if (!scripts.has(file)) {
      const limited = scripts.size === 0 ? { errorsBefore: errors } : {};
      const work: ModelTurn[] = [{ kind: "shell", command: "node act.mjs write root ok", ...limited }];
      scripts.set(file, answerFileSession(conversation, work, { status: "done", summary: "Wrote src/root.txt" }));
    }
    return scripts.get(file)!;
  };
}

/** What `runner run --json` of answerFileLimitModel leaves: one wait for the limit, then the root passed on the next session. */
export async function expectLimitWaitedOut(s: Scenario, run: { stdout: string }): Promise<void> {
  const waits = runEvents(run.stdout).filter((event) => event.type === "wait");
  expect(waits).toHaveLength(1);
  expect(waits[0]).toMatchObject({ cause: "limit" });
  expect(await s.subjects()).toEqual([subject(s.runId, 1, "root", "decompose", "skipped"), subject(s.runId, 2, "root", "execute", "pass")]);
  expect(s.readTree().root).toMatchObject({ passes: true, attempts: 0 });
  expect((await s.runner(["log", "--iteration", "1"])).stdout).toMatch(/\nlimit: rate limit/);
}

/**
 * What a `runner run` of threeLeafModel(leaves) leaves behind: the root decomposed, every leaf
 * passed in order (b after one guard failure and a retry), a clean work tree, and in each leaf's
 * session `just ci` run by the agent (the runner's `just` first on its PATH), then by the guard.
 */
export async function expectLeafRun(s: Scenario, checkLog: string, leaves: readonly string[] = ["a", "b", "c"]): Promise<void> {
  const sessions = leaves.flatMap((leaf) =>
    leaf === "b"
      ? [
          { leaf, guard: "fail" as const },
          { leaf, guard: "pass" as const },
        ]
      : [{ leaf, guard: "pass" as const }],
  );
  expect(await s.subjects()).toEqual([
    subject(s.runId, 1, "root", "decompose", "skipped"),
    ...sessions.map(({ leaf, guard }, i) => subject(s.runId, i + 2, leaf, "execute", guard)),
  ]);
  const root = s.readTree().root;
  expect(root.passes).toBe(true);
  expect(root.children.map((child) => [child.id, child.passes, child.attempts])).toEqual(leaves.map((leaf) => [leaf, true, leaf === "b" ? 1 : 0]));
  expect(await s.git(["status", "--porcelain"])).toBe("");
  const runs = checkRuns(checkLog);
  expect(runs.map((r) => `${r.iteration} ${r.who} ${r.ok ? "pass" : "fail"}`)).toEqual(
    sessions.flatMap(({ guard }, i) => [`${i + 2} agent ${guard}`, `${i + 2} guard ${guard}`]),
  );
  for (const r of runs) expect(r.justDir).toBe(JUST_BIN);
}

/** `runner run` of a one-leaf tree (b: a guard failure, a retry, a pass) to its end, its wall time logged: no stderr, exit 0, the run expectLeafRun expects. */
export async function runOneLeafTree(s: Scenario, checkLog: string, kind: string): Promise<{ stdout: string }> {
  const started = Date.now();
  const run = await s.runner(["run"]);
  console.log(`${kind}: runner run of 3 iterations in ${Date.now() - started} ms`);
  expect(run.stderr).toBe("");
  expect(run.exitCode).toBe(0);
  await expectLeafRun(s, checkLog, ["b"]);
  return run;
}

/** `runner step` with a model that hangs: the agent is killed at the deadline of `seconds`, a runner error, and nothing of it is left. */
export async function expectKilledAtDeadline(s: Scenario, mock: MockServerHandle, seconds: number): Promise<void> {
  const step = await s.step();
  expect(step.exitCode).toBe(1);
  expect(step.stderr).toContain(
    `Iteration 1 ended in a runner error: the agent did not finish within the iteration budget of ${seconds} s and was killed`,
  );
  expect(mock.requests.some((request) => request.answeredWith === "hang")).toBe(true);
  expect(s.meta(1).executor).toMatchObject({ timed_out: true });
  expect(processesOf(realpathSync(s.dir))).toEqual([]);
}

/** The flags src/agents/<kind>.ts documents in its header (its argv), and those of them `help` (the agent's own --help) does not list. */
export function flagsMissingFromHelp(kind: string, help: string): { flags: string[]; missing: string[] } {
  const flags = documentedFlags(readFileSync(path.join(PROJECT_ROOT, "src", "agents", `${kind}.ts`), "utf8"), kind);
  const listed = (flag: string) => new RegExp(`(^|[\\s,])${flag.replace(/-/g, "\\-")}([\\s,=<]|$)`, "m").test(help);
  return { flags, missing: flags.filter((flag) => !listed(flag)) };
}

/**
 * The real agent `kind` for one test file: installed once (scripts/install-test-agents.mjs, cached)
 * and linked into a folder of its own, put first on PATH as `npm i -g` puts it; `mock` starts a
 * scripted model server with `start`, closed after the test.
 */
export function realAgent(kind: string, start: (options: { script: ScriptSource }) => Promise<MockServerHandle>) {
  let program = "";
  let bin = "";
  const servers: MockServerHandle[] = [];
  beforeAll(() => {
    program = installTestAgent(kind, { log: (line: string) => console.log(line) });
    bin = tempDir(`runner-${kind}-bin-`);
    symlinkSync(program, path.join(bin, kind));
  }, 10 * 60_000);
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.close();
  });
  return {
    /** The installed program. */
    program: () => program,
    /** PATH with the agent's folder first. */
    path: () => `${bin}${path.delimiter}${process.env.PATH ?? ""}`,
    async mock(script: ScriptSource): Promise<MockServerHandle> {
      const server = await start({ script });
      servers.push(server);
      return server;
    },
  };
}

/** Variables of the test process that would give an agent credentials or settings of their own. */
export const AGENT_ENV_UNSET = [
  "ANTHROPIC_AUTH_TOKEN",
  "CLAUDE_CODE_OAUTH_TOKEN",
  "OPENAI_API_KEY",
  "CODEX_API_KEY",
  "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
  "IS_SANDBOX",
  "GEMINI_API_KEY",
  "GOOGLE_API_KEY",
  "GOOGLE_GEMINI_BASE_URL",
  "GOOGLE_GENAI_USE_VERTEXAI",
  "GOOGLE_GENAI_USE_GCA",
];

/**
 * A repository on run branch `runId` (guard `just ci`, check.mjs, act.mjs, CHECK_LOG in `env`) whose
 * `[executor]` is `executor`, committed and started with `runner start`.
 */
/** A real-agent test's time limit (ms): several sessions of a slow-starting agent on a loaded machine, with room to spare. */
export const REAL_AGENT_TEST_TIMEOUT = 480_000;

/**
 * The iteration budget of a "model that hangs" test: the agent must reach its model request before
 * the deadline, which took a real agent up to 22 s on a machine loaded by other test runs.
 */
export const HANG_BUDGET_SECONDS = 45;

export async function realAgentScenario(
  runId: string,
  options: { env: Record<string, string>; executor: string[]; timeoutSeconds?: number; tree?: ReturnType<typeof tree> },
): Promise<Scenario> {
  const s = await scenario({
    runId,
    start: false,
    tree: options.tree ?? tree(node("root", { title: "Three files", goal: "src/a.txt, src/b.txt and src/c.txt say ok" })),
    env: options.env,
    files: { justfile: "ci:\n    node check.mjs\n", "check.mjs": CHECK, "act.mjs": ACT },
  });
  for (const name of AGENT_ENV_UNSET) if (!(name in options.env)) delete s.env[name];
  writeFiles(s.dir, {
    [CONFIG_FILE]: ["[executor]", ...options.executor, "", "[limits]", `iteration_timeout_seconds = ${options.timeoutSeconds ?? 120}`, ""].join("\n"),
  });
  // A real agent took 20–30 s a session on a machine loaded by other test runs (docs/decisions.md,
  // 2026-11-26): each call gets 5 minutes, and the real-agent tests 8 (REAL_AGENT_TEST_TIMEOUT).
  s.callTimeout = 300_000;
  await s.git(["commit", "-q", "-am", "use the agent"]);
  const start = await s.runner(["start", "--run-id", runId]);
  expect(start.stderr).toBe("");
  return s;
}

/** A CHECK_LOG in a temp folder of its own. */
export function checkLogFile(): string {
  return path.join(tempDir("runner-check-log-"), "check.jsonl");
}

export interface CheckRun {
  who: string;
  iteration: number;
  ok: boolean;
  /** The PATH folder `just` was found in. */
  justDir: string | null;
}

export function checkRuns(checkLog: string): CheckRun[] {
  if (!existsSync(checkLog)) return [];
  return readFileSync(checkLog, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as CheckRun);
}

/** Processes (other than zombies) that run with this repository's agent environment. */
export function processesOf(repo: string): number[] {
  const marker = `RUNNER_REPO_ROOT=${repo}\0`;
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (!readFileSync(`/proc/${entry}/environ`, "latin1").includes(marker)) continue;
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z") pids.push(Number(entry));
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return pids;
}
