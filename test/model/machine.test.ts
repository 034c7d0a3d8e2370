// Model-based tests, machine layer: every path of the model (test/model/paths.ts) drives the REAL
// iteration machine (`iterationMachine.provide({ actors })`) with scripted actors that settle as the
// path says, one transition at a time, and checks at every state what must hold there (seed 001 §5,
// seed 002): the transition the machine took and the state it is in, `context.path`, the tree a
// commit writes (valid, canonical, derived passes), seed 002's transition table in `updateState`,
// its recovery table after `recover` (retry, guard skipped, no attempt counted), what each final
// state outputs and which actors ran. Then every state and every transition of the machine must be
// covered by some path: a new state or transition without one fails here.
//
// Each transition needs facts that make exactly its guard the first that holds: FACTS below builds
// them (RepositoryFacts, LoadedState, PromptFacts, AgentRunFacts, CollectedFacts, GuardFacts, ...)
// from real trees. Where a transition can be reached with several kinds of facts (a dirty working
// tree or a protected branch; a timeout or an abort), the path is driven once per variant.
import { setImmediate as tick } from "node:timers/promises";
import {
  createActor,
  fromPromise,
  type Actor,
  type AnyActorRef,
  type AnyMachineSnapshot,
  type AnyStateMachine,
  type AnyTransitionDefinition,
} from "xstate";
import { describe, expect, it } from "vitest";
import { createIterationMachine, iterationMachine } from "../../machines/iteration.js";
import type {
  AgentPhase,
  AgentRequest,
  AnswerPhase,
  CollectRequest,
  CommitFacts,
  CommitRequest,
  GuardPhase,
  GuardRequest,
  IterationStart,
  LoadRequest,
  PersistRequest,
  PromptRequest,
  RecheckPrepareRequest,
  StepInput,
  StepOutput,
  UpdatePhase,
} from "../../machines/iteration-types.js";
import { createRecorder, type MachineStep, type Recorder, type Transition } from "../../machines/recorder.js";
import type { Judgement } from "../../src/core/guard/classify.js";
import type { InterruptedIteration } from "../../src/core/step/safety.js";
import type { LeafSelection } from "../../src/core/tree/select.js";
import type { RunnerErrorFact } from "../../src/core/step/step-facts.js";
import type { SafetyVerdict } from "../../src/core/step/step-verdicts.js";
import { iterationRecord, type IterationRecord } from "../../src/core/step/iteration-record.js";
import type {
  AgentGitFacts,
  AgentRunFacts,
  CollectedFacts,
  GuardFacts,
  InterruptedState,
  LoadedState,
  PromptFacts,
} from "../../src/core/step/step-facts.js";
import { GitError } from "../../src/errors.js";
import { parseAgentOutput } from "../../src/core/agent/agent-output.js";
import { serializeTree } from "../../src/core/tree/canonical.js";
import { resolveConfig, type ResolvedConfig } from "../../src/core/config/config.js";
import { checkDerivedPasses, checkTreeShape } from "../../src/core/tree/invariants.js";
import type { LoopRecord } from "../../src/core/commit/loop-history.js";
import type { Problem } from "../../src/core/base/problems.js";
import type { CommitSubject } from "../../src/core/commit/commit-message.js";
import type { RepositoryFacts } from "../../src/core/step/safety.js";
import { selectLeftmostOpenLeaf } from "../../src/core/tree/select.js";
import { walkTree, type TaskNode, type TaskTree } from "../../src/core/tree/tree.js";
import { node, tree } from "../helpers/sandbox.js";
import {
  CHILD_MACHINES,
  EDGES,
  FACT_DECIDED_CONTEXT_GUARDS,
  GRAPH,
  FINAL_STATES,
  INVOKES,
  MODEL_CONTEXT_GUARDS,
  STATES,
  coverage,
  describeEdge,
  formatCoverage,
  machineCoverage,
  machinePaths,
  recordedTransitions,
  type ModelContext,
  type ModelEdge,
  type ModelPath,
} from "./paths.js";

// ---------------------------------------------------------------------------------------------
// Fact builders.

const RUN = "t1";
const HEAD = "0123456789abcdef0123456789abcdef01234567";
const SHA = "89abcdef0123456789abcdef0123456789abcdef";
const POLICY_FILE = ".runner/nodes/a/policy.json";
const TREE_FILE = ".runner/state/tree.json";

function configOf(raw: unknown): ResolvedConfig {
  const result = resolveConfig(raw);
  if (!result.ok) throw new Error(`test config invalid: ${JSON.stringify(result.problems)}`);
  return result.config;
}

const CONFIG = configOf({
  executor: { kind: "command", command: ["node", "agent.mjs"] },
  guard: { command: ["node", "guard.mjs"] },
  limits: { iteration_timeout_seconds: 60, max_repair_attempts: 2 },
});

/** root → p (passed), a (attempts 1, selected first), b (attempts 2 of 2). */
const LEAF_TREE = tree(
  node("root", {
    children: [node("p", { order: 0, passes: true }), node("a", { order: 1, attempts: 1 }), node("b", { order: 2, attempts: 2, max_attempts: 2 })],
  }),
);
/** The same with a stuck: attempts saturate. */
const STUCK_TREE = tree(
  node("root", {
    children: [node("p", { order: 0, passes: true }), node("a", { order: 1, attempts: 3, max_attempts: 3 }), node("b", { order: 2 })],
  }),
);
/** An imported plan's tree: a and b are marked finished (FINISHED_LEAVES) and never attempted; c is open work. */
const FINISHED_TREE = tree(
  node("root", {
    children: [node("p", { order: 0, passes: true }), node("a", { order: 1 }), node("c", { order: 2 }), node("b", { order: 3 })],
  }),
);
const FINISHED_LEAVES = ["a", "b"];
const ALL_PASSED = tree(node("root", { passes: true, children: [node("p", { passes: true }), node("a", { order: 1, passes: true, attempts: 2 })] }));

const clone = <T>(value: T): T => structuredClone(value);

function find(t: TaskTree, id: string): TaskNode | undefined {
  for (const { node: n } of walkTree(t)) if (n.id === id) return n;
  return undefined;
}

/** A tree as an agent might write it: runner-owned fields tampered with, which the runner must reset. */
function tampered(t: TaskTree, selectedId: string | undefined): TaskTree {
  const copy = clone(t);
  for (const { node: n } of walkTree(copy)) {
    if (n.passes) continue; // passed nodes are immutable: changing them leaves the tree invalid
    n.attempts = 0;
    if (n.id !== selectedId && n.children.length === 0) n.passes = true;
  }
  copy.root.passes = false;
  return copy;
}

const problem = (message: string): Problem => ({ path: "$", message });

