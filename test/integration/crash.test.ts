// Crash safety through the built binary: with RUNNER_TEST_HOOKS=1 and RUNNER_TEST_KILL_AT=<state>
// the runner SIGKILLs itself on entry to that state. For every state of the iteration machine (read
// from the machine, so a new state is covered automatically) a scenario reaches it, the runner dies
// there, and the next `runner step` must leave the repository consistent without the user running
// git: a valid tree, no half-written file, a clean working tree, no attempt counted twice or lost,
// and an iteration interrupted after its journal recorded as a runner error (seed 002: retry, guard
// skipped, attempts unchanged) and committed.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { iterationMachine } from "../../machines/iteration.js";
import { serializeTree } from "../../src/core/tree/canonical.js";
import { compositionGraph } from "../../src/diagram/graph.js";
import type { TaskTree } from "../../src/core/tree/tree.js";
import { ASKS_FOR_GIT, runRaw, stderrLines, tempFilesIn, type RawResult } from "../helpers/bad-input.js";
import { execa } from "execa";
import { node, RUNNER_BIN, tree } from "../helpers/sandbox.js";
import { repairSubject, scenario, subject, TREE_FILE, type AgentAction, type Scenario, type ScenarioOptions } from "../helpers/scenario.js";

/** The states an iteration goes through: those of the iteration's child machines, and its final states. */
const MACHINE_STATES = compositionGraph(iterationMachine).states.map((state) => state.id);
const RUN = "t1";

/** root → a (attempts 1, selected first), b. */
const TWO_LEAVES: TaskTree = tree(node("root", { children: [node("a", { attempts: 1 }), node("b", { order: 1 })] }));
const ALL_PASSED: TaskTree = tree(node("root", { passes: true, children: [node("a", { passes: true }), node("b", { order: 1, passes: true })] }));

const PASS = (file: string): AgentAction => ({ write: { [file]: `${file}\n` }, status: "done", summary: `wrote ${file}`, guard: { exit: 0 } });
const GUARD_FAIL: AgentAction = { write: { "src/a.txt": "a\n" }, status: "done", summary: "wrote a", guard: { exit: 1, print: "guard says no" } };
const BAD_OUTPUT: AgentAction = { write: { "src/a.txt": "a\n" }, rawOutput: "this is not JSON" };
const BREAK_TREE: AgentAction = { treeText: "{ broken", status: "done" };
const RESTORE_TREE: AgentAction = { treeText: serializeTree(TWO_LEAVES), status: "done", summary: "restored the tree" };

/**
 * What the kill leaves and what the next step does:
 * - before: nothing was written yet (no journal); the next step runs the iteration normally;
 * - journal: the iteration began (journal written); the next step records it as a runner error;
 * - committed: the kill came after the commit; the next step runs the next iteration;
 * - final: a final state without a commit (nothing to do, refused); the next step says the same.
 */
type Expectation = "before" | "journal" | "committed" | "final";

interface CrashCase {
  state: string;
  name: string;
  expectation: Expectation;
  options?: ScenarioOptions;
  script: Record<number, AgentAction>;
  /** Steps run before the one that is killed (each must exit as given). */
  earlier?: { exit: number; killAt?: string }[];
  /** After the kill, before the recovering step. */
  afterKill?: (s: Scenario) => Promise<void> | void;
  /** The iteration number the killed step worked on (journal and committed cases). */
  iteration?: number;
  /** The recovering step: exit code and the subject of the commit it makes (undefined: none). */
  recovery: { exit: number; subject?: string; stdout?: RegExp; stderr?: RegExp };
  /** The subject of the interrupted iteration's commit (journal) or the killed step's commit (committed). */
  killedSubject?: string;
  /** The node whose attempts must equal those at the commit the killed iteration began from. */
  nodeId?: string;
  /** A step after the recovery that must run normally: exit and subject. */
  then?: { exit: number; subject?: string };
  /** Extra checks at the end. */
  check?: (s: Scenario) => Promise<void> | void;
  /** More test hooks for the killed step (e.g. RUNNER_TEST_BUG_IN). */
  hooks?: Record<string, string>;
  /** The killed command (default: `runner step`). */
  command?: string[];
}

