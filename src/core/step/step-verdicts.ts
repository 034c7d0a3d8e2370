// The machine's decisions, one verdict per fact an actor reports (seed 001 §5, seed 002). Each
// verdict is assigned to the machine's context once; the machine's branches only read its `kind`,
// and the kinds of one verdict exclude each other, so the order of the branches does not matter.
import type { Judgement } from "../guard/classify.js";
import type { ResolvedConfig } from "../config/config.js";
import { checkDerivedPasses } from "../tree/invariants.js";
import { checkAgentTree, failureFeedback, guardFailure } from "./iteration.js";
import { lastLeafNode, nextIterationNumber, trailingRepairs, type LoopRecord } from "../commit/loop-history.js";
import { formatProblem, type Problem } from "../base/problems.js";
import { effectiveRunId, safetyRefusal, type InterruptedIteration, type RepositoryFacts } from "./safety.js";
import { RUNNER_ERROR_RECOVERY, stoppedError } from "./runner-errors.js";
import { applyStateUpdates, type AgentStatus, type GuardOutcome, type StateUpdateResult } from "../tree/state-update.js";
import type { AgentRunFacts, CollectedFacts, GuardFacts, LoadedState, RunnerErrorFact } from "./step-facts.js";
import { selectLeftmostOpenLeaf, selectionOf, type LeafSelection } from "../tree/select.js";
import { pendingFinished, recheckBatch } from "../plan/plan-finished.js";
import type { TaskTree } from "../tree/tree.js";
import type { AgentOutput } from "../../schemas/types.generated.js";

// 1. Safety.

export type SafetyVerdict =
  | { kind: "unsafe"; message: string }
  | { kind: "interrupted"; interrupted: InterruptedIteration; runnerError: RunnerErrorFact }
  | { kind: "safe"; runId: string };

export function judgeRepository(facts: RepositoryFacts, runIdOption: string | undefined): SafetyVerdict {
  const refusal = safetyRefusal(facts, runIdOption);
  if (refusal !== undefined) return { kind: "unsafe", message: refusal };
  const interrupted = facts.interrupted;
  if (interrupted?.status === "resume") {
    const message = `the runner stopped (killed or crashed) during iteration ${interrupted.iteration} before committing it`;
    return { kind: "interrupted", interrupted, runnerError: { kind: "runner_stopped", message } };
  }
  return { kind: "safe", runId: effectiveRunId(facts, runIdOption) };
}

// 2. Load and validate.

export interface StartingPoint {
  config: ResolvedConfig;
  records: LoopRecord[];
  iteration: number;
  previousTree: TaskTree;
}

export type LoadVerdict =
  | {
      kind:
        | "configInvalid"
        | "preflightFailed"
        | "treeMissing"
        | "passesDisagree"
        | "repairsExhausted"
        | "noValidTreeInHistory"
        | "recheckOnInvalidTree";
      message: string;
    }
  | ({ kind: "treeValid" } & StartingPoint)
  | ({ kind: "treeInvalid"; treeProblems: Problem[]; requiredNodeId: string | undefined } & StartingPoint);

export function judgeLoadedState(loaded: LoadedState, options: { recheck?: boolean } = {}): LoadVerdict {
  const { config, tree, records } = loaded;
  if (!config.ok) {
    const first = formatProblem(config.problems[0]!);
    return {
      kind: "configInvalid",
      message: `.runner/state/config.toml is invalid: ${first}; fix it (\`runner validate\` lists every problem) and run \`runner step\` again.`,
    };
  }
  // Before anything is spent: the agent's program (not for a re-check), the guard's, its recipe.
  const preflight = loaded.preflight.find((finding) => !options.recheck || !finding.agent);
  if (preflight) return { kind: "preflightFailed", message: `${preflight.problem.replace(/\.$/, "")} (\`runner doctor\` checks the whole setup).` };
  if (!tree.ok && options.recheck) {
    const first = tree.problems[0] ? ` (${formatProblem(tree.problems[0])})` : "";
    return {
      kind: "recheckOnInvalidTree",
      message: `.runner/state/tree.json is invalid${first}; a re-check needs a valid tree: run \`runner step\` to repair it first.`,
    };
  }
  if (!tree.ok && tree.missing && loaded.lastValidTree === undefined) {
    return {
      kind: "treeMissing",
      message: `.runner/state/tree.json does not exist and no valid tree exists in this branch's history; write one by hand (docs/contract.md §3 of the runner's package says how) and commit it, or, to start over, remove .runner/ and run \`runner init\`.`,
    };
  }
  const start = { config: config.config, records, iteration: nextIterationNumber(records) };
  // A parent whose passes disagrees with its children was edited by hand (a person removed a
  // child): no agent may set passes, so the person is told the one edit that makes it right.
  const disagree = tree.ok ? checkDerivedPasses(tree.tree) : [];
  if (disagree.length > 0) return { kind: "passesDisagree", message: `.runner/state/tree.json: ${formatProblem(disagree[0]!)}.` };
  if (tree.ok) return { kind: "treeValid", ...start, previousTree: tree.tree };
  const repairs = trailingRepairs(records);
  if (repairs >= config.config.limits.maxRepairAttempts) {
    return {
      kind: "repairsExhausted",
      message: `The task tree is still invalid after ${repairs} repair steps in a row; restore the last valid tree by hand (\`git log -- .runner/state/tree.json\`, then \`git checkout <commit> -- .runner/state/tree.json\` and commit it) and run \`runner step\` again.`,
    };
  }
  if (loaded.lastValidTree === undefined) {
    const first = formatProblem(tree.problems[0]!);
    return {
      kind: "noValidTreeInHistory",
      message: `.runner/state/tree.json is invalid (${first}) and no valid tree exists in this branch's history to repair it against; fix it by hand (\`runner validate\` lists every problem) and commit.`,
    };
  }
  // Seed 001 §5.1: REPAIR TREE, against the last valid tree, keeping the node of the iteration that broke it.
  return { kind: "treeInvalid", ...start, previousTree: loaded.lastValidTree, treeProblems: tree.problems, requiredNodeId: lastLeafNode(records) };
}