function repositoryFacts(overrides: Partial<RepositoryFacts> = {}): RepositoryFacts {
  return {
    branch: `runner/${RUN}`,
    head: HEAD,
    dirtyPaths: [],
    logsIgnored: true,
    operationInProgress: undefined,
    control: { config: { text: "[core]\n", mode: 0o644 } },
    controlRestored: [],
    runStarts: {},
    ...overrides,
  };
}

const GUARD_PROGRAM = { file: "/usr/bin/node", signature: "1:2:3:4:5:6" };
const IDENTITY = { name: "Test Author", email: "author@example.com" };

function loaded(fields: Partial<LoadedState> & Pick<LoadedState, "tree">): LoadedState {
  return { config: { ok: true, config: CONFIG }, records: [], guardProgram: GUARD_PROGRAM, preflight: [], identity: IDENTITY, ...fields };
}

const NO_GIT_TRICKS: AgentGitFacts = { controlChanged: [], operations: [], agentCommits: [], hiddenByIgnoreRules: [], nestedRepositories: [] };

function loopRecord(subject: CommitSubject, trailers: Record<string, string> = {}): LoopRecord {
  return { sha: `${subject.iteration}`.padStart(40, "0"), subject, summary: `iteration ${subject.iteration}`, trailers };
}

/** Records newest first, as the branch's history gives them. */
const repairRecords = (count: number, from = 1): LoopRecord[] =>
  Array.from({ length: count }, (_, i) => loopRecord({ kind: "repair", runId: RUN, iteration: from + count - 1 - i }, { tree: "invalid" }));
const leafRecord = (nodeId: string, trailers: Record<string, string> = {}): LoopRecord =>
  loopRecord({ kind: "execute", runId: RUN, iteration: 1, nodeId, guard: "fail" }, { status: "done", ...trailers });

function agentRun(fields: Partial<AgentRunFacts> = {}): AgentRunFacts {
  return {
    exitCode: 0,
    timedOut: false,
    aborted: false,
    spawnError: undefined,
    durationMs: 1200,
    argv: ["node", "agent.mjs"],
    deadlineMs: 1_700_000_000_000,
    ...fields,
  };
}

function guardRun(fields: Partial<GuardFacts> = {}): GuardFacts {
  return { exitCode: 0, timedOut: false, aborted: false, spawnError: undefined, durationMs: 300, output: "guard output", ...fields };
}

type Status = "done" | "retry" | "decomposed";

function collected(fields: { output?: Status | string | null; tree: unknown; changed: string[] }): CollectedFacts {
  const output = fields.output;
  const outputText =
    output === null || output === undefined
      ? undefined
      : ["done", "retry", "decomposed"].includes(output)
        ? JSON.stringify({ status: output, summary: `the agent said ${output}` })
        : output;
  return {
    answer: parseAgentOutput(outputText),
    treeData:
      fields.tree instanceof Error
        ? { ok: false, problems: [problem(`is not valid JSON (${fields.tree.message})`)] }
        : { ok: true, data: clone(fields.tree) },
    changedPaths: [...fields.changed].sort(),
    git: NO_GIT_TRICKS,
  };
}

/** The agent's tree with children added under `id`. */
function withChildren(t: TaskTree, id: string, ids: string[]): TaskTree {
  const copy = clone(t);
  find(copy, id)!.children.push(...ids.map((child, order) => node(child, { order })));
  return copy;
}

// ---------------------------------------------------------------------------------------------
// The plan: how each actor of a path settles.

type Settle = { kind: "done"; output: unknown } | { kind: "error"; error: Error };

/** What the facts of a path set up, for the checks. */
interface World {
  input: StepInput;
  stepKind?: "leaf" | "repair" | "recheck";
  /** The tree the iteration starts from. */
  previousTree?: TaskTree;
  /** The selected leaf (or the journal's node). */
  selectedId?: string;
  /** The node that must survive the agent (the selected leaf, or the node a repair follows). */
  requiredNodeId?: string;
  allowedWritePaths?: string[];
  /** The iteration leaves the agent's tree as it is, for a repair step: nothing to write. */
  leftInvalid: boolean;
  /** The iteration number the facts imply. */
  iteration?: number;
}

interface FactArgs {
  world: World;
  /** One of several kinds of facts that all take this transition, by the run's variant. */
  pick: <T>(options: readonly T[]) => T;
  /** The transition the path takes out of `state`, if it gets there. */
  next: (state: string) => ModelEdge | undefined;
}

/**
 * Facts for every `done` transition (keyed `<state>:done[:<guard>]`), built so that exactly that
 * transition's guard is the first that holds. `error` transitions need no facts (the actor rejects);
 * `always` transitions are decided by facts of earlier actors, which look ahead with `next`.
 */
