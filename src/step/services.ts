// The real actors of the iteration machine: each gathers facts or writes results through one
// adapter; the machine and src/core decide everything. Created per step by a factory that receives
// the step's dependencies (repository, environment, clock, abort signal, progress callback).
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { fromPromise } from "xstate";
import type {
  AgentRunFacts,
  CollectedFacts,
  GuardFacts,
  IterationContext,
  InterruptedState,
  IterationRecord,
  LoadedState,
  PromptFacts,
} from "../../machines/iteration.js";
import { serializeTree, serializeTreeBody } from "../core/serialize.js";
import type { ConfigResult } from "../core/config.js";
import { LAYOUT } from "../core/layout.js";
import { formatCommitMessage, lastLeafNode, leftTreeInvalid, loopRecords, nodeRecords, renderHistory, type LoopRecord } from "../core/loop-history.js";
import { checkAgentTree } from "../core/iteration.js";
import { formatProblem, jsonSyntaxMessage } from "../core/problems.js";
import { buildLeafPrompt, buildRepairPrompt, BUILTIN_TEMPLATES, type PromptKind } from "../core/prompt-pack.js";
import { loopSubjectPattern, runIdFromBranch, runIdProblem, type CommitSubject } from "../core/run-id.js";
import { journalStatus, type RepositoryFacts } from "../core/safety.js";
import { selectLeftmostOpenLeaf } from "../core/select.js";
import { redactSecrets, secretValues } from "../core/text-limits.js";
import type { TaskNode, TaskTree } from "../core/tree.js";
import { changedPathList, gitDir, GitRepo, type LoopCommit } from "../adapters/git.js";
import { quietly, startEarlyReads, type EarlyReads } from "./early-reads.js";
import { acceptedTree, checkedOutBranch, lastValidTree } from "../adapters/run-trees.js";
import { readJournal, removeJournal, writeJournal } from "../adapters/journal.js";
import { IterationLog } from "../adapters/iteration-log.js";
import { loadConfig, loadPolicy, loadTree, projectPath, readOptional } from "../adapters/project-files.js";
import { outcomeOf, runProcess } from "../adapters/process-runner.js";
import { checkTreeText, MAX_TREE_BYTES, writeTreeBody, type TreeLoad } from "../adapters/tree-store.js";
import { executorFor } from "../adapters/executors/registry.js";

export type Phase = "prompt" | "agent" | "guard" | "commit";

export interface ProgressEvent {
  type: "phase" | "output";
  phase: Phase;
  iteration?: number;
  nodeId?: string;
  title?: string;
  text?: string;
}

export interface StepDeps {
  root: string;
  /** The environment the runner was started with (agents and guards inherit it). */
  env: Record<string, string>;
  /** Wall clock for logs and deadlines only; nothing decided depends on it. */
  now: () => number;
  abortSignal?: AbortSignal;
  onProgress?: (event: ProgressEvent) => void;
  /** The repository's first git reads, started by the CLI before the machine's modules load. */
  early?: EarlyReads;
}

/** What the step's actors share while one iteration runs. */
export interface StepState {
  git: GitRepo;
  secrets: string[];
  log?: IterationLog;
  /** The iteration budget's deadline, set when the agent starts (shared by agent and guard). */
  deadlineMs?: number;
  prompt?: string;
  gitDir?: string;
  facts?: RepositoryFacts;
  /**
   * The tree file as this step loaded and checked it, when the iteration starts from it (a leaf
   * step): the working tree was clean, so it is also HEAD's. The agent's tree is this same object
   * when the agent left the file alone.
   */
  loadedTree?: TaskTree;
  /** Whether that file's text holds a secret value (tree.before.json must then be redacted, not copied). */
  loadedTreeHasSecret?: boolean;
}

