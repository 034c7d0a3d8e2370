// Pure decisions of the report: what each iteration came to, the tree's node states, the run's
// totals and its outcome (can the branch be merged?). No I/O: gather.ts hands the facts in.
import { countFailures, failureKindOf, type IterationFacts } from "../core/commit/iteration-outcome.js";
import { selectLeftmostOpenLeaf } from "../core/tree/select.js";
import { orderedChildren, type TaskNode, type TaskTree } from "../core/tree/tree.js";
import {
  USAGE_FIELDS,
  type AuditResult,
  type IterationOutcome,
  type ReportIteration,
  type ReportNode,
  type RunOutcome,
  type Totals,
  type Usage,
} from "./model.js";

/** The facts of an iteration as src/core/commit/iteration-outcome.ts names and counts them. */
export function reportFacts(
  it: Pick<ReportIteration, "kind" | "guard" | "agentStatus" | "failure" | "runnerError" | "treeLeftInvalid">,
): IterationFacts {
  return {
    kind: it.kind,
    guard: it.guard,
    status: it.agentStatus,
    runnerError: it.runnerError,
    failure: it.failure,
    treeLeftInvalid: it.treeLeftInvalid,
  };
}

/** The one word for an iteration; a runner error or a tree left invalid outranks what the agent said. */
export function iterationOutcome(
  it: Pick<ReportIteration, "kind" | "guard" | "agentStatus" | "failure" | "runnerError" | "treeLeftInvalid">,
): IterationOutcome {
  if (it.runnerError !== undefined) return "error";
  if (it.treeLeftInvalid) return "invalid-tree";
  if (it.kind === "repair") return "repair";
  if (it.guard === "pass") return "pass";
  if (it.guard === "fail" || it.failure !== undefined) return "fail";
  if (it.agentStatus === "retry") return "retry";
  if (it.kind === "decompose") return "decompose";
  return "other";
}

/** The tree as the report shows it: states, the next leaf, and the iterations that worked on each node. */
export function reportTree(tree: TaskTree, iterations: readonly ReportIteration[]): ReportNode {
  let nextId: string | undefined;
  try {
    const selection = selectLeftmostOpenLeaf(tree);
    if (selection.kind === "leaf") nextId = selection.leaf.id;
  } catch {
    nextId = undefined; // a parent that disagrees with its children: no next leaf to point at
  }
  const worked = new Map<string, number[]>();
  for (const it of iterations) {
    if (it.nodeId === undefined) continue;
    const list = worked.get(it.nodeId) ?? [];
    list.push(it.iteration);
    worked.set(it.nodeId, list);
  }
  const convert = (node: TaskNode): ReportNode => ({
    id: node.id,
    title: node.title,
    state: node.passes ? "passed" : node.attempts >= node.max_attempts ? "stuck" : "open",
    attempts: node.attempts,
    maxAttempts: node.max_attempts,
    next: node.id === nextId,
    iterations: worked.get(node.id) ?? [],
    children: orderedChildren(node).map(convert),
  });
  return convert(tree.root);
}

function* nodesOf(root: ReportNode): Generator<ReportNode> {
  const stack = [root];
  while (stack.length > 0) {
    const node = stack.pop()!;
    yield node;
    stack.push(...node.children);
  }
}

/** The fields of `usage` summed over the iterations that recorded any; undefined when none did. */
export function sumUsage(usages: readonly (Usage | undefined)[]): (Usage & { recorded: number }) | undefined {
  const total: Usage & { recorded: number } = { recorded: 0 };
  for (const usage of usages) {
    if (usage === undefined) continue;
    total.recorded++;
    for (const field of USAGE_FIELDS) {
      const value = usage[field];
      if (value !== undefined) total[field] = (total[field] ?? 0) + value;
    }
  }
  return total.recorded > 0 ? total : undefined;
}