const FACTS: Record<string, (args: FactArgs) => unknown> = {
  "safetyCheck:always:repositoryUnsafe": ({ pick }) =>
    repositoryFacts(
      pick<Partial<RepositoryFacts>>([
        { branch: "main" },
        { branch: undefined },
        { dirtyPaths: ["src/wip.ts"] },
        { operationInProgress: "rebase" },
        { logsIgnored: false },
        { branch: "feature" },
        { head: undefined },
        { interrupted: { runId: RUN, iteration: 4, branch: "runner/other", head: HEAD, stepKind: "leaf", nodeId: "a", status: "other-branch" } },
      ]),
    ),
  "safetyCheck:always:wasInterrupted": ({ world, pick }) => {
    const journal = pick<{ stepKind: "leaf" | "repair" | "recheck"; nodeId: string | null }>([
      { stepKind: "leaf", nodeId: "a" },
      { stepKind: "repair", nodeId: null },
      { stepKind: "recheck", nodeId: "a" },
    ]);
    world.stepKind = journal.stepKind;
    world.selectedId = journal.nodeId ?? undefined;
    world.requiredNodeId = journal.nodeId ?? undefined;
    world.iteration = 3;
    return repositoryFacts({
      dirtyPaths: ["src/a.ts"],
      interrupted: { runId: RUN, iteration: 3, branch: `runner/${RUN}`, head: HEAD, ...journal, status: "resume" },
    });
  },
  "safetyCheck:always:repositorySafe": ({ world, pick }) => {
    const variant = pick([
      { facts: repositoryFacts(), input: {} },
      { facts: repositoryFacts({ branch: "feature" }), input: { runIdOption: RUN } },
    ]);
    Object.assign(world.input, variant.input);
    return variant.facts;
  },
  "resumeInterrupted:done": ({ world }): InterruptedState => {
    world.previousTree = LEAF_TREE;
    return {
      config: CONFIG,
      records: [leafRecord("a")],
      previousTree: LEAF_TREE,
      treeFromStart: true,
      guardProgram: GUARD_PROGRAM,
      identity: IDENTITY,
    };
  },
  "loadTree:always:configInvalid": ({ pick }) =>
    loaded({
      config: { ok: false, problems: [{ path: "$.limits.iteration_timeout_seconds", message: "must be >= 1" }] },
      tree: pick<LoadedState["tree"]>([
        { ok: true, tree: LEAF_TREE },
        { ok: false, problems: [problem("the file does not exist")], missing: true },
      ]),
    }),
  "loadTree:always:preflightFailed": ({ world, pick }) => {
    const finding = pick([
      {
        problem:
          "The guard is `just ci` but justfile has no `ci` recipe; add one that runs the project's checks (or set [guard] command in .runner/state/config.toml), commit it, and try again.",
        agent: false,
      },
      {
        problem:
          'The agent\'s program "codex" ([executor] kind = "codex") is not on PATH; install the Codex CLI (`npm install -g @openai/codex`) or choose another [executor] kind in .runner/state/config.toml.',
        agent: true,
      },
    ]);
    // A re-check runs no agent: only a guard's problem refuses it.
    if (!finding.agent && pick([false, true])) world.input.recheck = {};
    return loaded({ tree: { ok: true, tree: LEAF_TREE }, preflight: [finding] });
  },
  "loadTree:always:treeMissing": ({ pick }) =>
    loaded({
      tree: { ok: false, problems: [problem("the file does not exist")], missing: true },
      records: pick([[], repairRecords(CONFIG.limits.maxRepairAttempts)]),
    }),
  // A person removed the open child of a parent (by hand): the parent's passes disagrees with its children.
  "loadTree:always:passesDisagree": ({ pick }) =>
    loaded({
      tree: { ok: true, tree: tree(node("root", { children: [node("p", { passes: true })] })) },
      records: pick([[], [leafRecord("a")]]),
    }),
  "loadTree:always:treeValid": ({ world, pick, next }) => {
    const selecting = next("selectLeaf")?.guard;
    const rootPasses = selecting === "rootPasses";
    // A leaf an imported plan marks finished, not judged yet: the guard alone judges it (and b with it).
    if (selecting === "finishedSelected") {
      const records = pick([[], [leafRecord("p")]]);
      Object.assign(world, { previousTree: FINISHED_TREE, stepKind: "recheck", selectedId: "a", requiredNodeId: "a", iteration: records.length + 1 });
      return loaded({ tree: { ok: true, tree: FINISHED_TREE }, records, finished: FINISHED_LEAVES });
    }
    const start = rootPasses ? ALL_PASSED : pick([LEAF_TREE, STUCK_TREE]);
    const records = pick([[], [leafRecord("a")]]);
    world.previousTree = start;
    world.stepKind = selecting === "recheckSelected" || selecting === "recheckRefused" ? "recheck" : "leaf";
    // A finished leaf an iteration of the run has already judged is the agent's like any other.
    const finished = selecting === "leafSelected" && records.length > 0 && pick([false, true]) ? { finished: ["a"] } : {};
    const selection = selectLeftmostOpenLeaf(start);
    world.selectedId = selection.kind === "leaf" ? selection.leaf.id : undefined;
    // `runner recheck`: the leftmost open leaf, or one a person names (b is open, stuck or not);
    // refused for a passed node, a parent, or an id the tree does not hold.
    if (selecting === "recheckSelected") {
      world.input.recheck = pick([{}, { nodeId: "b" }]);
      world.selectedId = world.input.recheck.nodeId ?? world.selectedId;
    }
    if (selecting === "recheckRefused") world.input.recheck = { nodeId: pick(["p", "root", "zz"]) };
    world.requiredNodeId = world.selectedId;
    world.iteration = records.length + 1;
    return loaded({ tree: { ok: true, tree: start }, records, ...finished });
  },
  "loadTree:always:repairsExhausted": ({ pick }) =>
    loaded({
      tree: { ok: false, problems: [problem("is not valid JSON (Unexpected token)")] },
      records: [...repairRecords(CONFIG.limits.maxRepairAttempts, 2), leafRecord("a", { tree: "invalid" })],
      lastValidTree: pick([LEAF_TREE, undefined]),
    }),
  "loadTree:always:noValidTreeInHistory": ({ pick }) =>
    loaded({
      tree: { ok: false, problems: [problem("is not valid JSON (Unexpected token)")] },
      records: pick([[], repairRecords(CONFIG.limits.maxRepairAttempts - 1)]),
    }),
  "loadTree:always:recheckOnInvalidTree": ({ world }) => {
    world.input.recheck = {};
    return loaded({
      tree: { ok: false, problems: [problem("is not valid JSON (Unexpected token)")] },
      records: [leafRecord("a", { tree: "invalid" })],
      lastValidTree: LEAF_TREE,
    });
  },
  "prepareRecheck:done": () => ({ deadlineMs: 1_700_000_000_000 }),
  "loadTree:always:treeInvalid": ({ world, pick }) => {
    const records = pick([[], [leafRecord("a", { tree: "invalid" })]]);
    world.previousTree = LEAF_TREE;
    world.stepKind = "repair";
    world.requiredNodeId = records.length > 0 ? "a" : undefined;
    world.iteration = records.length + 1;
    return loaded({ tree: { ok: false, problems: [problem("is not valid JSON (Unexpected token)")] }, records, lastValidTree: LEAF_TREE });
  },
  "buildPrompt:always:policyInvalid": (): PromptFacts => ({
    prompt: "",
    policy: { file: POLICY_FILE, problems: [problem("is not valid JSON")], allowedWritePaths: undefined },
  }),
  "buildPrompt:always:promptReady": ({ world, pick }): PromptFacts => {
    world.allowedWritePaths = pick([undefined, ["src/"]]);
    const policy = world.allowedWritePaths ? { file: POLICY_FILE, problems: [], allowedWritePaths: world.allowedWritePaths } : undefined;
    return { prompt: "the leaf prompt", policy };
  },
  "repairTree:done": (): PromptFacts => ({ prompt: "the repair prompt", policy: undefined }),
  "execute:always:agentStopped": ({ pick }) =>
    agentRun(
      pick([
        { exitCode: undefined, timedOut: true },
        { exitCode: undefined, aborted: true },
      ]),
    ),
  "execute:always:agentFailed": ({ pick }) =>
    agentRun(
      pick<Partial<AgentRunFacts>>([
        { exitCode: 1, failure: "codex failed (exit code 1): unexpected status 503 Service Unavailable" },
        {
          exitCode: 1,
          failure: "claude failed (exit code 1): You've hit your limit · resets 3pm",
          limit: { kind: "usage", resetsAt: "2026-11-22T15:00:00.000Z", message: "You've hit your limit · resets 3pm" },
        },
      ]),
    ),
  "execute:always:agentNotStarted": () => agentRun({ exitCode: undefined, spawnError: 'cannot start "nope": no such program (ENOENT)' }),
  "execute:always:agentFinished": ({ pick }) => agentRun(pick([{ exitCode: 0 }, { exitCode: 3 }])),
  "reloadTree:always:outputInvalid": ({ world, pick }) =>
    collected({
      output: pick([null, "this is not JSON", JSON.stringify({ status: "finished", summary: "x" })]),
      tree: world.previousTree,
      changed: ["src/a.ts"],
    }),
  "reloadTree:always:agentTreeInvalid": ({ world, pick }) => {
    world.leftInvalid = true;
    const previous = world.previousTree!;
    const variants: unknown[] = [new Error("Unexpected end of JSON input"), { version: 1, root: { id: "root" } }];
    const passed = [...walkTree(previous)].find(({ node: n }) => n.passes);
    if (passed) {
      const changed = clone(previous);
      find(changed, passed.node.id)!.title = "rewritten by the agent";
      variants.push(changed);
    }
    if (world.requiredNodeId !== undefined) {
      const removed = clone(previous);
      for (const { node: n } of walkTree(removed)) n.children = n.children.filter((child) => child.id !== world.requiredNodeId);
      variants.push(removed);
    }
    const below = [...walkTree(previous)].find(({ node: n }) => n.attempts >= 2 && !n.passes);
    if (below) {
      const lowered = clone(previous);
      find(lowered, below.node.id)!.max_attempts = 1;
      variants.push(lowered);
    }
    return collected({ output: "done", tree: pick(variants), changed: [TREE_FILE] });
  },
  "reloadTree:always:repairAccepted": ({ world }) =>
    collected({ output: "done", tree: tampered(world.previousTree!, undefined), changed: [TREE_FILE] }),
  "reloadTree:always:leafAccepted": ({ world, pick, next }) => {
    const previous = world.previousTree!;
    const id = world.selectedId!;
    if (next("classify")?.guard === "guardRequired" || next("classify") === undefined) {
      // EXECUTE + done, no contract or policy violation: the guard runs. The agent rewrote the tree
      // file (its runner-owned fields tampered with), or git finds it untouched (not read again).
      const untouched: CollectedFacts = {
        ...collected({ output: "done", tree: previous, changed: ["src/a.ts"] }),
        treeData: { ok: true, unchanged: true },
      };
      return pick([collected({ output: "done", tree: tampered(previous, id), changed: ["src/a.ts"] }), untouched]);
    }
    const variants = [
      collected({ output: "decomposed", tree: withChildren(previous, id, [`${id}1`, `${id}2`]), changed: [TREE_FILE] }),
      // done on a DECOMPOSE iteration: the guard does not run, nothing passes.
      collected({ output: "done", tree: previous, changed: [".runner/state/assumptions.md"] }),
      collected({ output: "retry", tree: tampered(previous, id), changed: ["src/a.ts"] }),
      // a protected path changed: the guard stage fails without running.
      collected({ output: "done", tree: previous, changed: [".runner/state/config.toml", "src/a.ts"] }),
      // contract violations: decomposed without children, done with children.
      collected({ output: "decomposed", tree: previous, changed: [TREE_FILE] }),
      collected({ output: "done", tree: withChildren(previous, id, [`${id}1`]), changed: [TREE_FILE, "src/a.ts"] }),
    ];
    if (world.allowedWritePaths) variants.push(collected({ output: "done", tree: previous, changed: ["docs/outside.md"] }));
    return pick(variants);
  },
  "guard:always:guardStopped": ({ pick }) =>
    guardRun(
      pick([
        { exitCode: undefined, timedOut: true },
        { exitCode: undefined, aborted: true },
      ]),
    ),
  "guard:always:guardNotStarted": () => guardRun({ exitCode: undefined, spawnError: 'cannot start "just": no such program (ENOENT)' }),
  "guard:always:guardFinished": ({ pick }) =>
    guardRun(pick([{ exitCode: 0 }, { exitCode: 1, output: "2 tests failed" }, { exitCode: undefined, output: "killed by SIGSEGV" }])),
  "recover:done": ({ world, pick }) => {
    const variant = pick(["valid", "invalid", "no-output"] as const);
    if (variant === "invalid") world.leftInvalid = true;
    const previous = world.previousTree!;
    if (variant === "valid") return collected({ output: "done", tree: tampered(previous, world.selectedId), changed: ["src/a.ts"] });
    if (variant === "invalid") return collected({ output: "done", tree: new Error("Unexpected token }"), changed: [TREE_FILE] });
    return collected({ output: null, tree: previous, changed: [] });
  },
  "persist:done": () => undefined,
  "commit:done:hadRunnerError": () => ({ sha: SHA }),
  "commit:done": () => ({ sha: SHA }),
};

