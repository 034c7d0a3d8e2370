// Model-based tests, system layer: model paths (test/model/paths.ts) turned into real scenarios. For
// each selected path, a temp git repository (test/helpers/scenario.ts), a scripted agent and guard,
// and faults injected through the file system are chosen so that the built `runner step` binary
// takes exactly that path; then `meta.json`'s `path`, the `--json` output's `path` and the events
// of events.jsonl must equal the model's, and the repository must end as the seeds require
// (committed or not, attempts and passes by seed 002's tables, a clean working tree after a commit,
// nothing changed by a refusal).
//
// Paths run: the shortest path to every state (completed to a final state), then simple paths to
// the final states chosen greedily until every transition is taken by some scenario. Set
// MODEL_SYSTEM_PATHS=all to run every simple path the recipes can build (slow).
import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { serializeTree } from "../../src/core/tree/canonical.js";
import { checkDerivedPasses, checkTreeShape } from "../../src/core/tree/invariants.js";
import { formatFinished } from "../../src/core/plan/plan-finished.js";
import { walkTree, type TaskNode, type TaskTree } from "../../src/core/tree/tree.js";
import { node, runner, tree } from "../helpers/sandbox.js";
import { CONFIG_FILE, TREE_FILE, scenario, type AgentAction, type IterationMeta, type Scenario, type ScenarioOptions } from "../helpers/scenario.js";
import { EDGES, FINAL_STATES, STATES, coverage, describeEdge, formatCoverage, machinePaths, recordedTransitions, type ModelPath } from "./paths.js";

/** The actor each state invokes, by its source name (RUNNER_TEST_BUG_IN takes these). */
const ACTOR_SOURCES: Record<string, string> = {
  safetyCheck: "inspectRepository",
  resumeInterrupted: "loadInterrupted",
  loadTree: "loadState",
  buildPrompt: "preparePrompt",
  prepareRecheck: "prepareRecheck",
  repairTree: "preparePrompt",
  execute: "runAgent",
  reloadTree: "collectResult",
  guard: "runGuard",
  recover: "collectResult",
  persist: "persistIteration",
  commit: "commitIteration",
};

const RUN = "t1";
/** root → a (attempts 1, selected first), b. */
const TWO_LEAVES: TaskTree = tree(node("root", { children: [node("a", { attempts: 1 }), node("b", { order: 1 })] }));
const ALL_PASSED: TaskTree = tree(node("root", { passes: true, children: [node("a", { passes: true }), node("b", { order: 1, passes: true })] }));
/** An imported plan: a and b marked finished (.runner/state/finished.json) and never attempted, c open work between them. */
const FINISHED_PLAN: TaskTree = tree(node("root", { children: [node("a"), node("c", { order: 1 }), node("b", { order: 2 })] }));
const BROKEN_TREE = "{ this is not a task tree";
/** An agent that turns the tree file into a folder before it acts: reading it fails with EISDIR. */
const TREE_INTO_FOLDER = ["sh", "-c", `rm ${TREE_FILE} && mkdir ${TREE_FILE} && exec node agent.mjs`];

/**
 * Transitions no real scenario can take (each needs a fault the binary cannot be made to meet):
 * covered by the machine layer only, and listed in docs/model-based-tests.md.
 */
const MACHINE_LAYER_ONLY: Record<string, string> = {
  "execute:always:agentNotStarted":
    "the preflight refuses a step whose agent program cannot start (missing, not executable, a #! interpreter missing) before the step begins; only a program removed by another process between the preflight and the spawn reaches it",
};

// ---------------------------------------------------------------------------------------------
// Recipes: what makes the binary take each transition.

interface StepRun {
  exitCode: number;
  stdout: string;
  stderr: string;
  json: { outcome: string; path: string[] } | undefined;
  meta: IterationMeta | undefined;
  s: Scenario;
}

interface Recipe {
  options: ScenarioOptions;
  /** After the scenario is built: extra commits, pre-made folders, a broken index. */
  prepare: ((s: Scenario) => Promise<void> | void)[];
  /** A step killed on entry to a state (RUNNER_TEST_KILL_AT) or a normal step, before the one under test. */
  before: { killAt?: string; exit?: number }[];
  /** The agent's (and guard's) actions for the iteration whose agent runs. */
  agent: AgentAction;
  /** Where the agent runs: in the step under test, in a step before it (killed or not), or not at all. */
  agentRuns: "step" | "earlier" | "no";
  /** Checks for what the path alone does not tell apart (transitions between the same two states). */
  evidence: { edge: string; check: (run: StepRun) => void; readsOutcome: boolean }[];
  /** The agent's iteration turns the tree file into a folder (reading and writing it fail). */
  treeFolder: boolean;
  /** The actor a bug is injected into for the step under test (RUNNER_TEST_BUG_IN). */
  bugIn?: string;
  /** The actor an environment failure is injected into (RUNNER_TEST_FAIL_IN). */
  failIn?: string;
  /** The command under test: `runner step`, or `runner recheck [node-id]`. */
  command: string[];
}