const OPERATION_MARKERS: [string, string][] = [
  ["MERGE_HEAD", "merge"],
  ["rebase-merge", "rebase"],
  ["rebase-apply", "rebase"],
  ["CHERRY_PICK_HEAD", "cherry-pick"],
  ["REVERT_HEAD", "revert"],
];

function leafTitle(context: IterationContext): string | undefined {
  if (!context.previousTree || !context.selection) return undefined;
  const selection = selectLeftmostOpenLeaf(context.previousTree);
  return selection.kind === "leaf" ? selection.leaf.title : undefined;
}

export function commitSubjectOf(record: IterationRecord): CommitSubject {
  if (record.stepKind === "repair" || record.kind === "repair") return { kind: "repair", runId: record.runId, iteration: record.iteration };
  return { kind: record.kind, runId: record.runId, iteration: record.iteration, nodeId: record.nodeId!, guard: record.guard };
}

/** loadState's reads, begun with the step so that they overlap the safety check's git processes. */
interface Prefetched {
  config: Promise<ConfigResult>;
  tree: Promise<TreeLoad>;
  /** The loop commits of the run id that --run-id or the checked-out branch names, if any. */
  commits: Promise<{ runId: string; commits: LoopCommit[] } | undefined>;
}

export function createStepActors(deps: StepDeps & { runIdOption?: string }) {
  const state: StepState = { git: new GitRepo(deps.root), secrets: secretValues(deps.env) };
  const file = (relative: string) => projectPath(deps.root, relative);
  const progress = (event: ProgressEvent) => deps.onProgress?.(event);

  // Reading the config and the tree and listing the run's commits do not depend on what the safety
  // check finds: begin them now, while its git processes run. Nothing is written; a step that is
  // refused or records an interrupted iteration leaves them unused. Failures surface in loadState,
  // exactly where they did when it began the reads itself.
  const earlyStatus = deps.early?.status;
  let prefetched: Prefetched | undefined = {
    config: quietly(loadConfig(deps.root)),
    tree: quietly(loadTree(deps.root)),
    commits: quietly(
      (async () => {
        const runId = deps.runIdOption ?? runIdFromBranch(await checkedOutBranch(deps.root));
        if (runId === undefined || runIdProblem(runId) !== undefined) return undefined;
        // After the safety check's `git status`: started beside it, the two git processes and the
        // tree's parse would share two CPUs three ways.
        await earlyStatus?.catch(() => undefined);
        return { runId, commits: await state.git.loopCommits(loopSubjectPattern(runId)) };
      })(),
    ),
  };

  const logFor = (context: IterationContext): IterationLog => {
    if (!state.log || state.log.iteration !== context.iteration) {
      state.log = new IterationLog(deps.root, context.runId!, context.iteration!, state.secrets);
    }
    return state.log;
  };

  const inspectRepository = fromPromise<RepositoryFacts, { runIdOption: string | undefined }>(async () => {
    const dir = await gitDir(deps.root);
    state.gitDir = dir;
    const early = deps.early ?? startEarlyReads(state.git);
    deps.early = undefined; // a later step of the same process reads afresh
    const [status, ignored, journal] = await Promise.all([early.status, early.ignored, readJournal(dir)]);
    const operation = OPERATION_MARKERS.find(([marker]) => existsSync(path.join(dir, marker)));
    const facts: RepositoryFacts = {
      branch: status.branch,
      head: status.head,
      dirtyPaths: changedPathList(status.changes),
      logsIgnored: ignored.length === 2,
      operationInProgress: operation?.[1],
    };
    state.facts = facts;
    if (journal) {
      const headSubject = status.head === undefined ? undefined : (await state.git.raw(["log", "-1", "--format=%s", "HEAD"])).trim();
      const verdict = journalStatus(journal, status.branch, status.head, headSubject);
      // A journal whose iteration was committed, or whose branch moved on by other hands, is spent.
      if (verdict === "committed" || verdict === "abandoned") await removeJournal(dir);
      else facts.interrupted = { ...journal, status: verdict };
    }
    return facts;
  });

  /** Config, history and the tree the interrupted iteration began from (HEAD's, if the runner accepted it). */
  const loadInterrupted = fromPromise<InterruptedState, { runId: string }>(async ({ input }) => {
    const [config, commits, headText] = await Promise.all([
      loadConfig(deps.root),
      state.git.loopCommits(loopSubjectPattern(input.runId)),
      state.git.showFile("HEAD", LAYOUT.tree),
    ]);
    if (!config.ok) throw new Error(`${LAYOUT.config} is invalid: ${formatProblem(config.problems[0]!)}`);
    const records = loopRecords(commits, input.runId);
    const head = headText === undefined ? undefined : checkTreeText(headText);
    const accepted = records[0] && leftTreeInvalid(records[0]) ? undefined : head?.ok ? head.tree : undefined;
    const previousTree = accepted ?? (await acceptedTree(state.git, records)) ?? (await lastValidTree(state.git));
    if (!previousTree) throw new Error("no valid task tree exists in this branch's history");
    // A temp file of an atomic write the kill cut short must not be committed.
    await removeStaleTempFiles(path.dirname(file(LAYOUT.tree)));
    return { config: config.config, records, previousTree };
  });

  const loadState = fromPromise<LoadedState, { runId: string }>(async ({ input }) => {
    const early = prefetched;
    prefetched = undefined;
    const [config, tree, commits] = await Promise.all([
      early?.config ?? loadConfig(deps.root),
      early?.tree ?? loadTree(deps.root),
      (async () => {
        const listed = await early?.commits.catch(() => undefined);
        return listed?.runId === input.runId ? listed.commits : state.git.loopCommits(loopSubjectPattern(input.runId));
      })(),
    ]);
    const records = loopRecords(commits, input.runId);
    const loaded: LoadedState = {
      config,
      tree: tree.ok ? { ok: true, tree: tree.tree } : { ok: false, problems: tree.problems, missing: tree.missing },
      records,
    };
    // After an iteration that left the tree invalid (committed as the agent wrote it), the tree must
    // be checked against the last one the runner accepted, as the agent's tree was: a changed passed
    // node or a removed selected leaf is valid on its own.
    const accepted = records[0] && leftTreeInvalid(records[0]) ? await acceptedTree(state.git, records) : undefined;
    if (tree.ok && accepted) {
      const { problems } = checkAgentTree(accepted, tree.tree, lastLeafNode(records));
      if (problems.length > 0) {
        loaded.tree = { ok: false, problems };
        loaded.lastValidTree = accepted;
      }
    } else if (!tree.ok && !tree.missing) {
      loaded.lastValidTree = accepted ?? (await lastValidTree(state.git));
    }
    if (tree.ok && loaded.tree.ok) {
      state.loadedTree = tree.tree;
      // Only this is kept of the text (on a large tree, tens of MB the step no longer holds).
      state.loadedTreeHasSecret = state.secrets.some((secret) => tree.text.includes(secret));
    }
    return loaded;
  });

  const preparePrompt = fromPromise<PromptFacts, { context: IterationContext }>(async ({ input: { context } }) => {
    // An invalid policy sidecar refuses the iteration: checked before anything is written, so that a
    // runner killed right after the refusal leaves no journal of an iteration that never began.
    const selected = context.stepKind === "repair" ? undefined : selectLeftmostOpenLeaf(context.previousTree!);
    const policy = selected?.kind === "leaf" ? await loadPolicy(deps.root, selected.leaf.id) : undefined;
    if (policy && policy.problems.length > 0) {
      return { allowedWritePaths: undefined, policyProblem: `${policy.file} is invalid: ${formatProblem(policy.problems[0]!)}; fix it (\`runner validate\` lists every problem) and run \`runner step\` again.` };
    }
    const log = logFor(context);
    log.ensureDir();
    // From here on the iteration changes things: journal it, so that a runner killed before the
    // commit is noticed and recorded by the next step.
    if (state.gitDir && state.facts?.branch && state.facts.head) {
      await writeJournal(state.gitDir, {
        runId: context.runId!,
        iteration: context.iteration!,
        branch: state.facts.branch,
        head: state.facts.head,
        stepKind: context.stepKind === "repair" ? "repair" : "leaf",
        nodeId: context.stepKind === "repair" ? null : (context.selection?.leafId ?? null),
        startedAt: new Date(deps.now()).toISOString(),
      });
    }
    progress({ type: "phase", phase: "prompt", iteration: context.iteration, nodeId: context.selection?.leafId, title: leafTitle(context) });
    const config = context.config!;
    const contextDir = file(LAYOUT.context);
    const writeContext = (name: string, text: string) => writeFile(path.join(contextDir, name), redactSecrets(text, state.secrets));
    const kind: PromptKind = context.stepKind === "repair" ? "repair" : "leaf";
    if (selected && selected.kind !== "leaf") throw new Error("buildPrompt without an open leaf");
    const leaf = selected?.kind === "leaf" ? selected : undefined;
    // The reads are independent of each other and of clearing the context folder: all at once.
    const [goalText, templateText, , leafFacts] = await Promise.all([
      readOptional(file(LAYOUT.goal)),
      readOptional(file(`${LAYOUT.prompts}/${kind}.md`)),
      rm(contextDir, { recursive: true, force: true }).then(() => mkdir(contextDir, { recursive: true })),
      leaf
        ? Promise.all([
            lastFailure(deps.root, context.runId!, context.records, leaf.leaf.id, leaf.path.slice(0, -1).map((node) => node.id)),
            readOptional(file(`${LAYOUT.nodes}/${leaf.leaf.id}/context.md`)),
            Promise.all(
              ([["Assumptions", LAYOUT.assumptions], ["Open questions", LAYOUT.questions], ["Feedback", LAYOUT.feedback], ["Improvements", LAYOUT.improvements]] as const).map(
                async ([name, relative]) => ({ name: `${name} (${relative})`, text: await readOptional(file(relative)) }),
              ),
            ),
          ])
        : undefined,
    ]);
    const goal = goalText ?? "";
    const template = templateText ?? BUILTIN_TEMPLATES[kind];
    let prompt: string;
    let allowedWritePaths: string[] | undefined;
    if (!leaf || !leafFacts) {
      const problems = context.treeProblems.map((p) => `- ${formatProblem(p)}`).join("\n");
      prompt = buildRepairPrompt({ goal, problems: context.treeProblems, lastValidTree: context.previousTree, outputFile: log.file("output.json") }, template);
      await Promise.all([
        writeContext("goal.md", goal),
        writeContext("node.md", "# REPAIR TREE\n\nNo leaf is selected: restore .runner/state/tree.json to a valid tree.\n"),
        writeContext("history.md", "A repair step has no node history.\n"),
        writeContext("failure.md", `# Problems of .runner/state/tree.json\n\n${problems}\n`),
      ]);
    } else {
      const [failure, nodeContext, notes] = leafFacts;
      allowedWritePaths = policy?.allowedWritePaths;
      const history = renderHistory(context.records, leaf.leaf.id);
      prompt = buildLeafPrompt(
        {
          tree: context.previousTree!,
          path: leaf.path,
          stuck: leaf.stuck,
          goal,
          history,
          failure: failure ?? "",
          nodeContext,
          notes,
          guardCommand: config.guard.command,
          protectedPaths: config.guard.protectedPaths,
          allowedWritePaths,
          outputFile: log.file("output.json"),
        },
        template,
      );
      await Promise.all([
        writeContext("goal.md", goal),
        writeContext("node.md", renderNode(leaf.leaf, leaf.path, leaf.stuck)),
        writeContext("history.md", history),
        writeContext("failure.md", failure ?? "No failure recorded for this node.\n"),
      ]);
    }
    // The agent's stdin and RUNNER_PROMPT_FILE carry the same text, secrets redacted (CONTRACT §6, §9).
    state.prompt = redactSecrets(prompt, state.secrets);
    log.write("prompt.md", state.prompt);
    // A leaf step starts from the file as loaded (the working tree was clean, the agent has not run
    // yet): tree.before.json is that file, byte for byte, copied, or redacted if it holds a secret.
    // A repair starts from the last valid tree in history, written in canonical form.
    if (context.previousTree !== undefined && context.previousTree === state.loadedTree) {
      if (state.loadedTreeHasSecret) log.write("tree.before.json", (await readOptional(file(LAYOUT.tree))) ?? "");
      else log.copyFile("tree.before.json", file(LAYOUT.tree));
    } else {
      log.write("tree.before.json", context.previousTree ? serializeTree(context.previousTree) : "");
    }
    return { allowedWritePaths };
  });

  const runAgent = fromPromise<AgentRunFacts, { context: IterationContext }>(async ({ input: { context } }) => {
    const log = logFor(context);
    const config = context.config!;
    state.deadlineMs = deps.now() + config.limits.iterationTimeoutSeconds * 1000;
    progress({ type: "phase", phase: "agent", iteration: context.iteration, nodeId: context.selection?.leafId, title: leafTitle(context) });
    const env = {
      ...deps.env,
      RUNNER_PROMPT_FILE: log.file("prompt.md"),
      RUNNER_OUTPUT_FILE: log.file("output.json"),
      RUNNER_RUN_ID: context.runId!,
      RUNNER_ITERATION: String(context.iteration),
      RUNNER_NODE_ID: context.stepKind === "repair" ? "" : context.selection!.leafId,
      RUNNER_STEP_KIND: context.stepKind === "repair" ? "repair" : "leaf",
      RUNNER_REPO_ROOT: deps.root,
    };
    const result = await executorFor(config.executor.kind).run({
      root: deps.root,
      config: config.executor,
      prompt: state.prompt ?? "",
      promptFile: log.file("prompt.md"),
      outputFile: log.file("output.json"),
      env,
      deadlineMs: state.deadlineMs,
      logFile: log.file("executor.log"),
      capBytes: config.limits.outputCapBytes,
      secrets: state.secrets,
      abortSignal: deps.abortSignal,
      onOutput: (chunk) => progress({ type: "output", phase: "agent", iteration: context.iteration, text: chunk }),
    });
    return { ...outcomeOf(result), argv: result.argv.map((arg) => redactSecrets(arg, state.secrets)) };
  });

  const collectResult = fromPromise<CollectedFacts, { context: IterationContext }>(async ({ input: { context } }) => {
    const log = logFor(context);
    const [outputText, status] = await Promise.all([readOptional(log.file("output.json")), state.git.status()]);
    const changedPaths = changedPathList(status.changes);
    // A tree file git does not list as changed, with HEAD where it was, is still the one this step
    // loaded and checked (the working tree was clean then): hand that tree over instead of reading
    // and checking it again. If HEAD moved (the agent committed, or switched branches), read it.
    const headKept = state.facts !== undefined && status.head === state.facts.head && status.branch === state.facts.branch;
    if (state.loadedTree !== undefined && context.previousTree === state.loadedTree && headKept && !changedPaths.includes(LAYOUT.tree)) {
      return { outputText, treeData: { ok: true, data: state.loadedTree }, changedPaths };
    }
    const treeData = await readTreeData(file(LAYOUT.tree));
    // A fresh parse belongs to this step alone: the state update may work on it in place.
    return treeData.ok ? { outputText, treeData, changedPaths, treeOwned: true } : { outputText, treeData, changedPaths };
  });

  const runGuard = fromPromise<GuardFacts, { context: IterationContext }>(async ({ input: { context } }) => {
    const log = logFor(context);
    const config = context.config!;
    progress({ type: "phase", phase: "guard", iteration: context.iteration, nodeId: context.selection?.leafId, title: leafTitle(context) });
    const result = await runProcess({
      argv: config.guard.command,
      cwd: deps.root,
      env: { ...deps.env, RUNNER_RUN_ID: context.runId!, RUNNER_ITERATION: String(context.iteration), RUNNER_NODE_ID: context.selection?.leafId ?? "" },
      deadlineMs: state.deadlineMs ?? deps.now() + config.limits.iterationTimeoutSeconds * 1000,
      logFile: log.file("guard.log"),
      capBytes: config.limits.outputCapBytes,
      secrets: state.secrets,
      abortSignal: deps.abortSignal,
      onOutput: (chunk) => progress({ type: "output", phase: "guard", iteration: context.iteration, text: chunk }),
    });
    return { ...outcomeOf(result), output: result.excerpt };
  });

  const persistIteration = fromPromise<void, { record: IterationRecord }>(async ({ input: { record } }) => {
    const log = state.log ?? new IterationLog(deps.root, record.runId, record.iteration, state.secrets);
    state.log = log;
    if (record.treeToWrite) {
      // Serialized once: the tree file is written from it, and tree.after.json is a copy of the
      // file (the text itself, redacted, only if it holds a secret; otherwise it is not kept).
      const body = serializeTreeBody(record.treeToWrite);
      const redacted = log.redacts(body, true) ? `${body}\n` : undefined;
      await writeTreeBody(file(LAYOUT.tree), body);
      if (redacted === undefined) log.copyFile("tree.after.json", file(LAYOUT.tree));
      else log.write("tree.after.json", redacted);
    } else {
      log.write("tree.after.json", (await readOptional(file(LAYOUT.tree))) ?? "");
    }
    if (record.runnerError) log.write("runner_error.log", `${record.runnerError.kind}: ${record.runnerError.message}\n`);
  });

  const commitIteration = fromPromise<{ sha: string }, { record: IterationRecord }>(async ({ input: { record } }) => {
    progress({ type: "phase", phase: "commit", iteration: record.iteration, nodeId: record.nodeId });
    const log = state.log ?? new IterationLog(deps.root, record.runId, record.iteration, state.secrets);
    const message = redactSecrets(
      formatCommitMessage(commitSubjectOf(record), {
        summary: record.summary,
        status: record.stepKind === "repair" ? undefined : record.status,
        attempts: record.attemptsAfter !== undefined && record.maxAttempts !== undefined ? { after: record.attemptsAfter, max: record.maxAttempts } : undefined,
        runnerError: record.runnerError ? `${record.runnerError.kind}: ${record.runnerError.message}` : undefined,
        failure: record.failure?.split("\n")[0],
        treeLeftInvalid: record.treeToWrite === undefined,
      }),
      state.secrets,
    );
    // Changes to protected paths (the guard's own files, the runner's config) never reach the branch:
    // they are kept in the log and the files restored, so the agent cannot make its own guard pass.
    if (record.protectedChanged.length > 0) {
      // Files the agent created show in the patch once git knows of them (intent to add).
      const present = record.protectedChanged.filter((relative) => existsSync(file(relative)));
      if (present.length > 0) await state.git.raw(["add", "--intent-to-add", "--", ...present]).catch(() => "");
      log.write("protected.patch", await state.git.raw(["diff", "--binary", "--no-color", "HEAD", "--", ...record.protectedChanged]).catch(() => ""));
      await state.git.restorePaths(record.protectedChanged);
    }
    const [, identity] = await Promise.all([state.git.addAll(), state.git.identity()]);
    const base = state.facts?.head ?? "HEAD";
    // diff.patch (against the commit the iteration began from, so it can run beside the commit)
    // leaves out the tree file: tree.before.json and tree.after.json hold it whole.
    const [patch] = await Promise.all([
      state.git.stagedPatch(base, [LAYOUT.tree]),
      state.git.commit(message, identity.name === undefined || identity.email === undefined),
    ]);
    const sha = await state.git.headCommit(state.gitDir ?? (await gitDir(deps.root)));
    log.write("diff.patch", patch);
    if (state.gitDir) await removeJournal(state.gitDir);
    return { sha };
  });

  return {
    state,
    actors: { inspectRepository, loadInterrupted, loadState, preparePrompt, runAgent, collectResult, runGuard, persistIteration, commitIteration },
  };
}