interface Plan {
  variant: number;
  settles: Map<string, Settle>;
  world: World;
  /** How many variants the richest transition of the path has. */
  variants: number;
}

function planFor(path: ModelPath, variant: number): Plan {
  let variants = 1;
  const world: World = { input: {}, leftInvalid: false };
  const pick = <T>(options: readonly T[]): T => {
    variants = Math.max(variants, options.length);
    return options[variant % options.length]!;
  };
  const next = (state: string) => path.edges.find((edge) => edge.from === state);
  const settles = new Map<string, Settle>();
  for (const edge of path.edges) {
    // An `always` branch out of a state that invokes an actor: the actor settles with facts that make its verdict.
    if (edge.outcome === "always" && !INVOKES.has(edge.from)) continue;
    const actor = INVOKES.get(edge.from)!;
    if (edge.outcome === "error") {
      if (edge.from === "recover") world.leftInvalid = true;
      // A bug is any unexpected exception; a runner error is one of the runner's own (git, the file system).
      const error =
        edge.guard === "isBug"
          ? new TypeError(`${actor} read a property of undefined (scripted)`)
          : new GitError(`git failed in ${actor} (scripted)`);
      settles.set(actor, { kind: "error", error });
      continue;
    }
    const build = FACTS[edge.key];
    if (!build) throw new Error(`no facts for ${describeEdge(edge)}: add a builder for "${edge.key}" to FACTS in test/model/machine.test.ts`);
    settles.set(actor, { kind: "done", output: build({ world, pick, next }) });
  }
  return { variant, settles, world, variants };
}

// ---------------------------------------------------------------------------------------------
// The driver: the real machines, their actors settled one transition at a time.

/**
 * What the iteration's machines know at a point of the run: the contexts of every machine that has
 * run so far merged in the order they started, each with the input it handed to the next child (its
 * route's `input`). The machines name each record alike (`start`, `leaf`, `answer`, `judgement`,
 * `guard`, `update`, …), so this reads as the one context the iteration has: what the checks below
 * and `iterationRecord` read.
 */