const CASES: CrashCase[] = [
  ...(["safetyCheck", "loadTree", "selectLeaf", "buildPrompt"] as const).map(
    (state): CrashCase => ({
      state,
      name: `${state}: an EXECUTE + done iteration killed before it wrote anything runs normally next time`,
      expectation: "before",
      script: { 1: PASS("src/a.txt") },
      recovery: { exit: 0, subject: subject(RUN, 1, "a", "execute", "pass") },
      check: (s) => {
        expect(s.node("a")).toMatchObject({ passes: true, attempts: 1 });
        expect(s.guardRuns()).toEqual([1]);
      },
    }),
  ),
  {
    state: "repairTree",
    name: "repairTree: a repair step killed before it wrote anything runs normally next time",
    expectation: "before",
    script: { 1: BREAK_TREE, 2: RESTORE_TREE },
    earlier: [{ exit: 0 }],
    recovery: { exit: 0, subject: repairSubject(RUN, 2) },
    check: (s) => expect(s.node("a")).toMatchObject({ passes: false, attempts: 1 }),
  },
  {
    state: "execute",
    name: "execute: killed before the agent started; recorded as a runner error, a stale temp file of the tree is not committed",
    expectation: "journal",
    script: { 1: PASS("src/a.txt"), 2: PASS("src/a2.txt") },
    iteration: 1,
    afterKill: (s) => {
      expect(s.agentRan(1)).toBe(false);
      writeFileSync(path.join(s.dir, ".runner/state/.tree.json.99999.tmp"), '{"version": 1, "ro');
    },
    killedSubject: subject(RUN, 1, "a", "interrupted", "skipped"),
    nodeId: "a",
    recovery: { exit: 1 },
    then: { exit: 0, subject: subject(RUN, 2, "a", "execute", "pass") },
    check: async (s) => {
      expect(await s.git(["log", "--all", "--format=", "--name-only"])).not.toContain(".tmp");
    },
  },
  ...(["reloadTree", "classify", "guard"] as const).map(
    (state): CrashCase => ({
      state,
      name: `${state}: the agent's work after done is committed as a runner error, guard skipped (never ran), attempts unchanged`,
      expectation: "journal",
      script: { 1: PASS("src/a.txt"), 2: PASS("src/a2.txt") },
      iteration: 1,
      afterKill: (s) => {
        expect(s.agentRan(1)).toBe(true);
        expect(s.guardRuns()).toEqual([]);
      },
      killedSubject: subject(RUN, 1, "a", "interrupted", "skipped"),
      nodeId: "a",
      recovery: { exit: 1 },
      check: async (s) => {
        // Nothing the agent did is thrown away; the guard never ran.
        expect(await s.git(["show", "HEAD:src/a.txt"])).toBe("src/a.txt");
        expect(s.guardRuns()).toEqual([]);
      },
    }),
  ),
  ...(["updateState", "persist", "commit"] as const).map(
    (state): CrashCase => ({
      state,
      name: `${state}: after a failed guard, the interrupted iteration does not use the attempt the guard failure would have`,
      expectation: "journal",
      script: { 1: GUARD_FAIL, 2: PASS("src/a2.txt") },
      iteration: 1,
      afterKill: (s) => {
        expect(s.guardRuns()).toEqual([1]);
        // On entry to commit, persist has written the updated tree: the attempt was counted on disk.
        expect(s.node("a").attempts).toBe(state === "commit" ? 2 : 1);
      },
      killedSubject: subject(RUN, 1, "a", "interrupted", "skipped"),
      nodeId: "a",
      recovery: { exit: 1 },
      ...(state === "commit" ? { then: { exit: 0, subject: subject(RUN, 2, "a", "execute", "pass") } } : {}),
    }),
  ),
  {
    state: "recover",
    name: "recover: killed while recovering from bad agent output; the next step records the interruption",
    expectation: "journal",
    script: { 1: BAD_OUTPUT, 2: PASS("src/a2.txt") },
    iteration: 1,
    killedSubject: subject(RUN, 1, "a", "interrupted", "skipped"),
    nodeId: "a",
    recovery: { exit: 1 },
  },
  {
    state: "resumeInterrupted",
    name: "resumeInterrupted: killed again while recording an interrupted iteration; the journal survives and the next step records it once",
    expectation: "journal",
    script: { 1: PASS("src/a.txt"), 2: PASS("src/a2.txt") },
    earlier: [{ exit: -1, killAt: "reloadTree" }],
    iteration: 1,
    killedSubject: subject(RUN, 1, "a", "interrupted", "skipped"),
    nodeId: "a",
    recovery: { exit: 1 },
    then: { exit: 0, subject: subject(RUN, 2, "a", "execute", "pass") },
  },
  {
    state: "execute",
    name: "execute (repair step): an interrupted repair is recorded as a repair with a runner error; the next step repairs",
    expectation: "journal",
    script: { 1: BREAK_TREE, 2: RESTORE_TREE, 3: RESTORE_TREE },
    earlier: [{ exit: 0 }],
    iteration: 2,
    killedSubject: repairSubject(RUN, 2),
    recovery: { exit: 1 },
    then: { exit: 0, subject: repairSubject(RUN, 3) },
    check: (s) => expect(s.node("a")).toMatchObject({ passes: false, attempts: 1 }),
  },
  {
    state: "committed",
    name: "committed: killed after the commit; no duplicate commit, the next step takes the next leaf",
    expectation: "committed",
    script: { 1: PASS("src/a.txt"), 2: PASS("src/b.txt") },
    iteration: 1,
    killedSubject: subject(RUN, 1, "a", "execute", "pass"),
    recovery: { exit: 0, subject: subject(RUN, 2, "b", "execute", "pass") },
    check: (s) => {
      expect(s.node("a")).toMatchObject({ passes: true, attempts: 1 });
      expect(s.node("root").passes).toBe(true);
    },
  },
  {
    state: "failed",
    name: "failed: killed after a runner error was committed; no duplicate commit, the next step retries the leaf",
    expectation: "committed",
    script: { 1: BAD_OUTPUT, 2: PASS("src/a2.txt") },
    iteration: 1,
    killedSubject: subject(RUN, 1, "a", "execute", "skipped"),
    recovery: { exit: 0, subject: subject(RUN, 2, "a", "execute", "pass") },
    check: async (s) => {
      expect(await s.message("HEAD~1")).toMatch(/^Runner-Error: output_parse_error/m);
      expect(s.node("a")).toMatchObject({ passes: true, attempts: 1 });
    },
  },
  {
    state: "crashed",
    name: "crashed: a bug after the agent ran (exit 2 would follow); the next step records the iteration from the journal, the agent's work kept",
    expectation: "journal",
    hooks: { RUNNER_TEST_BUG_IN: "collectResult" },
    script: { 1: PASS("src/a.txt"), 2: PASS("src/a2.txt") },
    iteration: 1,
    afterKill: (s) => {
      expect(s.agentRan(1)).toBe(true);
      expect(s.guardRuns()).toEqual([]);
    },
    killedSubject: subject(RUN, 1, "a", "interrupted", "skipped"),
    nodeId: "a",
    recovery: { exit: 1 },
    check: async (s) => {
      expect(await s.git(["show", "HEAD:src/a.txt"])).toBe("src/a.txt");
    },
  },
  {
    state: "prepareRecheck",
    name: "prepareRecheck: a re-check killed before it wrote anything; the next step runs normally",
    expectation: "before",
    command: ["recheck", "a"],
    script: { 1: PASS("src/a.txt") },
    recovery: { exit: 0, subject: subject(RUN, 1, "a", "execute", "pass") },
  },
  {
    state: "guard",
    name: "guard (of a re-check): recorded as an interrupted re-check; the leaf stays open, no attempt counted",
    expectation: "journal",
    command: ["recheck", "a"],
    script: { 2: PASS("src/a2.txt") },
    iteration: 1,
    killedSubject: subject(RUN, 1, "a", "recheck", "skipped"),
    nodeId: "a",
    recovery: { exit: 1 },
    then: { exit: 0, subject: subject(RUN, 2, "a", "execute", "pass") },
    check: (s) => expect(s.guardRuns()).toEqual([2]),
  },
  {
    state: "nothingToDo",
    name: "nothingToDo: killed with nothing to do; the next step says nothing to do",
    expectation: "final",
    options: { tree: ALL_PASSED },
    script: {},
    recovery: { exit: 0, stdout: /^Nothing to do/ },
  },
  {
    state: "refused",
    name: "refused (invalid node policy, found while building the prompt): no journal is left, the next step refuses again",
    expectation: "final",
    options: { files: { ".runner/nodes/a/policy.json": '{"allowed_write_paths": ["/etc/"]}\n' } },
    script: { 1: PASS("src/a.txt") },
    recovery: { exit: 1, stderr: /\.runner\/nodes\/a\/policy\.json is invalid: .*absolute/ },
    check: (s) => expect(s.agentRan(1)).toBe(false),
  },
  {
    state: "refused",
    name: "refused (on main): the next step refuses again",
    expectation: "final",
    options: { start: false },
    script: { 1: PASS("src/a.txt") },
    recovery: { exit: 1, stderr: /Refusing to run on main/ },
  },
];

