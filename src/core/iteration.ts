// The decisions of one iteration, between the agent and the commit: whether the agent's tree is
// acceptable, how the iteration is classified and judged (CONTRACT §7, §9), the outcome after the
// guard, and what the next iteration hears about it.
import { classifyChangedPaths, isRunnerPath, type IterationKind } from "./classify.js";
import { checkPassedImmutable, checkTreeShape } from "./invariants.js";
import { pathsInside, pathsOutside } from "./path-rules.js";
import { childPath, type Problem } from "./problems.js";
import { judgeAgentStatus, type AgentStatus, type AgentVerdict, type GuardOutcome } from "./state-update.js";
import type { AgentGitFacts } from "./step-facts.js";
import { truncateForAgent } from "./text-limits.js";
import { findNode, forEachNode, jsonPathsOf, type TaskNode, type TaskTree } from "./tree.js";

/**
 * The agent's tree is acceptable when it is valid on its own, every passed node of `previous` is
 * unchanged and in place, `requiredNodeId` (the selected leaf) still exists, and no node's
 * max_attempts falls below the attempts the runner has recorded for it.
 */
export function checkAgentTree(previous: TaskTree, data: unknown, requiredNodeId: string | undefined): { tree?: TaskTree; problems: Problem[] } {
  const shape = checkTreeShape(data);
  if (!shape.tree) return { problems: shape.problems };
  const tree = shape.tree;
  const problems = checkPassedImmutable(previous, tree);
  // Only nodes with attempts recorded can have max_attempts below them (a valid max_attempts is ≥ 1).
  const recorded = new Map<string, number>();
  forEachNode(previous, (node) => {
    if (node.attempts > 0) recorded.set(node.id, node.attempts);
  });
  let required = requiredNodeId === undefined;
  const lowered = new Set<TaskNode>();
  forEachNode(tree, (node) => {
    if (node.id === requiredNodeId) required = true;
    if (node.max_attempts < (recorded.get(node.id) ?? 0)) lowered.add(node);
  });
  if (lowered.size > 0) {
    for (const { node, jsonPath } of jsonPathsOf(tree, (node) => lowered.has(node))) {
      const attempts = recorded.get(node.id) ?? 0;
      problems.push({
        path: childPath(jsonPath, "max_attempts"),
        message: `max_attempts ${node.max_attempts} is below the ${attempts} attempts the runner has recorded for ${JSON.stringify(node.id)}`,
      });
    }
  }
  if (!required) problems.push(removedSelected(requiredNodeId!));
  return problems.length > 0 ? { problems } : { tree, problems };
}

function removedSelected(requiredNodeId: string): Problem {
  return {
    path: "$",
    message: `the selected node ${JSON.stringify(requiredNodeId)} was removed; keep it (give it children to split it) so the runner can record this iteration's outcome`,
  };
}

export interface PolicyInput {
  changedPaths: readonly string[];
  protectedPaths: readonly string[];
  /** The selected node's allowed_write_paths, when it has a policy. */
  allowedWritePaths: readonly string[] | undefined;
  /** What the agent did to git itself (undone before the runner's own git calls). */
  git?: AgentGitFacts;
}

export interface PolicyResult {
  protectedChanged: string[];
  outsideAllowed: string[];
  /** The sentence the agent and the log get, when anything was violated. */
  failure?: string;
}