interface View {
  request?: StepInput;
  safety?: SafetyVerdict;
  runId?: string;
  interrupted?: InterruptedIteration;
  start?: IterationStart;
  leaf?: LeafSelection;
  batch?: readonly string[];
  agent?: AgentPhase;
  answer?: AnswerPhase;
  judgement?: Judgement;
  guard?: GuardPhase;
  deadlineMs?: number;
  update?: UpdatePhase;
  runnerError?: RunnerErrorFact;
  journalNodeId?: string;
  /** The branch selectLeaf takes. */
  selection?: string;
  /** The selection of a re-check of plan-finished leaves, as a record reads it. */
  selected?: { kind: string; batch?: readonly string[] };
}

/** One transition the recorder recorded with a target (one model edge), and what the machines knew after it. */
interface Step {
  transition: Transition;
  /** The machine transitions it is made of: a child's, then the parent's route when it went into a final state. */
  steps: MachineStep[];
  view: View;
  /** The state of the machine whose state the transition entered. */
  value: unknown;
}

/** The machine each state of the flat graph belongs to (a child's id, or the parent's for its final states). */
const OWNER: ReadonlyMap<string, string> = new Map([
  ...GRAPH.clusters.flatMap((cluster) => cluster.states.map((state) => [state, cluster.id] as const)),
  ...FINAL_STATES.map((state) => [state, GRAPH.id] as const),
]);

class Driver {
  /** The recorded transitions with a target (one per model edge). */
  readonly steps: Step[] = [];
  /** The runner's own recorder (meta.json path, events.jsonl), fed by the same inspection events. */
  readonly recorder: Recorder;
  /** Every actor the machines invoked, in order, with its input. */
  readonly invoked: { id: string; input: unknown }[] = [];
  /** The latest snapshot of each machine that has run, by its id, in the order they started. */
  private readonly latest = new Map<string, AnyMachineSnapshot>();
  /** The state each machine started in (a child whose first state is eventless leaves it as it starts). */
  private readonly startedIn = new Map<string, unknown>();
  private readonly pending = new Map<string, { resolve: (value: unknown) => void; reject: (error: unknown) => void }>();
  readonly actor: Actor<typeof iterationMachine>;

  constructor(readonly plan: Plan) {
    const scripted = <T, I>() =>
      fromPromise<T, I>(({ input, self }) => {
        this.invoked.push({ id: self.id, input });
        return new Promise<T>((resolve, reject) => this.pending.set(self.id, { resolve: resolve as (value: unknown) => void, reject }));
      });
    const machine = createIterationMachine({
      inspectRepository: scripted<RepositoryFacts, { runIdOption: string | undefined }>(),
      loadInterrupted: scripted<InterruptedState, LoadRequest>(),
      loadState: scripted<LoadedState, LoadRequest>(),
      preparePrompt: scripted<PromptFacts, PromptRequest>(),
      prepareRecheck: scripted<{ deadlineMs: number }, RecheckPrepareRequest>(),
      runAgent: scripted<AgentRunFacts, AgentRequest>(),
      collectResult: scripted<CollectedFacts, CollectRequest>(),
      runGuard: scripted<GuardFacts, GuardRequest>(),
      persistIteration: scripted<void, PersistRequest>(),
      commitIteration: scripted<CommitFacts, CommitRequest>(),
    });
    this.recorder = createRecorder(GRAPH, {
      onTransition: (transition, steps) => {
        if (!steps.some((step) => step.transition.target !== undefined)) return;
        const owner = OWNER.get(transition.to) ?? "";
        // Into the next child (through the parent's route): the state that child started in.
        const value = steps.length > 1 && owner !== GRAPH.id ? this.startedIn.get(owner) : this.latest.get(owner)?.value;
        this.steps.push({ transition, steps, view: this.view(), value });
      },
    });
    this.actor = createActor(machine, {
      input: plan.world.input,
      inspect: (event) => {
        if (event.type === "@xstate.microstep") this.capture({ snapshot: event.snapshot as AnyMachineSnapshot, _transitions: event._transitions });
        this.recorder.inspect(event);
      },
    });
  }

  /** A machine's snapshot after a microstep, and those of the child machines it has started. */
  private capture(event: { snapshot: AnyMachineSnapshot; _transitions: AnyTransitionDefinition[] }): void {
    const { snapshot } = event;
    if (!this.startedIn.has(snapshot.machine.id)) this.startedIn.set(snapshot.machine.id, event._transitions[0]?.source.key ?? snapshot.value);
    this.latest.set(snapshot.machine.id, snapshot);
    for (const child of Object.values(snapshot.children as Record<string, AnyActorRef | undefined>)) {
      const childSnapshot = child?.getSnapshot() as AnyMachineSnapshot | undefined;
      if (!childSnapshot?.machine) continue;
      if (!this.startedIn.has(childSnapshot.machine.id)) this.startedIn.set(childSnapshot.machine.id, childSnapshot.value);
      this.latest.set(childSnapshot.machine.id, childSnapshot);
    }
  }

  view(): View {
    const view: Record<string, unknown> = {};
    for (const snapshot of this.latest.values()) {
      const context = snapshot.context as Record<string, unknown> & { route?: { input?: object } };
      Object.assign(view, context, context.route?.input);
    }
    const batch = view.batch as readonly string[] | undefined;
    return { ...(view as View), ...(batch !== undefined ? { selected: { kind: "selected", batch } } : {}) };
  }

  /** The state the running machines rest in: the parent's final state, or the running child's state. */
  restsIn(): unknown {
    const parent = this.actor.getSnapshot();
    const child = (parent.children as Record<string, { getSnapshot(): AnyMachineSnapshot } | undefined>)[String(parent.value)];
    return child ? child.getSnapshot().value : parent.value;
  }

  /** Settles the actor invoked by `state` as planned. */
  settle(state: string): void {
    const id = INVOKES.get(state)!;
    const pending = this.pending.get(id);
    if (!pending) throw new Error(`the machine rests in ${String(this.restsIn())}; no ${id} actor is running to settle`);
    this.pending.delete(id);
    const settle = this.plan.settles.get(id);
    if (!settle) throw new Error(`the plan has no outcome for ${id}`);
    if (settle.kind === "done") pending.resolve(settle.output);
    else pending.reject(settle.error);
  }

  /** Lets the settled promise reach the machines (and their eventless transitions run). */
  async until(count: number): Promise<void> {
    for (let i = 0; i < 20 && this.steps.length < count; i++) await tick();
  }

  inputOf(id: string): unknown {
    return [...this.invoked].reverse().find((entry) => entry.id === id)?.input;
  }
}

// ---------------------------------------------------------------------------------------------
// What must hold in each state.

/** The step's kind: the start record's, or before it, the interrupted iteration's journal's. */
function stepKindOf(context: View): string | undefined {
  return context.start?.stepKind ?? (context.safety?.kind === "interrupted" ? context.safety.interrupted.stepKind : undefined);
}

/** The agent's answer, when the result verdict carries one. */
function outputOf(context: View) {
  const verdict = context.answer?.verdict;
  return verdict && "output" in verdict ? verdict.output : undefined;
}