const covered = new Set<string>();
afterAll(() => {
  console.log(
    `crash test: killed the runner on entry to ${covered.size} of ${MACHINE_STATES.length} machine states: ${[...covered].sort().join(", ")}`,
  );
});

function gitDir(s: Scenario): string {
  return path.join(s.dir, ".git");
}

async function killedStep(s: Scenario, state: string, hooks: Record<string, string> = {}, command = ["step"]): Promise<RawResult> {
  const result = await runRaw(s.dir, command, { ...s.env, ...hooks, RUNNER_TEST_HOOKS: "1", RUNNER_TEST_KILL_AT: state });
  expect(result.signal, `expected a SIGKILL on entry to ${state}; exit ${result.exitCode}, stderr: ${result.stderr}`).toBe("SIGKILL");
  expect(result.exitCode).toBeNull();
  return result;
}

async function loopSubjects(s: Scenario): Promise<string[]> {
  return (await s.subjects()).filter((line) => line.startsWith("chore(loop): "));
}

/** The checks every case ends with: a consistent repository reached without git by hand. */
async function expectConsistent(s: Scenario, stderrs: string[], audit: boolean): Promise<void> {
  const [validate, auditResult] = await Promise.all([runRaw(s.dir, ["validate"], s.env), audit ? runRaw(s.dir, ["audit"], s.env) : undefined]);
  expect(validate.exitCode, validate.stderr).toBe(0);
  expect(tempFilesIn(path.join(s.dir, ".runner/state"))).toEqual([]);
  expect(() => JSON.parse(s.read(TREE_FILE)) as unknown).not.toThrow();
  expect(await s.git(["status", "--porcelain"])).toBe("");
  expect(existsSync(s.journalFile())).toBe(false);
  // Iterations numbered 1..n, each once.
  const subjects = await loopSubjects(s);
  expect(subjects.map((line) => Number(/ iter (\d+) /.exec(line)?.[1]))).toEqual(subjects.map((_, i) => i + 1));
  for (const stderr of stderrs) expect(stderr).not.toMatch(ASKS_FOR_GIT);
  // The history the recovery wrote obeys the transition rules (no attempt counted twice or lost).
  if (audit) expect(auditResult!.exitCode, auditResult!.stderr).toBe(0);
}