function failIn(recipe: Recipe, actor: string): void {
  if (recipe.failIn !== undefined && recipe.failIn !== actor) throw new Unsupported(`needs failures in both ${recipe.failIn} and ${actor}`);
  recipe.failIn = actor;
}

/** A path no recipe can build: it needs two faults that exclude each other, or an agent where none runs. */
class Unsupported extends Error {}

/** Scenario options merged; the same option set twice to different values cannot be built. */
function setOption<K extends keyof ScenarioOptions>(recipe: Recipe, key: K, value: ScenarioOptions[K]): void {
  const old = recipe.options[key];
  if (old !== undefined && JSON.stringify(old) !== JSON.stringify(value))
    throw new Unsupported(`needs ${key} both ${JSON.stringify(old)} and ${JSON.stringify(value)}`);
  recipe.options[key] = value;
}

function addFiles(recipe: Recipe, files: Record<string, string>): void {
  recipe.options.files = { ...recipe.options.files, ...files };
}

function commitFiles(files: Record<string, string | null>, message: string) {
  return async (s: Scenario) => {
    for (const [relative, text] of Object.entries(files)) {
      const file = path.join(s.dir, relative);
      rmSync(file, { recursive: true, force: true });
      if (text === null) continue;
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, text);
    }
    await s.git(["add", "-A"]);
    await s.git(["commit", "-q", "-m", message]);
  };
}

const stderrSays = (pattern: RegExp) =>
  Object.assign((run: StepRun) => expect(run.stderr, "the sentence on stderr").toMatch(pattern), { readsOutcome: true });
const runnerError = (kind: string, message: RegExp) =>
  Object.assign(
    (run: StepRun) => {
      expect(run.meta?.runner_error?.kind).toBe(kind);
      expect(run.meta?.runner_error?.message).toMatch(message);
    },
    { readsOutcome: true },
  );