/** The selection found a leaf (to work on, or to re-check). */
function leafWasSelected(context: View): boolean {
  return context.selection === "leafSelected" || context.selection === "finishedSelected" || context.selection === "recheckSelected";
}

/** The run the step works on, as the machines know it. */
function runIdOf(context: View): string | undefined {
  return context.runId ?? context.start?.runId;
}

/** The iteration the step records, once it is numbered (an interrupted one: as its journal names it). */
function iterationNamed(context: View): { runId: string; iteration: number } | undefined {
  const named = context.start ?? context.interrupted;
  return named ? { runId: named.runId, iteration: named.iteration } : undefined;
}

const guardOf = (transition: AnyTransitionDefinition): string | undefined => {
  const guard = transition.guard as unknown;
  if (guard === undefined) return undefined;
  return typeof guard === "string" ? guard : String((guard as { type?: unknown }).type ?? "inline");
};

/** Seed 002's transition table, written out again: what happens to the selected node. */
function expectedSelected(previous: TaskNode, after: TaskNode, outcome: { status: Status; guard: string }) {
  const increment = outcome.status === "retry" || (outcome.status === "done" && outcome.guard === "fail");
  const attempts = increment && previous.attempts < after.max_attempts ? previous.attempts + 1 : previous.attempts;
  const setTrue = outcome.status === "done" && outcome.guard === "pass";
  const passes = after.children.length > 0 ? after.children.every((child) => child.passes) : setTrue || previous.passes;
  return { attempts, passes };
}

/** Runner-owned fields of every node except `except` come from the previous tree (new nodes: false / 0). */
function expectRunnerOwnedKept(previous: TaskTree, next: TaskTree, except: string | readonly string[] | undefined): void {
  const skipped = new Set(typeof except === "string" ? [except] : (except ?? []));
  for (const { node: after } of walkTree(next)) {
    if (skipped.has(after.id)) continue;
    const before = find(previous, after.id);
    expect(after.attempts, `attempts of ${after.id}`).toBe(before?.attempts ?? 0);
    if (after.children.length === 0) expect(after.passes, `passes of leaf ${after.id}`).toBe(before?.passes ?? false);
  }
  expect(checkDerivedPasses(next), "parents' passes derived from their children").toEqual([]);
}

/** The runner error kinds the transition into `recover` may record (a stop: the budget, or Ctrl-C). */
function runnerErrorKinds(edge: ModelEdge): string[] {
  if (edge.guard === "agentStopped" || edge.guard === "guardStopped") return ["executor_timeout", "interrupted"];
  if (edge.guard === "outputInvalid") return ["output_parse_error"];
  if (edge.guard === "agentFailed") return ["agent_failed", "agent_limit"];
  if (edge.from === "guard") return ["guard_error"];
  return ["other"];
}

const OUTCOME_OF_FINAL: Record<string, StepOutput["outcome"]> = {
  committed: "committed",
  nothingToDo: "nothing-to-do",
  refused: "refused",
  failed: "failed",
  crashed: "crashed",
};

