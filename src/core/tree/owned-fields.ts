// The runner-owned fields (seed 002, CONTRACT §3): `passes` and `attempts` are moved only by the
// runner's transitions, `max_attempts` only by a person. One rule, used wherever a tree is judged
// against the one before it — a person's edit (plan-edit.ts, person-edit.ts) and every commit the
// audit replays (audit.ts).
import { nodesById, walkTree, type TaskNode, type TaskTree } from "./tree.js";

export interface OwnedFieldRule {
  /** Who made the change: a person may move `max_attempts` (never below the attempts spent: plan-edit.ts checks), nobody else. */
  by: "person" | "runner";
  /** Nodes whose `passes`/`attempts` a transition of this commit may move (the selected leaf, a re-check's batch). */
  exempt?: ReadonlySet<string>;
  /** `before`'s nodes by id, when the caller holds them already (the audit keeps one per tree). */
  previous?: ReadonlyMap<string, TaskNode>;
}

const quote = (id: string) => JSON.stringify(id);

/**
 * What moved that may not: on every node that was there, `passes` and `attempts` as before — except
 * a parent whose children all pass, which passes (derived) — and `max_attempts` unless a person
 * changed it; a new node starts open (or derived) with no attempt.
 */
export function ownedFieldProblems(before: TaskTree, after: TaskTree, rule: OwnedFieldRule): string[] {
  const previous = rule.previous ?? nodesById(before);
  const problems: string[] = [];
  for (const { node } of walkTree(after)) {
    const was = previous.get(node.id);
    if (was && rule.by === "runner" && node.max_attempts !== was.max_attempts)
      problems.push(
        `max_attempts of ${quote(node.id)} moved from ${was.max_attempts} to ${node.max_attempts}; only a person changes it (\`runner unstick\`, \`runner edit\`)`,
      );
    if (rule.exempt?.has(node.id)) continue;
    const derived = node.children.length > 0 && node.children.every((child) => child.passes);
    if (!was) {
      if (node.attempts !== 0) problems.push(`new node ${quote(node.id)} starts with attempts ${node.attempts}, not 0`);
      if (node.passes && !derived) problems.push(`new node ${quote(node.id)} starts passed`);
      continue;
    }
    if (node.attempts !== was.attempts) problems.push(`attempts of ${quote(node.id)} moved from ${was.attempts} to ${node.attempts}`);
    if (node.passes !== was.passes && !(node.passes && derived))
      problems.push(`passes of ${quote(node.id)} changed from ${was.passes} to ${node.passes} without a green guard`);
  }
  return problems;
}
