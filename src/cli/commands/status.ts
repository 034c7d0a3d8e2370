// `runner status`: the tree (✓ passed, attempts n/m, the next leaf marked) under a legend and
// labelled columns, the leaves passed, the run, how many iterations it has committed and what its
// agents used (tokens, cost; from the local meta.json), and the runner at work here, if any.
// readStatus is also `runner mcp`'s status tool.
import { existsSync } from "node:fs";
import path from "node:path";
import { sumIterationUsage } from "../../adapters/records/iteration-usage.js";
import { describeUsage, type UsageTotals } from "../../core/agent/agent-usage.js";
import { countFailures, describeFailures, failureKindOf, type FailureCounts } from "../../core/commit/iteration-outcome.js";
import { commitFacts, loopRecords } from "../../core/commit/loop-history.js";
import { selectLeftmostOpenLeaf } from "../../core/tree/select.js";
import { orderedChildren, walkTree, type TaskNode } from "../../core/tree/tree.js";
import type { GlobalArgs } from "../command-table.js";
import { displayWidth } from "../display-width.js";
import { printJson, printLine } from "../output.js";
import { findProjectRoot } from "../repo.js";
import { describeRunInProgress, runInProgress, type RunInProgress } from "../run-in-progress.js";
import { PLAIN, styleFor, type Style } from "../style.js";
import { loadValidTree } from "../valid-tree.js";
import { plural } from "../../report/format.js";

interface RunInfo {
  branch: string | null;
  runId: string | null;
  iterations: number;
  /** The run's failed iterations by kind (src/core/commit/iteration-outcome.ts). */
  failures: FailureCounts;
  usage: UsageTotals | undefined;
}

/** A node of `runner status --json`'s tree. */
export interface StatusNode {
  id: string;
  title: string;
  passes: boolean;
  attempts: number;
  max_attempts: number;
  children: StatusNode[];
}

/** `runner status --json` (and `runner mcp`'s status tool). */
export interface Status {
  run_id: string | null;
  branch: string | null;
  iterations: number;
  /** The run's failed iterations by kind (src/core/commit/iteration-outcome.ts). */
  failures: FailureCounts;
  usage: UsageTotals | null;
  complete: boolean;
  next: { id: string; path: string[]; stuck: boolean } | null;
  nodes: { total: number; passed: number };
  leaves: { passed: number; total: number };
  in_progress: RunInProgress | null;
  tree: StatusNode;
}

/** What `runner status` tells, read from the repository at `folder`. */
export async function readStatus(folder: string, runIdOption: string | undefined): Promise<{ status: Status; root: TaskNode }> {
  const root = findProjectRoot(folder);
  const [tree, runInfo, working] = await Promise.all([loadValidTree(root), readRunInfo(root, runIdOption), runInProgress(root)]);
  const selection = selectLeftmostOpenLeaf(tree);
  const nodes = [...walkTree(tree)].map(({ node }) => node);
  const leafNodes = nodes.filter((node) => node.children.length === 0);
  const status: Status = {
    run_id: runInfo.runId,
    branch: runInfo.branch,
    iterations: runInfo.iterations,
    failures: runInfo.failures,
    usage: runInfo.usage ?? null,
    complete: selection.kind === "complete",
    next: selection.kind === "leaf" ? { id: selection.leaf.id, path: selection.path.map((n) => n.id), stuck: selection.stuck } : null,
    nodes: { total: nodes.length, passed: nodes.filter((node) => node.passes).length },
    leaves: { passed: leafNodes.filter((node) => node.passes).length, total: leafNodes.length },
    in_progress: working ?? null,
    tree: jsonNode(tree.root),
  };
  return { status, root: tree.root };
}

export async function run(argv: GlobalArgs & { json?: boolean; runId?: string }): Promise<number> {
  const { status, root } = await readStatus(argv.C, argv.runId);
  if (argv.json) {
    printJson(status);
    return 0;
  }
  const { nodes, leaves, next } = status;
  const style = styleFor(process.stdout);
  printLine(
    status.run_id
      ? `run ${status.run_id} (branch ${status.branch ?? "?"}): ${status.iterations} iteration${status.iterations === 1 ? "" : "s"} committed, ${describeFailures(status.failures)}${status.usage ? `; ${describeUsage(status.usage)}` : ""}`
      : `no run: ${status.branch ? `branch ${status.branch} is not a runner/<id> branch` : "not on a branch"} (\`runner start\` begins one)`,
  );
  if (status.in_progress) printLine(style.warning(describeRunInProgress(status.in_progress, Date.now())));
  printLine(`progress: ${leaves.passed} of ${plural(leaves.total, "leaf", "leaves")} passed`);
  printLine(style.dim(LEGEND));
  for (const line of renderTree(root, next?.id, style)) printLine(line);
  printLine(
    next === null
      ? style.passed(`complete: all ${plural(nodes.total, "node")} passed.`)
      : `${nodes.passed} of ${plural(nodes.total, "node")} passed; next: ${next.id}${next.stuck ? style.warning(" (stuck: the next step asks to decompose it)") : ""}`,
  );
  return 0;
}