function checkState(driver: Driver, path: ModelPath, k: number): void {
  const state = path.states[k]!;
  const edge = path.edges[k - 1];
  const plan = driver.plan;
  const where = `${path.name} (facts variant ${plan.variant}), step ${k} (${state})`;
  const step = k === 0 ? undefined : driver.steps[k - 1];
  if (k > 0 && !step) {
    throw new Error(
      `${where}: the machine did not take ${describeEdge(edge!)}; it rests in ${String(driver.restsIn())} with path ${JSON.stringify(driver.recorder.path)}`,
    );
  }
  const context = step ? step.view : driver.view();

  // The transition the machines took is the model's, and they are where the model is: one child's
  // transition, followed (when it went into the child's final state) by the parent's route, the
  // machine transitions the flat graph says the edge is made of.
  if (edge && step) {
    const [taken, route, ...more] = step.steps;
    expect(more, where).toEqual([]);
    const t = taken!.transition;
    expect({ from: t.source.key, event: t.eventType || "always", guard: guardOf(t) }, where).toEqual({
      from: edge.from,
      event: edge.event,
      guard: edge.guard,
    });
    expect({ from: step.transition.from, event: step.transition.event, to: step.transition.to }, where).toEqual({
      from: edge.from,
      event: edge.event,
      to: edge.to,
    });
    const via = GRAPH.through[EDGES.indexOf(edge)]!;
    expect(
      step.steps.map((s) => ({ machine: s.machine, from: s.transition.source.key, to: s.transition.target?.map((n) => n.key) })),
      `${where}: the machine transitions`,
    ).toEqual(
      via.map((ref) => {
        const machine = GRAPH.machines.find((m) => m.id === ref.machine)!;
        const transition = machine.transitions[ref.index]!;
        return { machine: machine.id, from: transition.from, to: [transition.to] };
      }),
    );
    if (route) expect((route.transition.guard as { params?: { to?: string } } | undefined)?.params?.to, where).toBe(t.target?.[0]?.key);
  }
  expect(step ? step.value : driver.restsIn(), where).toBe(state);
  // What the recorder keeps for meta.json and events.jsonl: the states entered, every transition
  // taken (`always` told apart from the actor event before it), and before an `always` branch out
  // of an actor's state, the actor's result recorded as a transition to the same state.
  const recorder = driver.recorder;
  expect(recorder.path.slice(0, k + 1), `${where}: recorded path`).toEqual(path.states.slice(0, k + 1));
  const expectedTransitions = recordedTransitions(path.edges.slice(0, k));
  expect(recorder.transitions[0], `${where}: the start`).toEqual({ from: "(start)", event: "xstate.init", to: "safetyCheck" });
  expect(
    recorder.transitions
      .slice(1)
      .map((t) => `${t.from} ${t.event} ${t.to}`)
      .slice(0, expectedTransitions.length),
    `${where}: recorded transitions`,
  ).toEqual(expectedTransitions);

  // The context agrees with the model's abstraction of it.
  const model: ModelContext = path.contexts[k]!;
  const stepKinds: Record<ModelContext["stepKind"], (string | undefined)[]> = {
    none: [undefined],
    leaf: ["leaf"],
    repair: ["repair"],
    recheck: ["recheck"],
    valid: ["leaf", "recheck"],
    journal: ["leaf", "repair", "recheck"],
  };
  expect(stepKinds[model.stepKind], `${where}: stepKind`).toContain(stepKindOf(context));
  expect(context.runnerError !== undefined, `${where}: runner error`).toBe(model.runnerError);

  // A state that invokes an actor runs exactly it, once.
  if (INVOKES.has(state)) {
    expect(driver.restsIn(), where).toBe(state);
    expect(
      driver.invoked.map((entry) => entry.id).filter((id) => id === INVOKES.get(state)),
      where,
    ).toHaveLength(1);
  }

  switch (state) {
    case "loadTree":
      expect(runIdOf(context), where).toBe(RUN);
      break;
    case "resumeInterrupted":
      expect(iterationNamed(context), where).toEqual({ runId: RUN, iteration: plan.world.iteration });
      expect(context.runnerError?.message, where).toMatch(/stopped .* before committing/);
      break;
    case "selectLeaf": {
      const selection = selectLeftmostOpenLeaf(context.start!.previousTree);
      const named = context.request?.recheck?.nodeId;
      const expected =
        named === undefined ? (selection.kind === "leaf" ? selection.leaf.id : undefined) : leafWasSelected(context) ? named : undefined;
      expect(context.leaf?.leaf.id, where).toBe(expected);
      expect(context.start?.iteration, where).toBe(plan.world.iteration);
      // A plan-finished leaf: every pending one is judged with it, it first.
      const batch = leafWasSelected(context) ? context.batch : undefined;
      if (path.edges.some((e) => e.key === "selectLeaf:always:finishedSelected")) expect(batch, where).toEqual(FINISHED_LEAVES);
      else expect(batch, where).toBeUndefined();
      break;
    }
    case "repairTree":
      expect(context.start?.previousTree, where).toEqual(plan.world.previousTree);
      expect(context.start?.repair?.treeProblems.length, where).toBeGreaterThan(0);
      expect(context.leaf, where).toBeUndefined();
      expect(context.start?.repair?.requiredNodeId, where).toBe(plan.world.requiredNodeId);
      break;
    case "classify": {
      // seed 001 §5 step 7: EXECUTE iff a path outside .runner/ changed.
      const execute = context.answer!.collected.changedPaths.some((p) => !p.startsWith(".runner/"));
      expect(context.judgement?.kind, where).toBe(execute ? "execute" : "decompose");
      break;
    }
    case "guard":
      if (stepKindOf(context) === "recheck") {
        // No agent: the guard alone judges the leaf.
        expect([context.agent, context.judgement, context.answer], where).toEqual([undefined, undefined, undefined]);
        expect(context.deadlineMs, where).toBeDefined();
        break;
      }
      expect(context.judgement?.runGuard, where).toBe(true);
      expect(context.judgement?.kind, where).toBe("execute");
      expect(outputOf(context)?.status, where).toBe("done");
      break;
    case "updateState": {
      const updated = context.update!.updated!;
      expect(checkTreeShape(updated.tree).problems, where).toEqual([]);
      if (stepKindOf(context) === "repair") {
        expect(updated.selected, where).toBeUndefined();
        expectRunnerOwnedKept(context.start!.previousTree, updated.tree, undefined);
      } else {
        const id = context.leaf!.leaf.id;
        const previous = find(context.start!.previousTree, id)!;
        const outcome = context.update!.outcome;
        const after = updated.selected!;
        // A re-check: a green guard passes the leaf; a red one changes nothing (no agent tried).
        const expected =
          stepKindOf(context) === "recheck"
            ? { attempts: previous.attempts, passes: outcome.guard === "pass" }
            : expectedSelected(previous, after, outcome as { status: Status; guard: string });
        expect({ attempts: after.attempts, passes: after.passes }, `${where}: seed 002 table for ${outcome.status}/${outcome.guard}`).toEqual(
          expected,
        );
        // The plan-finished leaves judged with it pass exactly when it does, attempts untouched.
        const batch = context.batch ?? [];
        for (const other of batch.filter((each) => each !== id))
          expect(
            { attempts: find(updated.tree, other)!.attempts, passes: find(updated.tree, other)!.passes },
            `${where}: ${other} judged with ${id}`,
          ).toEqual({
            attempts: find(context.start!.previousTree, other)!.attempts,
            passes: outcome.guard === "pass",
          });
        expectRunnerOwnedKept(context.start!.previousTree, updated.tree, [id, ...batch]);
      }
      break;
    }
    case "recover": {
      expect(context.runnerError, where).toBeDefined();
      if (edge!.from !== "resumeInterrupted") expect(runnerErrorKinds(edge!), where).toContain(context.runnerError!.kind);
      break;
    }
    case "persist": {
      const record = driver.inputOf("persistIteration") as { record: IterationRecord };
      expect(record.record, where).toEqual(iterationRecord(context));
      expect([record.record.runId, record.record.iteration], where).toEqual([RUN, plan.world.iteration]);
      if (edge!.from === "recover") {
        // Seed 002 "Runner Error Recovery": retry, guard skipped, attempts unchanged, error recorded.
        if (edge!.outcome === "done") expect(context.update?.outcome, where).toEqual({ status: "retry", guard: "skipped" });
        expect([record.record.status, record.record.guard], where).toEqual([record.record.stepKind === "recheck" ? undefined : "retry", "skipped"]);
        expect(record.record.attemptsAfter, `${where}: no attempt counted`).toBe(record.record.attemptsBefore);
        expect(record.record.runnerError, where).toBeDefined();
        expect(record.record.failure, `${where}: runner errors are not fed back as a failure`).toBeUndefined();
        if (context.update?.updated) expectRunnerOwnedKept(context.start!.previousTree, context.update.updated.tree, undefined);
      } else {
        expect(record.record.runnerError, where).toBeUndefined();
      }
      if (path.states.includes("guard") && !path.states.includes("recover")) expect(["pass", "fail"], where).toContain(record.record.guard);
      if (!path.states.includes("guard")) expect(["skipped", "fail"], where).toContain(record.record.guard);
      break;
    }
    case "commit": {
      const record = iterationRecord(context);
      expect((driver.inputOf("commitIteration") as { record: IterationRecord }).record, `${where}: commit gets what persist wrote`).toEqual(
        (driver.inputOf("persistIteration") as { record: IterationRecord }).record,
      );
      const written = record.treeToWrite;
      expect(written === undefined, `${where}: the tree is left invalid for a repair step`).toBe(plan.world.leftInvalid);
      if (written) {
        expect(checkTreeShape(written).problems, `${where}: the tree written is valid`).toEqual([]);
        expect(`${JSON.stringify(written, null, 2)}\n`, `${where}: the tree written is canonical`).toBe(serializeTree(written));
        expect(checkTreeShape(JSON.parse(serializeTree(written))).tree, where).toEqual(written);
        expect(checkDerivedPasses(written), where).toEqual([]);
        if (record.nodeId !== undefined) expect(find(written, record.nodeId)?.attempts, where).toBe(record.attemptsAfter);
      } else if (!path.edges.some((e) => e.key === "recover:error")) {
        expect(record.treeProblems.length, where).toBeGreaterThan(0);
      }
      break;
    }
  }

  if (FINAL_STATES.includes(state)) {
    const done = driver.actor.getSnapshot();
    expect(done.status, where).toBe("done");
    const output = done.output as StepOutput;
    expect(output.outcome, where).toBe(OUTCOME_OF_FINAL[state]);
    // The CLI prints this sentence (a committed iteration's is written from its record).
    if (state !== "committed" && state !== "crashed") expect(output.message.length, `${where}: the sentence the CLI prints`).toBeGreaterThan(0);
    // Exactly the actors of the path's states ran, each once: nothing else touched the repository.
    const expectedActors = path.states.filter((s) => INVOKES.has(s)).map((s) => INVOKES.get(s)!);
    expect(
      driver.invoked.map((entry) => entry.id),
      where,
    ).toEqual(expectedActors);
    if (state === "committed" || (state === "failed" && edge!.key === "commit:done:hadRunnerError")) {
      expect(output.commit, where).toBe(SHA);
      expect(output.record, where).toEqual(iterationRecord(context));
    }
    if (state === "failed" && edge!.key === "commit:done:hadRunnerError")
      expect(output.message, where).toMatch(/(runner error|was interrupted).*without using an attempt/);
    if (state === "refused" || state === "nothingToDo" || state === "crashed") expect(output.record, where).toBeUndefined();
    // A bug: the exception is handed to the CLI (exit 2, the stack with --debug); nothing after it ran.
    if (state === "crashed") expect(output.error, where).toBeInstanceOf(TypeError);
    else expect(output.error, where).toBeUndefined();
  }
}