/** Removes temp files of atomic writes (`.<name>.<pid>.tmp`) a killed runner left in a folder. */
async function removeStaleTempFiles(dir: string): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[]);
  await Promise.all(names.filter((name) => /^\..+\.[0-9]+\.tmp$/.test(name)).map((name) => rm(path.join(dir, name), { force: true })));
}

/** The tree file parsed as JSON (size-limited), or the parse problem; schema checks come later. */
async function readTreeData(treeFile: string): Promise<CollectedFacts["treeData"]> {
  const info = await stat(treeFile).catch(() => undefined);
  if (!info) return { ok: false, problems: [{ path: "$", message: "the file was deleted" }] };
  if (info.size > MAX_TREE_BYTES) return { ok: false, problems: [{ path: "$", message: `the file is over the ${MAX_TREE_BYTES / 1024 / 1024} MiB limit` }] };
  const text = await readFile(treeFile, "utf8");
  try {
    return { ok: true, data: JSON.parse(text) };
  } catch (error) {
    return { ok: false, problems: [{ path: "$", message: jsonSyntaxMessage(text, error) }] };
  }
}

/**
 * The last guard failure or contract violation on this node: the newest of its iterations (runner
 * errors left out) if it failed, in full from the local log, else the commit trailer's first line.
 * When the run's previous iteration (runner errors and repairs left out) was on an ancestor and
 * failed — `done`/`retry` that added children, which are kept — its reason goes to this node, the
 * next one selected (CONTRACT §7: the reason reaches the next iteration).
 */