/** What the marks mean. (Never `<mark> <word>  `, the shape of a tree line, so that a reader of the output can tell them apart.) */
export const LEGEND = "legend: ✓ passed · ○ open · ! stuck (attempts used up) · ← next";

function jsonNode(node: TaskNode): StatusNode {
  return {
    id: node.id,
    title: node.title,
    passes: node.passes,
    attempts: node.attempts,
    max_attempts: node.max_attempts,
    children: orderedChildren(node).map(jsonNode),
  };
}

export type NodeState = "passed" | "open" | "stuck";

/** A node as the marks tell it: passed, open, or stuck (its attempts used up, not passed). */
export function nodeState(node: TaskNode): NodeState {
  return node.passes ? "passed" : node.attempts >= node.max_attempts ? "stuck" : "open";
}

export const MARKS: Record<NodeState, string> = { passed: "✓", open: "○", stuck: "!" };
export const TONES = { passed: "passed", open: undefined, stuck: "warning" } as const;

/** A node as a line of the drawn tree: the lines that lead to it (`│   ├── `), and its state. */
export interface TreeRow {
  node: TaskNode;
  indent: string;
  state: NodeState;
}

/** The tree's nodes in the order they are drawn (depth first, children by order), each with its indent. */
export function* treeRows(root: TaskNode): Generator<TreeRow> {
  const stack: { node: TaskNode; prefix: string; branch: string }[] = [{ node: root, prefix: "", branch: "" }];
  while (stack.length > 0) {
    const { node, prefix, branch } = stack.pop()!;
    yield { node, indent: prefix + branch, state: nodeState(node) };
    const children = orderedChildren(node);
    const childPrefix = prefix + (branch === "" ? "" : branch === "└── " ? "    " : "│   ");
    for (let i = children.length - 1; i >= 0; i--) {
      stack.push({ node: children[i]!, prefix: childPrefix, branch: i === children.length - 1 ? "└── " : "├── " });
    }
  }
}

/**
 * The tree under a header of labelled columns: `├── ✓ id  title`, then the attempts (`1/3`) and the
 * state, the next leaf marked `← next`. Columns aligned by display width (a title in Chinese takes
 * two columns a character).
 */
export function renderTree(root: TaskNode, nextId: string | undefined, style: Style = PLAIN): string[] {
  const rows = [...treeRows(root)].map(({ node, indent, state }) => ({
    label: `${indent}${MARKS[state]} ${node.id}  ${node.title}`,
    attempts: `${node.attempts}/${node.max_attempts}`,
    state,
    next: node.id === nextId,
  }));
  const header = { label: "node", attempts: "attempts", state: "state" };
  const labelWidth = Math.max(displayWidth(header.label), ...rows.map((row) => displayWidth(row.label)));
  const attemptsWidth = Math.max(header.attempts.length, ...rows.map((row) => row.attempts.length));
  const pad = (text: string, width: number) => text + " ".repeat(Math.max(0, width - displayWidth(text)));
  const line = (label: string, attempts: string, state: string) => `${pad(label, labelWidth)}  ${attempts.padStart(attemptsWidth)}  ${state}`;
  return [
    style.dim(line(header.label, header.attempts, header.state)),
    ...rows.map((row) => {
      const text = line(row.label, row.attempts, row.state);
      return `${style.tone(TONES[row.state], text)}${row.next ? style.strong("  ← next") : ""}`;
    }),
  ];
}

async function readRunInfo(root: string, runIdOption: string | undefined): Promise<RunInfo> {
  const none = countFailures([]);
  if (!existsSync(path.join(root, ".git"))) return { branch: null, runId: runIdOption ?? null, iterations: 0, failures: none, usage: undefined };
  const { locateRun } = await import("../../adapters/audit/resolve-run.js");
  const { run, branch } = await locateRun(root, runIdOption);
  if (run === undefined) return { branch: branch ?? null, runId: null, iterations: 0, failures: none, usage: undefined };
  const records = loopRecords(run.loopCommits, run.runId);
  const iterations = records.map((record) => ({ iteration: record.subject.iteration, commit: record.sha }));
  return {
    branch: run.branch ?? null,
    runId: run.runId,
    iterations: iterations.length,
    failures: countFailures(records.map((record) => failureKindOf(commitFacts(record)))),
    usage: await sumIterationUsage(root, run.runId, iterations),
  };
}