// 3. Select the leaf: the leftmost open one, or for `runner recheck` the open leaf a person names.

export type SelectionVerdict =
  | { kind: "complete"; message: string }
  | { kind: "recheckRefused"; message: string }
  /** `batch`: the leaf is one an imported plan marks finished, not judged yet: the guard alone judges it with these (it first). */
  | { kind: "selected"; leaf: LeafSelection; batch?: string[] };

/** The node this step works on (seed 001 §4.2), or for a re-check the named open leaf (default: the same leftmost one). */
export function judgeSelection(
  tree: TaskTree,
  runId: string,
  recheck: { nodeId?: string } | undefined,
  plan?: { finished: readonly string[]; records: readonly LoopRecord[] },
): SelectionVerdict {
  const complete = { kind: "complete" as const, message: `Nothing to do: the root passes (run ${runId}).` };
  if (recheck?.nodeId !== undefined) {
    const id = recheck.nodeId;
    const selection = selectionOf(tree, id);
    const leaf = selection?.leaf;
    if (!selection || !leaf)
      return {
        kind: "recheckRefused",
        message: `Node ${JSON.stringify(id)} is not in the task tree; \`runner status\` lists the nodes and \`runner next\` names the open leaf.`,
      };
    if (leaf.passes) return { kind: "recheckRefused", message: `Node ${id} already passes; nothing to re-check.` };
    if (leaf.children.length > 0) {
      return {
        kind: "recheckRefused",
        message: `Node ${id} has children, so it passes when they all do; re-check one of its open leaves instead (\`runner next\` names the first).`,
      };
    }
    return { kind: "selected", leaf: selection };
  }
  const selected = selectLeftmostOpenLeaf(tree);
  if (selected.kind === "complete") return complete;
  const { kind: _kind, ...leaf } = selected;
  // A leaf the plan marks finished is judged by the guard first, with every other one still pending (src/core/plan/plan-finished.ts).
  const batch = plan && plan.finished.length > 0 ? recheckBatch(pendingFinished(tree, plan.finished, plan.records), leaf.leaf.id) : undefined;
  return batch ? { kind: "selected", leaf, batch } : { kind: "selected", leaf };
}

// 5. The agent session.

export type AgentRunVerdict = { kind: "agentStopped" | "agentNotStarted" | "agentFailed"; runnerError: RunnerErrorFact } | { kind: "agentFinished" };

export function judgeAgentRun(facts: AgentRunFacts, timeoutSeconds: number): AgentRunVerdict {
  if (facts.timedOut || facts.aborted) return { kind: "agentStopped", runnerError: stoppedError("agent", facts, timeoutSeconds) };
  if (facts.spawnError !== undefined) return { kind: "agentNotStarted", runnerError: { kind: "other", message: facts.spawnError } };
  // The agent ended without an answer and said why (its own error, or its exit status and stderr):
  // that is the runner error, not "no output file". A rate or usage limit is told apart: `runner run`
  // waits for it to reset; another failure (a crash, the model API's 5xx) it retries.
  if (facts.failure !== undefined)
    return { kind: "agentFailed", runnerError: { kind: facts.limit ? "agent_limit" : "agent_failed", message: facts.failure } };
  return { kind: "agentFinished" };
}

// 6. Re-load and validate what the agent left.

export type ResultVerdict =
  | { kind: "outputInvalid"; runnerError: RunnerErrorFact }
  | { kind: "agentTreeInvalid"; output: AgentOutput; treeProblems: Problem[]; failure: string }
  | { kind: "resultAccepted"; output: AgentOutput; agentTree: TaskTree }
  /** After a runner error: what could be kept of what the agent left (recoverIteration). */
  | { kind: "recovered"; output: AgentOutput | undefined; treeProblems: Problem[] };

