// `runner show <node-id> [--json]`: one node as a person needs it when it fails — its title, goal and
// acceptance, passes and attempts, its path from the root and its children, and the iterations of
// this run on it (from the loop commits, so on a fresh clone too): kind, the agent's status, the
// guard, the summary, and what failed (the failure's first line and the guard's last lines).
// showNode is also `runner mcp`'s show tool.
import { existsSync } from "node:fs";
import path from "node:path";
import { countFailures, describeFailures } from "../../core/commit/iteration-outcome.js";
import { selectLeftmostOpenLeaf } from "../../core/tree/select.js";
import { findNode, orderedChildren, parentIds, type TaskNode, type TaskTree } from "../../core/tree/tree.js";
import { RefusalError } from "../../errors.js";
import type { GlobalArgs } from "../command-table.js";
import { firstLines, guardTail } from "../guard-tail.js";
import { printJson, printLine } from "../output.js";
import { findProjectRoot } from "../repo.js";
import { PLAIN, styleFor, type Style } from "../style.js";
import { loadValidTree } from "../valid-tree.js";
import type { PersonEditEntry } from "../../core/audit/person-edit.js";
import { runLog, type LogEntry } from "./log.js";
import { findRun } from "../../adapters/audit/resolve-run.js";
import { MARKS, nodeState as stateOf, TONES, type NodeState } from "./status.js";

/** How many of the guard's last lines each failed iteration shows. */
const GUARD_LINES = 5;

function tone(style: Style, state: NodeState): (text: string) => string {
  return (text) => style.tone(TONES[state], text);
}

/** The ids from the root down to `id`, both included. */
function pathTo(tree: TaskTree, id: string): string[] {
  const parents = parentIds(tree);
  const ids: string[] = [];
  for (let at: string | undefined = id; at !== undefined; at = parents.get(at)) ids.push(at);
  return ids.reverse();
}

/** The run's iterations on the node, oldest first; none when there is no run to read (not a repository, not on a run branch). */
async function nodeHistory(
  root: string,
  nodeId: string,
  runIdOption: string | undefined,
): Promise<{ runId: string | null; entries: LogEntry[]; personEdits: PersonEditEntry[] }> {
  if (!existsSync(path.join(root, ".git"))) return { runId: runIdOption ?? null, entries: [], personEdits: [] };
  const run = await findRun(root, runIdOption);
  if (run === undefined) return { runId: null, entries: [], personEdits: [] };
  // (only the node's iterations are read: their local logs too)
  const { runId, entries, personEdits } = await runLog(root, run, nodeId);
  return { runId, entries, personEdits: personEdits.filter((edit) => edit.target === nodeId) };
}

/** A node as `runner show --json` has it (a child: without goal, acceptance and path). */
interface NodeSummary {
  id: string;
  title: string;
  passes: boolean;
  attempts: number;
  max_attempts: number;
  state: NodeState;
}

/** `runner show --json` (and `runner mcp`'s show tool). */
export interface NodeReport extends NodeSummary {
  goal: string;
  acceptance: string[];
  next: boolean;
  path: string[];
  children: NodeSummary[];
  run_id: string | null;
  history: LogEntry[];
  person_edits: PersonEditEntry[];
  /** For a stuck leaf: the commands a person can steer it with. */
  next_commands?: string[];
}

function summary(node: TaskNode): NodeSummary {
  return { id: node.id, title: node.title, passes: node.passes, attempts: node.attempts, max_attempts: node.max_attempts, state: stateOf(node) };
}

/** One node of the repository at `folder`, and this run's iterations and a person's edits on it. */
export async function showNode(folder: string, nodeId: string, runIdOption: string | undefined): Promise<{ report: NodeReport; node: TaskNode }> {
  const root = findProjectRoot(folder);
  const tree = await loadValidTree(root);
  const node = findNode(tree, nodeId);
  if (!node) throw new RefusalError(`Node "${nodeId}" is not in the task tree; \`runner status\` lists the nodes.`);
  const { runId, entries, personEdits } = await nodeHistory(root, node.id, runIdOption);
  const selection = selectLeftmostOpenLeaf(tree);
  const { id, title, passes, attempts, max_attempts, state } = summary(node);
  const report: NodeReport = {
    id,
    title,
    goal: node.goal,
    acceptance: node.acceptance,
    passes,
    attempts,
    max_attempts,
    state,
    next: selection.kind === "leaf" && selection.leaf.id === node.id,
    path: pathTo(tree, node.id),
    children: orderedChildren(node).map(summary),
    run_id: runId,
    history: entries,
    person_edits: personEdits,
    ...(stuck(node) ? { next_commands: stuckCommandList(node.id) } : {}),
  };
  return { report, node };
}