/** Protected paths apply to every iteration; allowed_write_paths to what lies outside .runner/. */
export function checkChangePolicy(input: PolicyInput): PolicyResult {
  const protectedChanged = pathsInside(input.changedPaths, input.protectedPaths);
  const outsideAllowed = input.allowedWritePaths
    ? pathsOutside(
        input.changedPaths.filter((path) => !isRunnerPath(path)),
        input.allowedWritePaths,
      )
    : [];
  const parts: string[] = [];
  const scripts = input.git?.scriptEntriesChanged ?? [];
  if (protectedChanged.length > 0 || scripts.length > 0)
    parts.push(`changed protected paths (${[...protectedChanged, ...scripts].join(", ")}), which the agent may not touch`);
  if (outsideAllowed.length > 0) parts.push(`changed paths outside the node's allowed_write_paths (${outsideAllowed.join(", ")})`);
  const git = input.git;
  if (git && git.controlChanged.length > 0)
    parts.push(`changed git's own files (${git.controlChanged.map((name) => `.git/${name}`).join(", ")}), which the runner put back`);
  if (git?.guardProgramChanged) parts.push(`changed the guard's program (${git.guardProgramChanged})`);
  if (git && git.hiddenByIgnoreRules.length > 0) {
    parts.push(
      `hid files from the commit with an ignore rule it changed (${git.hiddenByIgnoreRules.join(", ")}): the guard would judge files that are not committed; commit them, or ignore them in an iteration of their own`,
    );
  }
  if (git && git.nestedRepositories.length > 0)
    parts.push(
      `created git repositories without a commit (${git.nestedRepositories.join(", ")}), which cannot be committed and were moved to the iteration's log`,
    );
  return parts.length > 0
    ? { protectedChanged, outsideAllowed, failure: `The iteration ${parts.join(" and ")}; the guard stage failed.` }
    : { protectedChanged, outsideAllowed };
}

export interface Judgement {
  kind: IterationKind;
  verdict: AgentVerdict;
  policy: PolicyResult;
  /** Run the guard command: done, EXECUTE, no contract or policy violation. */
  runGuard: boolean;
  /** The outcome when the guard does not run. */
  outcome: { status: AgentStatus; guard: GuardOutcome };
}

/** Classification and judgement of a leaf iteration whose output and tree are valid. */
export function judgeIteration(input: {
  previousLeaf: TaskNode;
  agentTree: TaskTree;
  status: AgentStatus;
  changedPaths: readonly string[];
  protectedPaths: readonly string[];
  allowedWritePaths: readonly string[] | undefined;
  git?: AgentGitFacts;
}): Judgement {
  // Classified on what the commit will hold: protected paths are taken back before it.
  const kind = classifyChangedPaths(pathsOutside(input.changedPaths, input.protectedPaths));
  const selectedAfter = findNode(input.agentTree, input.previousLeaf.id); // ids are unique: checkAgentTree passed it
  if (!selectedAfter) throw new Error("judgeIteration needs a tree that still holds the selected node (checkAgentTree ensures it)");
  const verdict = judgeAgentStatus({
    selectedId: input.previousLeaf.id,
    selectedAfter,
    previousChildIds: new Set(input.previousLeaf.children.map((child) => child.id)),
    status: input.status,
    kind,
  });
  const policy = checkChangePolicy({
    changedPaths: input.changedPaths,
    protectedPaths: input.protectedPaths,
    allowedWritePaths: kind === "execute" ? input.allowedWritePaths : undefined,
    git: input.git,
  });
  if (policy.failure) {
    // A policy violation fails the guard stage: guard=fail after "done", else a retry. Both cost an attempt.
    const status = verdict.status === "done" ? "done" : "retry";
    return { kind, verdict, policy, runGuard: false, outcome: { status, guard: status === "done" ? "fail" : "skipped" } };
  }
  return { kind, verdict, policy, runGuard: verdict.runGuard, outcome: { status: verdict.status, guard: "skipped" } };
}

/** What the next iteration on the node is told (context/failure.md), or undefined. */
export function failureFeedback(input: {
  judgement: Judgement;
  guard?: { outcome: GuardOutcome; command: readonly string[]; exitCode?: number; output: string };
}): string | undefined {
  const { judgement, guard } = input;
  if (judgement.verdict.violation) return judgement.verdict.violation;
  if (judgement.policy.failure) return judgement.policy.failure;
  return (guard && guardFailure(guard)) ?? judgement.verdict.note;
}

/** A failed guard, with its output bounded (CONTRACT §9), or undefined when it passed. */
export function guardFailure(guard: { outcome: GuardOutcome; command: readonly string[]; exitCode?: number; output: string }): string | undefined {
  if (guard.outcome !== "fail") return undefined;
  const how = guard.exitCode === undefined ? "failed" : `exited with code ${guard.exitCode}`;
  return `The guard \`${guard.command.join(" ")}\` ${how}.\n\nIts output:\n\n${truncateForAgent(guard.output)}`;
}