export function judgeAgentResult(input: {
  previousTree: TaskTree;
  /** The text `previousTree` was loaded from, when kept. */
  previousTreeText?: string;
  collected: CollectedFacts;
  requiredNodeId: string | undefined;
}): ResultVerdict {
  const parsed = input.collected.answer;
  if (!parsed.ok) return { kind: "outputInvalid", runnerError: { kind: "output_parse_error", message: parsed.reason } };
  const check = agentTreeCheck(input.previousTree, input.collected, input.requiredNodeId, input.previousTreeText);
  if (!check.tree) {
    // The tree is committed as the agent wrote it; the next step repairs it.
    return {
      kind: "agentTreeInvalid",
      output: parsed.output,
      treeProblems: check.problems,
      failure: `The task tree was left invalid: ${check.problems.map(formatProblem).join("; ")}`,
    };
  }
  return { kind: "resultAccepted", output: parsed.output, agentTree: check.tree };
}

function agentTreeCheck(
  previousTree: TaskTree,
  collected: CollectedFacts,
  requiredNodeId: string | undefined,
  previousTreeText: string | undefined,
): { tree?: TaskTree; problems: Problem[] } {
  if (!collected.treeData.ok) return { problems: collected.treeData.problems };
  // The file the valid tree was loaded from, untouched: the same tree, already checked. The state
  // update works in place on a fresh one: a parse of the text it was loaded from (kept for trees of
  // a few MB), else a copy (a large tree's text is not kept, to spare memory).
  if ("unchanged" in collected.treeData)
    return { tree: previousTreeText !== undefined ? (JSON.parse(previousTreeText) as TaskTree) : structuredClone(previousTree), problems: [] };
  return checkAgentTree(previousTree, collected.treeData.data, requiredNodeId);
}

// 8. The guard.

export type GuardVerdict =
  | { kind: "guardStopped" | "guardNotStarted"; runnerError: RunnerErrorFact }
  | { kind: "guardFinished"; outcome: { status: AgentStatus; guard: GuardOutcome }; failure: string | undefined };

/**
 * The guard's verdict. After the agent, the iteration's judgement gives the status; a re-check (no
 * judgement: no agent) is judged on the guard alone, as "done".
 */
export function judgeGuardRun(
  facts: GuardFacts,
  input: { judgement: Judgement | undefined; command: readonly string[]; timeoutSeconds: number },
): GuardVerdict {
  if (facts.timedOut || facts.aborted) return { kind: "guardStopped", runnerError: stoppedError("guard", facts, input.timeoutSeconds) };
  if (facts.spawnError !== undefined) return { kind: "guardNotStarted", runnerError: { kind: "guard_error", message: facts.spawnError } };
  const guard = facts.exitCode === 0 ? "pass" : "fail";
  const run = { outcome: guard, command: input.command, exitCode: facts.exitCode, output: facts.output } as const;
  return {
    kind: "guardFinished",
    outcome: { status: input.judgement?.outcome.status ?? "done", guard },
    failure: input.judgement ? failureFeedback({ judgement: input.judgement, guard: run }) : guardFailure(run),
  };
}

// Seed 002 "Runner Error Recovery".

export interface Recovery {
  /** What could be kept of what the agent left; undefined without facts. */
  verdict: Extract<ResultVerdict, { kind: "recovered" }> | undefined;
  outcome: { status: AgentStatus; guard: GuardOutcome };
  /** The agent's tree when valid, runner-owned fields reset; undefined leaves the file for a repair step. */
  updated: StateUpdateResult | undefined;
}

/**
 * A runner error: retry, guard skipped, attempts unchanged. The agent's tree is kept when valid (its
 * runner-owned fields reset, no transition), else left as it is for the next repair step. Without
 * facts (collecting them failed too) nothing is written.
 */
export function recoverIteration(input: {
  previousTree: TaskTree;
  previousTreeText?: string;
  collected: CollectedFacts | undefined;
  requiredNodeId: string | undefined;
  selectedId: string | undefined;
}): Recovery {
  const outcome = { status: RUNNER_ERROR_RECOVERY.status, guard: RUNNER_ERROR_RECOVERY.guard };
  if (!input.collected) return { verdict: undefined, outcome, updated: undefined };
  const parsed = input.collected.answer;
  const check = agentTreeCheck(input.previousTree, input.collected, input.requiredNodeId, input.previousTreeText);
  return {
    verdict: { kind: "recovered", output: parsed.ok ? parsed.output : undefined, treeProblems: check.problems },
    outcome,
    updated: check.tree ? applyStateUpdates(input.previousTree, check.tree, input.selectedId, undefined) : undefined,
  };
}