async function runCase(c: CrashCase): Promise<void> {
  const s = await scenario({ tree: TWO_LEAVES, runId: RUN, timeoutSeconds: 30, ...c.options });
  s.script(c.script);
  const stderrs: string[] = [];
  for (const earlier of c.earlier ?? []) {
    if (earlier.killAt) {
      stderrs.push((await killedStep(s, earlier.killAt)).stderr);
    } else {
      const result = await s.step();
      expect(result.exitCode, result.stderr).toBe(earlier.exit);
      stderrs.push(result.stderr);
    }
  }
  const headBefore = await s.head();
  // The tree the killed iteration began from (a repair begins from the last valid one).
  const committedText = await s.git(["show", `${headBefore}:${TREE_FILE}`]);
  const treeAtStart = committedText.startsWith("{ broken") ? TWO_LEAVES : (JSON.parse(committedText) as TaskTree);
  const attemptsAtStart = new Map<string, number>();
  const stack = [treeAtStart.root];
  while (stack.length > 0) {
    const current = stack.pop()!;
    attemptsAtStart.set(current.id, current.attempts);
    stack.push(...current.children);
  }
  const loopBefore = (await loopSubjects(s)).length;

  const killed = await killedStep(s, c.state, c.hooks, c.command);
  stderrs.push(killed.stderr);
  covered.add(c.state);
  const journal = s.journalFile();
  // The lock of the killed runner is left behind (SIGKILL runs no handler); it must not block.
  expect(existsSync(path.join(gitDir(s), "runner.lock"))).toBe(true);
  switch (c.expectation) {
    case "before":
    case "final":
      expect(existsSync(journal), "no journal before the iteration wrote anything").toBe(false);
      expect(await s.head()).toBe(headBefore);
      expect(await s.git(["status", "--porcelain"])).toBe("");
      break;
    case "journal": {
      expect(existsSync(journal), "the journal of the interrupted iteration").toBe(true);
      const entry = JSON.parse(readFileSync(journal, "utf8")) as { iteration: number; head: string };
      expect(entry).toMatchObject({ iteration: c.iteration, head: headBefore });
      expect(await s.head()).toBe(headBefore);
      break;
    }
    case "committed":
      expect(existsSync(journal), "the journal is removed with the commit").toBe(false);
      expect((await s.git(["rev-parse", "HEAD~1"])).trim()).toBe(headBefore);
      expect((await loopSubjects(s)).slice(loopBefore)).toEqual([c.killedSubject]);
      expect(await s.git(["status", "--porcelain"])).toBe("");
      break;
  }
  await c.afterKill?.(s);

  const recovery = await s.step();
  stderrs.push(recovery.stderr);
  expect(recovery.exitCode, recovery.stderr).toBe(c.recovery.exit);
  if (c.recovery.stdout) expect(recovery.stdout).toMatch(c.recovery.stdout);
  if (c.recovery.stderr) expect(stderrLines(recovery.stderr)[0]).toMatch(c.recovery.stderr);
  const after = await loopSubjects(s);
  expect(await s.git(["status", "--porcelain"]), "clean after the recovering step").toBe("");

  if (c.expectation === "journal") {
    // Recorded once, as a runner error: retry, guard skipped, attempts unchanged, committed.
    expect(after.slice(loopBefore)).toEqual([c.killedSubject]);
    expect(stderrLines(recovery.stderr)).toHaveLength(1);
    expect(recovery.stderr).toMatch(
      new RegExp(
        `Iteration ${c.iteration} was interrupted: the runner stopped \\(killed or crashed\\) during iteration ${c.iteration} before committing it; it was recorded and committed as a retry without using an attempt \\(its logs: \\.runner/iterations/t1/000${c.iteration}/\\)\\. Run \`runner run\` or \`runner step\` to go on\\.$`,
      ),
    );
    expect(recovery.stderr).not.toMatch(/fix the cause/);
    const message = await s.message();
    expect(message).toMatch(/^Runner-Error: runner_stopped: the runner stopped \(killed or crashed\)/m);
    if (c.nodeId && c.command === undefined) {
      expect(message).toMatch(/^Runner-Status: retry$/m);
      expect(s.node(c.nodeId).attempts).toBe(attemptsAtStart.get(c.nodeId));
    }
    const meta = s.meta(c.iteration!);
    expect(meta.path.slice(0, 3)).toEqual(["safetyCheck", "resumeInterrupted", "recover"]);
    expect(meta.path.slice(-3)).toEqual(["persist", "commit", "failed"]);
    expect(meta).toMatchObject({
      guard_outcome: "skipped",
      agent_status: c.command === undefined ? "retry" : null,
      runner_error: { kind: "runner_stopped" },
    });
    expect(meta.attempts_after).toBe(meta.attempts_before);
    expect(s.read(s.iterFile(c.iteration!, "runner_error.log"))).toMatch(/^runner_stopped: the runner stopped/);
    // Every node kept its attempts (an interrupted repair leaves the tree invalid until the next repair).
    if (c.nodeId) for (const [id, attempts] of attemptsAtStart) expect(s.node(id).attempts, id).toBe(attempts);
  } else if (c.expectation === "committed") {
    expect(after.slice(loopBefore)).toEqual([c.killedSubject, c.recovery.subject]);
  } else {
    expect(after.slice(loopBefore)).toEqual(c.recovery.subject ? [c.recovery.subject] : []);
    if (c.recovery.subject) expect(await s.message()).not.toMatch(/Runner-Error/);
    if (!c.recovery.subject) expect(await s.head()).toBe(headBefore);
  }

  if (c.then) {
    const next = await s.step();
    stderrs.push(next.stderr);
    expect(next.exitCode, next.stderr).toBe(c.then.exit);
    expect((await loopSubjects(s)).slice(loopBefore)).toEqual([c.killedSubject, c.then.subject]);
  }
  await c.check?.(s);
  if (c.expectation !== "final" || c.recovery.exit === 0)
    await expectConsistent(s, stderrs, c.expectation === "journal" || c.expectation === "committed");
  else for (const stderr of stderrs) expect(stderr).not.toMatch(ASKS_FOR_GIT);
}

