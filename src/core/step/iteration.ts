// The decisions of one iteration around the agent's work: whether the agent's tree is acceptable,
// and what the next iteration hears about the outcome (CONTRACT §9). The classification and
// judgement are classify.ts's; the change policy is change-policy.ts's.
import type { Judgement } from "../guard/classify.js";
import { checkPassedImmutable, checkTreeShape } from "../tree/invariants.js";
import { childPath, type Problem } from "../base/problems.js";
import type { GuardOutcome } from "../tree/state-update.js";
import { truncateForAgent } from "../base/text-limits.js";
import { forEachNode, jsonPathsOf, type TaskNode, type TaskTree } from "../tree/tree.js";

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