// ---------------------------------------------------------------------------------------------
// The tests.

async function drive(path: ModelPath, variant: number): Promise<Plan> {
  const plan = planFor(path, variant);
  const driver = new Driver(plan);
  const events: Record<string, () => Promise<void>> = {
    "xstate.init": async () => {
      driver.actor.start();
    },
  };
  path.edges.forEach((edge) => {
    events[edge.key] = async () => {
      if (edge.outcome !== "always" || INVOKES.has(edge.from)) driver.settle(edge.from);
    };
  });
  let k = 0;
  try {
    await path.test.test({
      events,
      states: {
        "*": async () => {
          await driver.until(k);
          checkState(driver, path, k);
          k++;
        },
      },
    });
  } finally {
    driver.actor.stop();
  }
  expect(k, `every state of ${path.name} was checked`).toBe(path.states.length);
  return plan;
}

const generated = machinePaths();
const PATHS = generated.paths;
const driven: ModelPath[] = [];

describe("model-based tests, machine layer: the real iteration machine on every model path", () => {
  it("the model has one state per state of the iteration's machines and one event per machine transition", () => {
    // The children's states, and the parent's final states (its other states each invoke a child).
    const finals = (machine: AnyStateMachine) => Object.keys(machine.root.states).filter((key) => machine.root.states[key]!.type === "final");
    expect(STATES).toEqual([
      ...CHILD_MACHINES.flatMap((child) => Object.keys(child.root.states).filter((key) => !finals(child).includes(key))),
      ...finals(iterationMachine),
    ]);
    expect(Object.values(iterationMachine.root.states).filter((node) => node.type !== "final").length).toBe(CHILD_MACHINES.length);
    expect(new Set(EDGES.map((edge) => edge.key)).size, "transition keys are unique").toBe(EDGES.length);
    const targeted = (machine: AnyStateMachine) => {
      let count = 0;
      // (a transition without a target records an actor's result as a verdict: it is checked in the recorded transitions)
      for (const state of Object.values(machine.root.states)) {
        for (const list of state.transitions.values()) count += list.filter((t) => (t.target?.length ?? 0) > 0).length;
        count += state.always?.length ?? 0;
      }
      return count;
    };
    // One model event per child transition; each of the parent's transitions follows a child's final state.
    expect(EDGES.length).toBe(CHILD_MACHINES.reduce((sum, child) => sum + targeted(child), 0));
    const parent = GRAPH.machines[0]!;
    expect(parent.transitions.length).toBe(targeted(iterationMachine));
    expect(parent.transitions.length).toBe(CHILD_MACHINES.reduce((sum, child) => sum + finals(child).length, 0));
    for (const route of parent.transitions) expect(route.to, `${route.from}: a route names the state it leads to`).toBe(route.params?.to);
    // Every guard is either decided by an actor's facts, decided by earlier facts, or tracked by the model
    // (isBug: by the error an actor throws; routesTo: by the child's final state).
    for (const machine of [iterationMachine, ...CHILD_MACHINES]) {
      for (const guard of Object.keys(machine.implementations.guards)) {
        const decided = guard === "isBug" || guard === "routesTo" || EDGES.some((edge) => edge.guard === guard && FACTS[edge.key]);
        expect(
          decided || guard in MODEL_CONTEXT_GUARDS || FACT_DECIDED_CONTEXT_GUARDS.includes(guard),
          `guard ${guard} of ${machine.id} has facts or a model`,
        ).toBe(true);
      }
    }
  });

  it("every transition an actor's result decides has a fact builder", () => {
    const missing = EDGES.filter(
      (edge) => (edge.outcome === "done" || (edge.outcome === "always" && INVOKES.has(edge.from))) && !FACTS[edge.key],
    ).map((edge) => edge.key);
    expect(missing, "add builders to FACTS").toEqual([]);
    expect(
      Object.keys(FACTS).filter((key) => !EDGES.some((edge) => edge.key === key)),
      "builders for transitions the machine no longer has",
    ).toEqual([]);
  });

  describe.each(PATHS.map((path, i) => [`${String(i + 1).padStart(3, "0")} ${path.name}`, path] as const))("%s", (_name, path) => {
    it("the machine takes the path and every state holds", async () => {
      const first = await drive(path, 0);
      for (let variant = 1; variant < first.variants; variant++) await drive(path, variant);
      driven.push(path);
    });
  });

  it("covers every state and every transition of every machine (coverage printed, per machine)", () => {
    // Runs after the paths (tests in a file run in order); counts only paths that passed.
    const cover = coverage(driven);
    const machines = machineCoverage(driven);
    console.log(
      [
        `${formatCoverage("machine layer", cover, driven.length)} — generated ${generated.shortest} shortest + ${generated.simple} simple-to-final paths, ${PATHS.length} after de-duplication`,
        ...machines.map(
          (each) =>
            `  ${formatCoverage(each.machine, each, driven.filter((p) => p.edges.some((e) => GRAPH.through[EDGES.indexOf(e)]!.some((ref) => ref.machine === each.machine))).length)}`,
        ),
      ].join("\n"),
    );
    expect(cover.states.missing, "states no path reaches").toEqual([]);
    expect(cover.transitions.missing, "transitions no path takes").toEqual([]);
    for (const each of machines) {
      expect(each.states.missing, `states of ${each.machine} no path reaches`).toEqual([]);
      expect(each.transitions.missing, `transitions of ${each.machine} no path takes`).toEqual([]);
    }
    expect(driven.length).toBe(PATHS.length);
  });
});