describe("crash safety: SIGKILL on entry to every machine state", () => {
  it("the machine's states are the ones this file has scenarios for", () => {
    expect(MACHINE_STATES.length).toBeGreaterThanOrEqual(18);
    const scenarioStates = new Set(CASES.map((c) => c.state));
    expect(
      MACHINE_STATES.filter((state) => !scenarioStates.has(state)),
      "states without a crash scenario",
    ).toEqual([]);
  });

  describe.concurrent("per state", () => {
    for (const c of CASES) it(c.name, () => runCase(c), 90_000);
  });

  it("covered every state of the machine", () => {
    const missing = MACHINE_STATES.filter((state) => !covered.has(state));
    expect(missing, "machine states no test killed the runner in").toEqual([]);
  });
});

describe.concurrent("crash safety: journals and dirty trees", () => {
  it("a working tree made dirty by the user (no journal) is still refused", async () => {
    const s = await scenario({ tree: TWO_LEAVES });
    s.script({ 1: PASS("src/a.txt") });
    writeFileSync(path.join(s.dir, "agent.mjs"), `${s.read("agent.mjs")}// edited by hand\n`);
    const head = await s.head();
    const result = await s.step();
    expect(result.exitCode).toBe(1);
    expect(stderrLines(result.stderr)).toEqual([expect.stringMatching(/^The working tree is not clean \(agent\.mjs\)/)]);
    expect(await s.head()).toBe(head);
    expect(s.agentRan(1)).toBe(false);
  });

  it("a journal whose iteration the user superseded by a commit of their own is dropped; the step runs normally", async () => {
    const s = await scenario({ tree: TWO_LEAVES });
    s.script({ 1: PASS("src/a.txt") });
    await killedStep(s, "execute");
    expect(existsSync(s.journalFile())).toBe(true);
    await s.git(["commit", "-q", "--allow-empty", "-m", "a human commit"]);
    const result = await s.step();
    expect(result.exitCode, result.stderr).toBe(0);
    expect(await loopSubjects(s)).toEqual([subject(RUN, 1, "a", "execute", "pass")]);
    expect(await s.message()).not.toMatch(/Runner-Error/);
    expect(existsSync(s.journalFile())).toBe(false);
  });

  it("a journal of another branch: the step refuses, naming the branch to check out, and changes nothing", async () => {
    const s = await scenario({ tree: TWO_LEAVES });
    s.script({ 1: PASS("src/a.txt") });
    await killedStep(s, "execute");
    await s.git(["checkout", "-q", "-b", "runner/other", "main"]);
    const head = await s.head();
    const result = await s.step();
    expect(result.exitCode).toBe(1);
    const lines = stderrLines(result.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^Iteration 1 of run t1 was interrupted on branch runner\/t1; check out runner\/t1 and run `runner step`/);
    expect(await s.head()).toBe(head);
    expect(existsSync(s.journalFile())).toBe(true);
    // The way out works.
    await s.git(["checkout", "-q", "runner/t1"]);
    const recorded = await s.step();
    expect(recorded.exitCode).toBe(1);
    expect(await loopSubjects(s)).toEqual([subject(RUN, 1, "a", "interrupted", "skipped")]);
    expect(await s.message()).toMatch(/^Runner-Error: runner_stopped: the runner stopped/m);
  });
});