/** Builds the scenario that makes `runner step` take `path`; throws Unsupported when no recipe can. */
function recipeFor(p: ModelPath): Recipe {
  // The model knows from the path whether it is `runner recheck`'s.
  const recheck = p.contexts[p.contexts.length - 1]!.recheck === true;
  const recipe: Recipe = {
    options: {},
    prepare: [],
    before: [],
    agent: {},
    agentRuns: "no",
    evidence: [],
    treeFolder: false,
    command: recheck ? ["recheck"] : ["step"],
  };
  const keys = new Set(p.edges.map((edge) => edge.key));
  const has = (key: string) => keys.has(key);
  const agent = (action: AgentAction) => {
    const write = { ...recipe.agent.write, ...action.write };
    Object.assign(recipe.agent, action, Object.keys(write).length > 0 ? { write } : {});
  };
  // (a check that reads how the step ended — meta.json, the sentence on stderr — is marked: a bug ends it otherwise)
  const evidence = (edge: string, check: ((run: StepRun) => void) & { readsOutcome?: boolean }, readsOutcome = check.readsOutcome === true) =>
    recipe.evidence.push({ edge, check, readsOutcome });

  if (has("safetyCheck:always:wasInterrupted")) recipe.agentRuns = "earlier";
  else if (has("execute:always:agentFinished") || has("execute:always:agentStopped") || has("execute:always:agentFailed")) recipe.agentRuns = "step";
  // Reading the tree file fails only if the agent made it a folder; then every later read and write fails too.
  recipe.treeFolder = has("reloadTree:error") || has("recover:error") || has("persist:error");
  if (recipe.treeFolder) {
    if (recipe.agentRuns === "no")
      throw new Unsupported("the tree file can only become a folder by the agent's hand, and no agent runs on this path");
    for (const state of ["reloadTree", "recover", "persist"]) {
      const taken = p.edges.find((edge) => edge.from === state);
      if (taken && taken.outcome !== "error") throw new Unsupported(`with the tree file a folder, ${state} cannot succeed (${describeEdge(taken)})`);
    }
    setOption(recipe, "executor", TREE_INTO_FOLDER);
  }

  for (const edge of p.edges) {
    switch (edge.key) {
      case "safetyCheck:always:repositoryUnsafe":
        setOption(recipe, "start", false);
        evidence(edge.key, stderrSays(/Refusing to run on main/));
        break;
      case "safetyCheck:error":
        // (the runner's own index is not the repository's: a broken object store is what stops git)
        recipe.prepare.push(async (s) => {
          const head = await s.head();
          rmSync(path.join(s.dir, ".git", "objects", head.slice(0, 2), head.slice(2)));
        });
        evidence(edge.key, stderrSays(/git \w[\w-]* failed/));
        break;
      case "safetyCheck:always:wasInterrupted":
        // The runner is killed on entry to reloadTree, after the agent ran: its journal is left behind.
        recipe.before.push({ killAt: "reloadTree" });
        evidence(edge.key, (run) => expect(run.meta?.runner_error?.message).toMatch(/stopped \(killed or crashed\) during iteration 1/), true);
        break;
      case "resumeInterrupted:error":
        agent({ write: { [CONFIG_FILE]: "this is = not [valid toml" }, status: "done" });
        evidence(edge.key, stderrSays(/Could not record the interrupted iteration/));
        break;
      case "loadTree:always:configInvalid":
        recipe.prepare.push(commitFiles({ [CONFIG_FILE]: "[limits]\niteration_timeout_seconds = 0\n" }, "break the config"));
        evidence(edge.key, stderrSays(/config\.toml is invalid/));
        break;
      case "loadTree:always:preflightFailed":
        // The guard names a program that is nowhere: found before any agent runs.
        setOption(recipe, "guard", ["/nonexistent/guard-program"]);
        evidence(
          edge.key,
          stderrSays(/^The guard's program "\/nonexistent\/guard-program" \(\[guard\] command\) does not exist; install it or fix \[guard\] command/),
        );
        break;
      case "loadTree:always:treeMissing":
        // No tree and none in the branch's history (else the step repairs it from there): a run branch that starts anew without it.
        recipe.prepare.push(async (s) => {
          await s.git(["checkout", "-q", "--orphan", "fresh"]);
          await s.git(["rm", "-q", "--cached", TREE_FILE]);
          rmSync(path.join(s.dir, TREE_FILE));
          await s.git(["commit", "-q", "-m", "a project without its tree"]);
          await s.git(["branch", "-q", "-D", `runner/${RUN}`]);
          await s.git(["branch", "-q", "-m", `runner/${RUN}`]);
          s.baseRef = "HEAD";
        });
        evidence(edge.key, stderrSays(/tree\.json does not exist and no valid tree exists in this branch's history/));
        break;
      case "loadTree:always:passesDisagree":
        // A person removes the open leaf whose siblings all passed, and commits: the parent's passes disagrees.
        recipe.prepare.push(
          commitFiles({ [TREE_FILE]: serializeTree(tree(node("root", { children: [node("p", { passes: true })] }))) }, "remove a leaf"),
        );
        evidence(edge.key, stderrSays(/\$\.root\.passes: is false although every child passes .*set it to true and commit/));
        break;
      case "loadTree:always:treeValid":
        if (has("selectLeaf:always:rootPasses")) setOption(recipe, "tree", ALL_PASSED);
        break;
      case "loadTree:always:repairsExhausted":
        // One repair step that leaves the tree invalid, with one repair allowed: the next step gives up.
        setOption(recipe, "limits", "max_repair_attempts = 1");
        recipe.prepare.push(commitFiles({ [TREE_FILE]: BROKEN_TREE }, "break the tree"));
        recipe.before.push({ exit: 0 });
        agent({ status: "done", summary: "could not repair it" });
        recipe.agentRuns = "earlier";
        evidence(edge.key, stderrSays(/still invalid after 1 repair steps in a row/));
        break;
      case "loadTree:always:noValidTreeInHistory":
        addFiles(recipe, { [TREE_FILE]: BROKEN_TREE });
        evidence(edge.key, stderrSays(/no valid tree exists in this branch's history/));
        break;
      case "loadTree:always:treeInvalid":
        recipe.prepare.push(commitFiles({ [TREE_FILE]: BROKEN_TREE }, "break the tree"));
        break;
      case "loadTree:error":
        recipe.prepare.push(commitFiles({ [CONFIG_FILE]: null, [`${CONFIG_FILE}/keep`]: "a folder, not a file\n" }, "config.toml becomes a folder"));
        evidence(edge.key, stderrSays(/EISDIR/));
        break;
      case "loadTree:always:recheckOnInvalidTree":
        recipe.prepare.push(commitFiles({ [TREE_FILE]: BROKEN_TREE }, "break the tree"));
        evidence(edge.key, stderrSays(/a re-check needs a valid tree: run `runner step` to repair it first/));
        break;
      case "selectLeaf:always:finishedSelected":
        // `runner step` reaches a leaf the plan marks finished: the guard alone judges it, and b with it.
        setOption(recipe, "tree", FINISHED_PLAN);
        addFiles(recipe, { ".runner/state/finished.json": formatFinished(["a", "b"]) });
        evidence(
          edge.key,
          (run) => {
            expect(run.meta?.step_kind).toBe("recheck");
            expect(run.meta?.rechecked).toEqual(run.meta?.guard_outcome === "pass" ? ["b"] : []);
          },
          true,
        );
        break;
      case "selectLeaf:always:recheckRefused":
        recipe.command = ["recheck", "root"];
        evidence(edge.key, stderrSays(/^Node root has children/));
        break;
      case "prepareRecheck:error":
        failIn(recipe, "prepareRecheck");
        evidence(edge.key, runnerError("other", /injected into prepareRecheck/));
        break;
      case "selectLeaf:always:rootPasses":
        evidence(edge.key, (run) => expect(run.stdout).toMatch(/Nothing to do: the root passes/));
        break;
      case "buildPrompt:always:policyInvalid":
        addFiles(recipe, { ".runner/nodes/a/policy.json": "{ not json" });
        evidence(edge.key, stderrSays(/policy\.json is invalid/));
        break;
      case "buildPrompt:error":
        addFiles(recipe, { ".runner/prompts/leaf.md/keep": "the template is a folder\n" });
        evidence(edge.key, runnerError("other", /EISDIR/));
        break;
      case "repairTree:error":
        addFiles(recipe, { ".runner/prompts/repair.md/keep": "the template is a folder\n" });
        evidence(edge.key, runnerError("other", /EISDIR/));
        break;
      case "execute:always:agentStopped":
        setOption(recipe, "timeoutSeconds", 2);
        agent({ write: { "src/a.txt": "half\n" }, status: "done", sleep: 60 });
        evidence(edge.key, runnerError("executor_timeout", /agent did not finish within the iteration budget/));
        break;
      case "execute:always:agentFailed":
        // It crashed (or its model API failed) and gave no answer: its exit status and stderr say why.
        agent({ write: { "src/a.txt": "half\n" }, printErr: "error: the model API answered 503 (overloaded)", exit: 1 });
        evidence(edge.key, runnerError("agent_failed", /exited with code 1: error: the model API answered 503 \(overloaded\)/));
        break;
      case "execute:always:agentNotStarted":
        throw new Unsupported(MACHINE_LAYER_ONLY[edge.key]!);
      case "execute:error":
        // (the runner clears its log folder of anything in the way: the hook stands in for a failing environment)
        failIn(recipe, "runAgent");
        evidence(edge.key, runnerError("other", /injected into runAgent/));
        break;
      case "reloadTree:always:outputInvalid":
        agent({ write: { "src/a.txt": "a\n" }, rawOutput: "this is not JSON" });
        evidence(edge.key, runnerError("output_parse_error", /not valid JSON/));
        break;
      case "reloadTree:always:agentTreeInvalid":
        agent(has("repairTree:done") ? { status: "done", summary: "left it broken" } : { treeText: BROKEN_TREE, status: "done" });
        evidence(edge.key, (run) => expect(run.meta?.tree_problems).not.toEqual([]), true);
        break;
      case "reloadTree:always:repairAccepted":
        agent({ treeText: JSON.stringify(TWO_LEAVES), status: "done", summary: "restored the tree" });
        break;
      case "reloadTree:error":
        agent({ status: "done", write: { "src/a.txt": "a\n" } });
        evidence(edge.key, stderrSays(/Could not persist the iteration: EISDIR/));
        break;
      case "classify:always:guardRequired":
        agent({ write: { "src/a.txt": "a\n" }, status: "done", summary: "wrote a" });
        break;
      case "classify:always":
        agent({
          decompose: [
            { id: "a2", order: 1 },
            { id: "a1", order: 0 },
          ],
          status: "decomposed",
          summary: "split a",
        });
        break;
      case "guard:always:guardStopped":
        setOption(recipe, "timeoutSeconds", 6);
        agent({ guard: { sleep: 60 } });
        evidence(edge.key, runnerError("executor_timeout", /guard did not finish within the iteration budget/));
        break;
      case "guard:always:guardNotStarted":
        // The preflight finds the guard's program in the work tree, but it is not committed (ignored),
        // so the clean checkout the guard runs in has none.
        setOption(recipe, "guard", ["./ci.sh"]);
        setOption(recipe, "guardConfig", 'isolation = "worktree"');
        addFiles(recipe, { ".gitignore": "ci.sh\n", "ci.sh": "#!/bin/sh\nexit 0\n" });
        recipe.prepare.push((s) => chmodSync(path.join(s.dir, "ci.sh"), 0o755));
        evidence(
          edge.key,
          (run) => {
            expect(run.meta?.runner_error?.kind).toBe("guard_error");
            expect((run.meta?.guard as { spawn_error: string | null }).spawn_error).toMatch(/cannot start "\.\/ci\.sh": no such file/);
          },
          true,
        );
        break;
      case "guard:always:guardFinished":
        agent({ guard: { exit: 0 } });
        break;
      case "guard:error":
        failIn(recipe, "runGuard");
        evidence(edge.key, runnerError("guard_error", /injected into runGuard/));
        break;
      case "commit:done:hadRunnerError":
        evidence(edge.key, stderrSays(/(ended in a runner error: |was interrupted: ).* without using an attempt/));
        break;
      case "commit:error":
        // A lock on the run branch (a git process that never finished, or an agent's trick): the branch cannot move.
        if (recipe.agentRuns === "no") throw new Unsupported("only the agent can leave the run branch locked, and no agent runs on this path");
        agent({ write: { [`.git/refs/heads/runner/${RUN}.lock`]: "" } });
        evidence(edge.key, stderrSays(/Could not commit the iteration: .*\.lock/));
        break;
      case "safetyCheck:always:repositorySafe":
      case "resumeInterrupted:done":
      case "selectLeaf:always:leafSelected":
      case "selectLeaf:always:recheckSelected":
      case "prepareRecheck:done":
      case "buildPrompt:always:promptReady":
      case "repairTree:done":
      case "execute:always:agentFinished":
      case "reloadTree:always:leafAccepted":
      case "updateState:always":
      case "recover:done":
      case "recover:error":
      case "persist:done":
      case "persist:error":
      case "commit:done":
        break;
      default:
        if (edge.guard === "isBug") {
          // A bug in the actor of the state (the test hook makes it throw a TypeError); an actor that
          // an earlier state of the path runs as well would fail there first.
          const src = ACTOR_SOURCES[edge.from]!;
          const earlier = p.states.slice(0, p.states.indexOf(edge.from)).some((state) => ACTOR_SOURCES[state] === src);
          if (earlier) throw new Unsupported(`a bug in ${src} would strike its earlier state first`);
          recipe.bugIn = src;
          evidence(edge.key, stderrSays(/^Internal error: .*This is a bug in the runner/), false);
          break;
        }
        throw new Error(`no system recipe for ${describeEdge(edge)}: add a case for "${edge.key}" to recipeFor in test/model/system.test.ts`);
    }
  }
  if (recipe.bugIn) {
    // A bug ends the step before meta.json or the usual sentence: the evidence of an earlier
    // transition cannot be read. Without it the path still tells a transition apart when no other
    // transition joins the same two states; otherwise the path cannot be checked.
    const shared = (key: string) => {
      const edge = EDGES.find((e) => e.key === key)!;
      return EDGES.filter((e) => e.from === edge.from && e.to === edge.to).length > 1;
    };
    if (recipe.evidence.some((entry) => entry.readsOutcome && shared(entry.edge)))
      throw new Unsupported("a bug hides the evidence an earlier transition needs");
    recipe.evidence = recipe.evidence.filter((entry) => !entry.readsOutcome);
  }
  // (a re-check runs the guard only: the script's guard action is all it reads)
  const guardOnly = p.states.includes("prepareRecheck");
  if (recipe.agentRuns === "no" && Object.keys(recipe.agent).some((key) => !(guardOnly && key === "guard"))) {
    throw new Unsupported(`the path needs the agent to act (${JSON.stringify(recipe.agent)}) but no agent runs on it`);
  }
  recipe.options.tree ??= TWO_LEAVES;
  // An interrupted iteration leaves the agent's work in the working tree.
  if (has("safetyCheck:always:wasInterrupted")) agent({ write: { "src/a.txt": "a\n" }, status: "done" });
  return recipe;
}

function tryRecipe(p: ModelPath): Recipe | string {
  try {
    return recipeFor(p);
  } catch (error) {
    if (error instanceof Unsupported) return error.message;
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------
// Which paths run.

const { paths: ALL_PATHS } = machinePaths();
const CANDIDATES = ALL_PATHS.filter((p) => FINAL_STATES.includes(p.end) && typeof tryRecipe(p) !== "string");

/** Faults on a path (actor errors): among paths of the same length, the plainer one is chosen. */
const faults = (p: ModelPath) => p.edges.filter((edge) => edge.outcome === "error").length;

function selectPaths(): ModelPath[] {
  if (process.env.MODEL_SYSTEM_PATHS === "all") return CANDIDATES;
  const chosen: ModelPath[] = [];
  const add = (p: ModelPath | undefined) => {
    if (p && !chosen.includes(p)) chosen.push(p);
  };
  // The shortest path to every state, completed to a final state by the shortest continuation.
  for (const state of STATES) {
    const through = CANDIDATES.filter((p) => p.states.includes(state));
    add(through.sort((a, b) => a.states.indexOf(state) - b.states.indexOf(state) || faults(a) - faults(b) || a.edges.length - b.edges.length)[0]);
  }
  // Then simple paths to final states, greedily, until every transition some recipe can build is taken.
  const covered = () => new Set(chosen.flatMap((p) => p.edges.map((edge) => edge.key)));
  for (;;) {
    const have = covered();
    const gain = (p: ModelPath) => new Set(p.edges.map((edge) => edge.key).filter((key) => !have.has(key))).size;
    const best = [...CANDIDATES].sort((a, b) => gain(b) - gain(a) || faults(a) - faults(b) || a.edges.length - b.edges.length)[0];
    if (!best || gain(best) === 0) break;
    add(best);
  }
  return chosen;
}

const SELECTED = selectPaths();
if (process.env.MODEL_DEBUG) {
  // Why the other simple paths cannot be built, and which paths run.
  const reasons = new Map<string, number>();
  for (const p of ALL_PATHS.filter((q) => FINAL_STATES.includes(q.end))) {
    const reason = tryRecipe(p);
    if (typeof reason === "string") reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
  }
  console.log(reasons, `\n${SELECTED.map((q) => q.name).join("\n")}`);
}

// ---------------------------------------------------------------------------------------------
// Running a path.

/** What `runner step` may change, seen by git: HEAD, the working tree (ignored files apart), the ignored files. */
async function repoState(s: Scenario): Promise<{ head: string; status: string; ignored: string[] }> {
  const head = await s.head();
  try {
    const lines = (await s.porcelain()).split("\n").filter(Boolean);
    return { head, status: lines.filter((line) => !line.startsWith("!! ")).join("\n"), ignored: lines.filter((line) => line.startsWith("!! ")) };
  } catch (error) {
    // git itself cannot read the repository (a broken index): compare the index file's bytes instead.
    const index = readFileSync(path.join(s.dir, ".git", "index"));
    return {
      head,
      status: `git status fails (${(error as Error).message.split("\n")[0]}); index ${createHash("sha256").update(index).digest("hex")}`,
      ignored: [],
    };
  }
}

function findNode(t: TaskTree, id: string): TaskNode | undefined {
  for (const { node: n } of walkTree(t)) if (n.id === id) return n;
  return undefined;
}

async function runPath(p: ModelPath): Promise<void> {
  const recipe = recipeFor(p);
  const s = await scenario(recipe.options);
  const iteration = 1;
  s.script({ [iteration]: recipe.agent });
  for (const prepare of recipe.prepare) await prepare(s);

  for (const before of recipe.before) {
    if (before.killAt) {
      const killed = await runner(s.dir, ["step"], { env: { ...s.env, RUNNER_TEST_HOOKS: "1", RUNNER_TEST_KILL_AT: before.killAt } });
      expect(killed.exitCode, `the runner is killed on entry to ${before.killAt}: ${killed.stderr}`).toBe(-1);
    } else {
      const earlier = await s.step();
      expect(earlier.exitCode, earlier.stderr).toBe(before.exit);
    }
  }

  const before = await repoState(s);
  const headBefore = before.head;
  const treeBefore = s.exists(TREE_FILE) && !recipe.treeFolder ? s.read(TREE_FILE) : undefined;
  const metaFile = s.iterFile(iteration, "meta.json");
  const metaBefore = s.exists(metaFile) ? s.read(metaFile) : undefined;

  const hooks = { ...(recipe.bugIn ? { RUNNER_TEST_BUG_IN: recipe.bugIn } : {}), ...(recipe.failIn ? { RUNNER_TEST_FAIL_IN: recipe.failIn } : {}) };
  const command = [...recipe.command, "--json"];
  const result = await runner(s.dir, command, { env: Object.keys(hooks).length > 0 ? { ...s.env, RUNNER_TEST_HOOKS: "1", ...hooks } : s.env });
  let json: StepRun["json"];
  try {
    json = JSON.parse(result.stdout) as StepRun["json"];
  } catch {
    json = undefined;
  }
  const wroteMeta = s.exists(metaFile) && s.read(metaFile) !== metaBefore;
  const run: StepRun = { ...result, json, meta: wroteMeta ? s.meta(iteration) : undefined, s };
  const where = `${p.name}\nexit ${result.exitCode}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`;

  // The path the binary took is the model's.
  expect(json?.path, where).toEqual(p.states);
  const end = p.end;
  const expectMeta =
    p.states.some((state) => ["selectLeaf", "repairTree", "resumeInterrupted"].includes(state)) &&
    end !== "refused" &&
    end !== "nothingToDo" &&
    end !== "crashed";
  expect(wroteMeta, `${where}\nmeta.json written`).toBe(expectMeta);
  if (run.meta) {
    expect(run.meta.path, `${where}\nmeta.json path`).toEqual(p.states);
    // events.jsonl: this step's transitions (after its "(start)"), done and error told apart.
    const events = s.events().filter((event) => event.iteration === iteration);
    const start = events.map((event) => event.from).lastIndexOf("(start)");
    expect(
      events.slice(start + 1).map((event) => `${event.from} ${event.event} ${event.to}`),
      `${where}\nevents.jsonl`,
    ).toEqual(recordedTransitions(p.edges));
  }
  for (const { edge, check } of recipe.evidence) {
    try {
      check(run);
    } catch (error) {
      throw new Error(`${where}\nno evidence of ${edge}: ${(error as Error).message}`);
    }
  }

  // Exit code (CONTRACT §4): 0 for a committed iteration or nothing to do, 1 for a refusal or failure,
  // 2 for a bug; a committed re-check whose guard did not pass is a failed check (1).
  const recheckFailed = recipe.command[0] === "recheck" && end === "committed" && run.meta?.guard_outcome !== "pass";
  expect(result.exitCode, where).toBe((end === "committed" && !recheckFailed) || end === "nothingToDo" ? 0 : end === "crashed" ? 2 : 1);
  expect(json?.outcome, where).toBe(
    { committed: "committed", nothingToDo: "nothing-to-do", refused: "refused", failed: "failed", crashed: "crashed" }[end],
  );

  // The repository ends as the seeds require.
  const committed = end === "committed" || p.edges.some((edge) => edge.key === "commit:done:hadRunnerError");
  const head = await s.head();
  if (!committed) {
    const after = await repoState(s);
    expect(head, `${where}\nno commit`).toBe(headBefore);
    if (end === "crashed") {
      // A bug commits nothing; an iteration that had begun (journaled before the agent) is left for the next step to record.
      // (a re-check is journaled by prepareRecheck itself: when that fails, nothing was)
      const journaled =
        ["execute", "guard", "recover", "resumeInterrupted"].some((state) => p.states.includes(state)) &&
        !p.edges.some((edge) => edge.key === "prepareRecheck:error");
      expect(existsSync(s.journalFile()), `${where}\nthe journal`).toBe(journaled);
      if (!journaled) expect(after.status, `${where}\nnothing changed`).toBe(before.status);
    } else if (p.states.includes("persist")) {
      // Persisting or committing failed: the agent's changes stay in the working tree, not lost.
      expect(after.status, `${where}\nthe changes are kept`).not.toBe("");
    } else {
      // Refused, nothing to do, or failed before the agent ran: nothing changed.
      expect(after.status, `${where}\nnothing changed`).toBe(before.status);
    }
    if (end === "refused" || end === "nothingToDo") {
      // Not even the local logs: no iteration began. (A refusal in buildPrompt leaves its transitions
      // in events.jsonl: a finding, pinned by the test "FINDING: ..." below.)
      expect(
        after.ignored.filter((line) => !line.endsWith(`/${RUN}/events.jsonl`)),
        `${where}\nno local logs`,
      ).toEqual(before.ignored);
      expect(existsSync(path.join(s.dir, s.iterFile(iteration, ""))), `${where}\nno iteration folder`).toBe(false);
    }
    return;
  }
  expect(await s.git(["rev-list", "--count", `${headBefore}..HEAD`]), where).toBe("1");
  expect(await s.git(["status", "--porcelain", "--untracked-files=all"]), `${where}\na clean working tree after the commit`).toBe("");
  const meta = run.meta!;
  expect(meta.commit, where).toBe(head);
  expect((await s.git(["log", "-1", "--format=%s"])).trim(), where).toBe(meta.subject);
  const message = await s.message();
  const text = s.read(TREE_FILE);
  if (message.includes("Runner-Tree: invalid")) {
    // Left as the agent wrote it, for the next (repair) step.
    expect(checkTreeShape(safeParse(text)).problems.length + (safeParse(text) === undefined ? 1 : 0), where).toBeGreaterThan(0);
    expect(meta.tree_problems, where).not.toEqual([]);
  } else {
    const written = JSON.parse(text) as TaskTree;
    expect(checkTreeShape(written).problems, `${where}\na valid tree`).toEqual([]);
    expect(text, `${where}\nthe tree in canonical form`).toBe(serializeTree(written));
    expect(checkDerivedPasses(written), where).toEqual([]);
    if (meta.node_id) {
      const selected = findNode(written, meta.node_id)!;
      expect({ attempts: selected.attempts, passes: selected.passes }, where).toEqual({ attempts: meta.attempts_after, passes: meta.passes_after });
    }
  }
  if (meta.runner_error) {
    // Seed 002 "Runner Error Recovery": retry, guard skipped, attempts unchanged, not fed back as a failure.
    expect([meta.agent_status, meta.guard_outcome], where).toEqual([meta.step_kind === "recheck" ? null : "retry", "skipped"]);
    expect(meta.failure, where).toBeNull();
    expect(meta.attempts_after, `${where}\nno attempt counted`).toBe(meta.attempts_before);
    if (meta.node_id && treeBefore) expect(meta.attempts_before, where).toBe(findNode(JSON.parse(treeBefore) as TaskTree, meta.node_id)?.attempts);
  } else if (meta.step_kind === "recheck") {
    // A re-check: a green guard passes the leaf (and the plan-finished leaves judged with it), nothing else changes (no agent tried).
    expect(meta.attempts_after, where).toBe(meta.attempts_before);
    expect(meta.passes_after, where).toBe(meta.guard_outcome === "pass");
    const written = JSON.parse(text) as TaskTree;
    for (const id of meta.rechecked as string[])
      expect(
        findNode(written, id)?.passes,
        `${where}
${id} judged with it`,
      ).toBe(true);
  } else if (meta.step_kind === "leaf") {
    // Seed 002's transition table.
    const status = meta.agent_status;
    const guard = meta.guard_outcome;
    const before = meta.attempts_before!;
    const increment = status === "retry" || (status === "done" && guard === "fail");
    expect(meta.attempts_after, `${where}\n${status}/${guard}`).toBe(increment && before < meta.max_attempts! ? before + 1 : before);
    if (status === "done" && guard === "pass") expect(meta.passes_after, where).toBe(true);
    if (guard !== "pass") expect(meta.passes_after, where).toBe(false);
  }
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------

describe("model-based tests, system layer: the built binary on model paths", () => {
  it("every transition has a system recipe or is listed as machine-layer only; selected paths cover every state and transition", () => {
    for (const key of Object.keys(MACHINE_LAYER_ONLY)) {
      expect(
        CANDIDATES.some((p) => p.edges.some((edge) => edge.key === key)),
        `${key} is listed as machine-layer only but a scenario can take it`,
      ).toBe(false);
    }
    const cover = coverage(SELECTED);
    const unsupported = ALL_PATHS.filter((p) => FINAL_STATES.includes(p.end)).length - CANDIDATES.length;
    console.log(
      `${formatCoverage("system layer", cover, SELECTED.length)} — ${CANDIDATES.length} buildable simple paths to final states (${unsupported} need faults no scenario makes)`,
    );
    expect(cover.states.missing, "states no scenario reaches").toEqual([]);
    const missing = EDGES.filter((edge) => !SELECTED.some((p) => p.edges.includes(edge)) && !(edge.key in MACHINE_LAYER_ONLY)).map(describeEdge);
    expect(missing, "transitions no scenario takes (add a recipe, or list them in MACHINE_LAYER_ONLY and the docs)").toEqual([]);
    for (const state of FINAL_STATES)
      expect(
        SELECTED.some((p) => p.end === state),
        `a scenario ends in ${state}`,
      ).toBe(true);
  });

  it("a refusal in buildPrompt (invalid node policy) leaves no transitions in events.jsonl", async () => {
    // run-step.ts writes an iteration's transitions only once it is certain to be recorded; the next
    // real iteration gets the same number.
    const s = await scenario({ tree: TWO_LEAVES, files: { ".runner/nodes/a/policy.json": "{ not json" } });
    const result = await s.step();
    expect(result.exitCode).toBe(1);
    expect(s.exists(`.runner/iterations/${RUN}/events.jsonl`), "events.jsonl after a refusal").toBe(false);
  });

  describe.concurrent.each(SELECTED.map((p) => [p.name, p] as const))("%s", (_name, p) => {
    it("runner step takes the path; the repository ends as the seeds require", async () => {
      await runPath(p);
    });
  });
});