export function totalsOf(iterations: readonly ReportIteration[], root: ReportNode | undefined): Totals {
  const count = (test: (it: ReportIteration) => boolean) => iterations.filter(test).length;
  const failed = countFailures(iterations.map((it) => failureKindOf(reportFacts(it))));
  const totals: Totals = {
    iterations: iterations.length,
    decompose: count((it) => it.kind === "decompose"),
    execute: count((it) => it.kind === "execute"),
    repair: count((it) => it.kind === "repair"),
    passes: count((it) => it.guard === "pass"),
    failures: failed.total,
    guardFailures: failed.guard,
    retries: failed.retry,
    runnerErrors: failed.runner_error,
    invalidTrees: failed.invalid_tree,
    otherFailures: failed.other,
  };
  if (root) {
    const nodes = [...nodesOf(root)];
    totals.nodes = {
      total: nodes.length,
      passed: nodes.filter((n) => n.state === "passed").length,
      stuck: nodes.filter((n) => n.state === "stuck").length,
    };
  }
  const timed = iterations.filter((it) => it.local?.totalMs !== undefined);
  if (timed.length > 0) {
    const sum = (pick: (it: ReportIteration) => number | undefined) => timed.reduce((acc, it) => acc + (pick(it) ?? 0), 0);
    const agentMs = sum((it) => it.local?.agentMs);
    const guardMs = sum((it) => it.local?.guardMs);
    const totalMs = sum((it) => it.local?.totalMs);
    totals.time = { agentMs, guardMs, totalMs, runnerMs: Math.max(0, totalMs - agentMs - guardMs), timed: timed.length };
  }
  const first = iterations[0]?.committedAt;
  const last = iterations[iterations.length - 1]?.committedAt;
  if (first !== undefined && last !== undefined) totals.span = { from: first, to: last };
  const usage = sumUsage(iterations.map((it) => it.local?.usage));
  if (usage) totals.usage = usage;
  return totals;
}

/** Text ending in a full stop (a runner error's message may not). */
function sentence(text: string): string {
  return /[.!?]$/.test(text.trim()) ? text.trim() : `${text.trim()}.`;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/** Where the run stands and whether its branch is ready to merge. */
export function runOutcome(iterations: readonly ReportIteration[], root: ReportNode | undefined, audit: AuditResult | undefined): RunOutcome {
  const last = iterations[iterations.length - 1];
  const nodes = root ? [...nodesOf(root)] : [];
  const passed = nodes.filter((n) => n.state === "passed").length;
  const auditNote =
    audit === undefined
      ? ""
      : audit.clean
        ? " The audit found every transition in order."
        : ` The audit found ${plural(audit.violations.length, "rule violation")}.`;
  if (!last)
    return { kind: "empty", headline: "No iterations yet", detail: "The run has no loop commits; `runner step` makes the first.", mergeable: false };
  if (last.runnerError !== undefined) {
    return {
      kind: "runner-error",
      headline: `Stopped on a runner error in iteration ${last.iteration}`,
      detail: `${sentence(last.runnerError)} The iteration was committed and cost no attempt; \`runner run\` continues from here.${auditNote}`,
      mergeable: false,
    };
  }
  if (last.treeLeftInvalid) {
    return {
      kind: "tree-invalid",
      headline: `Iteration ${last.iteration} left the tree invalid`,
      detail: `The next \`runner step\` is a repair step.${auditNote}`,
      mergeable: false,
    };
  }
  if (root?.state === "passed") {
    const clean = audit?.clean === true;
    return {
      kind: "complete",
      headline: clean ? "Complete: ready to review and merge" : "Complete, but check the audit before merging",
      detail: `All ${plural(nodes.length, "node")} passed in ${plural(iterations.length, "iteration")}.${auditNote}`,
      mergeable: clean,
    };
  }
  const next = nodes.find((n) => n.next);
  if (next?.state === "stuck") {
    return {
      kind: "stuck",
      headline: `Stuck on ${next.id}`,
      detail: `Leaf ${next.id} used all its attempts (${next.attempts}/${next.maxAttempts}); the next step asks the agent to decompose it. ${passed} of ${plural(nodes.length, "node")} passed.${auditNote}`,
      mergeable: false,
    };
  }
  return {
    kind: "in-progress",
    headline: "Not finished",
    detail: `${passed} of ${plural(nodes.length, "node")} passed after ${plural(iterations.length, "iteration")}${next ? `; next: ${next.id}` : ""}.${auditNote}`,
    mergeable: false,
  };
}