async function lastFailure(root: string, runId: string, records: readonly LoopRecord[], nodeId: string, ancestorIds: readonly string[]): Promise<string | undefined> {
  const own = nodeRecords(records, nodeId);
  let latest = own[own.length - 1];
  const previous = records.find((record) => record.subject.kind !== "repair" && record.trailers.error === undefined);
  if (previous && previous.subject.kind !== "repair" && ancestorIds.includes(previous.subject.nodeId) && previous.trailers.failure) latest = previous;
  if (!latest?.trailers.failure) return undefined;
  const meta = await readOptional(path.join(root, ...`${LAYOUT.iterations}/${runId}/${String(latest.subject.iteration).padStart(4, "0")}/meta.json`.split("/")));
  if (meta) {
    try {
      const failure = (JSON.parse(meta) as { failure?: unknown }).failure;
      if (typeof failure === "string" && failure.length > 0) return `Iteration ${latest.subject.iteration}: ${failure}`;
    } catch {
      // a damaged local log falls back to the commit
    }
  }
  return `Iteration ${latest.subject.iteration}: ${latest.trailers.failure}`;
}

function renderNode(leaf: TaskNode, path: TaskNode[], stuck: boolean): string {
  const acceptance = leaf.acceptance.length > 0 ? leaf.acceptance.map((line) => `- ${line}`).join("\n") : "(none given)";
  const lines = [
    `# ${leaf.id} — ${leaf.title}`,
    "",
    `Path: ${path.map((node) => node.id).join(" › ")}`,
    `Attempts: ${leaf.attempts} of ${leaf.max_attempts}${stuck ? " (stuck: decompose it)" : ""}`,
    "",
    "## Goal",
    "",
    leaf.goal || "(none given)",
    "",
    "## Acceptance",
    "",
    acceptance,
    "",
  ];
  return lines.join("\n");
}