export async function run(argv: GlobalArgs & { nodeId: string; json?: boolean; runId?: string }): Promise<number> {
  const { report, node } = await showNode(argv.C, argv.nodeId, argv.runId);
  if (argv.json) {
    printJson(report);
    return 0;
  }
  const style = styleFor(process.stdout);
  const facts = { ids: report.path, children: orderedChildren(node), isNext: report.next, runId: report.run_id, entries: report.history };
  for (const line of renderNode(node, facts, style)) printLine(line);
  for (const edit of report.person_edits)
    printLine(
      `  a person's edit after iteration ${edit.after_iteration}: ${edit.subject} by ${edit.author ?? "?"} (commit ${edit.commit.slice(0, 7)})`,
    );
  if (report.next_commands) {
    printLine(style.warning(`${node.id} is stuck (attempts ${node.attempts}/${node.max_attempts}); what a person can do next:`));
    for (const command of report.next_commands) printLine(`  ${command}`);
  }
  return 0;
}

function stuck(node: TaskNode): boolean {
  return !node.passes && node.children.length === 0 && node.attempts >= node.max_attempts;
}

/** The commands that steer a stuck leaf (then \`runner run\` goes on). */
function stuckCommandList(id: string): string[] {
  return [
    `runner unstick ${id} [--attempts N]   # more attempts (the ones spent stay on record)`,
    `runner edit ${id} --goal "…"          # reword it`,
    `runner add ${id} --title "…" --goal "…"  # split it into children`,
    `runner remove ${id}                   # drop it`,
  ];
}

/** The text of `runner show`. */
export function renderNode(
  node: TaskNode,
  facts: { ids: string[]; children: TaskNode[]; isNext: boolean; runId: string | null; entries: LogEntry[] },
  style: Style = PLAIN,
): string[] {
  const state = stateOf(node);
  const lines = [
    `${tone(style, state)(`${MARKS[state]} ${node.id}  ${node.title}`)}  ${style.dim("—")} ${tone(style, state)(state)}, attempts ${node.attempts}/${node.max_attempts}${facts.isNext ? style.strong("  ← next") : ""}`,
    `path: ${facts.ids.join(" › ")}`,
    `goal: ${node.goal}`,
  ];
  lines.push(node.acceptance.length === 0 ? "acceptance: (none)" : "acceptance:", ...node.acceptance.map((item) => `  - ${item}`));
  if (facts.children.length === 0) lines.push("children: none (a leaf)");
  else {
    lines.push(`children: ${facts.children.length}`);
    for (const child of facts.children) {
      const childState = stateOf(child);
      lines.push(tone(style, childState)(`  ${MARKS[childState]} ${child.id}  ${child.title}  ${child.attempts}/${child.max_attempts}`));
    }
  }
  if (facts.runId === null) {
    lines.push("iterations: no run here (not on a runner/<id> branch; --run-id names one)");
    return lines;
  }
  if (facts.entries.length === 0) {
    lines.push(`iterations on ${node.id} in run ${facts.runId}: none`);
    return lines;
  }
  lines.push(
    `iterations on ${node.id} in run ${facts.runId}: ${facts.entries.length}, ${describeFailures(countFailures(facts.entries.map((entry) => entry.failed)))}`,
  );
  for (const entry of facts.entries) lines.push(...entryLines(entry, style));
  return lines;
}

/** One iteration: its head line, its summary, and what failed. */
function entryLines(entry: LogEntry, style: Style): string[] {
  // A runner error was not judged: its words (an unreadable answer, an interruption) instead of a kind and the retry the runner records for it.
  const what = entry.runner_error ? entry.outcome : `${entry.kind}, agent ${entry.agent_status ?? "-"}`;
  const head = `  iteration ${entry.iteration}: ${what}, guard ${entry.guard_outcome}, attempts ${entry.attempts ?? "-"} (commit ${entry.commit.slice(0, 7)})`;
  const lines = [entry.failed ? style.failed(head) : entry.guard_outcome === "pass" ? style.passed(head) : head];
  for (const line of firstLines(entry.summary, 3)) lines.push(`      ${line}`);
  if (entry.tests_changed.length > 0) lines.push(style.warning(`      tests changed: ${entry.tests_changed.join(", ")}`));
  if (entry.runner_error) lines.push(style.failed(`      runner error: ${entry.runner_error}`));
  const failure = entry.failure_text ?? entry.failure;
  if (failure) {
    const [first] = firstLines(failure, 1);
    if (first) lines.push(style.failed(`      failure: ${first}`));
    const tail = guardTail(entry.failure_text ?? undefined, GUARD_LINES);
    for (const line of tail.length > 0 ? tail : firstLines(failure, 3).slice(1)) lines.push(style.dim(`        │ ${line}`));
  }
  return lines;
}