describe("crash safety: the runner alone killed at random moments mid-agent", () => {
  /** An agent that keeps writing into the repository (and starts a setsid daemon that does too) until it is done. */
  const BUSY: AgentAction = {
    write: { "src/a.txt": "a\n" },
    status: "done",
    sh: [
      "setsid sh -c 'while :; do date >> daemon.log; sleep 0.02; done' >/dev/null 2>&1 < /dev/null &",
      "i=0; while [ $i -lt 60 ]; do echo $i >> busy.log; i=$((i+1)); sleep 0.02; done",
      "rm -f busy.log daemon.log",
    ].join("\n"),
  };

  it("every time, the next `runner run` completes with a clean tree: nothing the killed agent started writes on", async () => {
    // A fixed sequence of moments (ms after the start), so that a failure replays.
    const moments = [250, 420, 600, 330, 780, 510, 690, 380, 900, 460];
    for (const [trial, ms] of moments.entries()) {
      const s = await scenario({ tree: tree(node("root", { children: [node("a")] })), runId: RUN, timeoutSeconds: 30 });
      s.script({ 1: BUSY, 2: BUSY, 3: BUSY });
      const runner = execa("node", [RUNNER_BIN, "run"], { cwd: s.dir, env: s.env, extendEnv: false, reject: false });
      await new Promise((resolve) => setTimeout(resolve, ms));
      process.kill(runner.pid!, "SIGKILL"); // the runner alone, not its process group
      await runner;
      // The interrupted iteration is recorded, and the same run goes on to the end.
      const last = await runRaw(s.dir, ["run"], s.env);
      expect(last.exitCode, `trial ${trial} (${ms} ms): ${last.stdout}\n${last.stderr}`).toBe(0);
      expect(s.node("root").passes, `trial ${trial}`).toBe(true);
      expect(await s.git(["status", "--porcelain", "--untracked-files=all"]), `trial ${trial}: a clean tree`).toBe("");
      await new Promise((resolve) => setTimeout(resolve, 150));
      expect(await s.git(["status", "--porcelain", "--untracked-files=all"]), `trial ${trial}: still clean (nothing left writes)`).toBe("");
      const audit = await runRaw(s.dir, ["audit"], s.env);
      expect(audit.exitCode, `trial ${trial}: ${audit.stderr}`).toBe(0);
    }
  }, 240_000);
});
