// `runner status`: the tree (✓ passed, attempts n/m, the next leaf marked), the run, how many
// iterations it has committed and what its agents used (tokens, cost; from the local meta.json).
import { existsSync } from "node:fs";
import path from "node:path";
import { sumIterationUsage } from "../../adapters/iteration-usage.js";
import { describeUsage, type UsageTotals } from "../../core/agent-usage.js";
import { loopSubjectPattern, parseCommitSubject, runIdFromBranch, runIdProblem } from "../../core/run-id.js";
import { selectLeftmostOpenLeaf } from "../../core/select.js";
import { orderedChildren, walkTree, type TaskNode } from "../../core/tree.js";
import { UsageError } from "../../errors.js";
import type { GlobalArgs } from "../command-table.js";
import { printJson, printLine } from "../output.js";
import { findProjectRoot } from "../repo.js";
import { loadValidTree } from "../valid-tree.js";

interface RunInfo {
  branch: string | null;
  runId: string | null;
  iterations: number;
  usage: UsageTotals | undefined;
}

export async function run(argv: GlobalArgs & { json?: boolean; runId?: string }): Promise<number> {
  const root = findProjectRoot(argv.C);
  if (argv.runId !== undefined) {
    const problem = runIdProblem(argv.runId);
    if (problem) throw new UsageError(`${problem[0]!.toUpperCase()}${problem.slice(1)}.`);
  }
  const [tree, runInfo] = await Promise.all([loadValidTree(root), readRunInfo(root, argv.runId)]);
  const selection = selectLeftmostOpenLeaf(tree);
  const nextId = selection.kind === "leaf" ? selection.leaf.id : undefined;
  const nodes = [...walkTree(tree)].map(({ node }) => node);
  const passed = nodes.filter((node) => node.passes).length;

  if (argv.json) {
    printJson({
      run_id: runInfo.runId,
      branch: runInfo.branch,
      iterations: runInfo.iterations,
      usage: runInfo.usage ?? null,
      complete: selection.kind === "complete",
      next: selection.kind === "leaf" ? { id: selection.leaf.id, path: selection.path.map((n) => n.id), stuck: selection.stuck } : null,
      nodes: { total: nodes.length, passed },
      tree: jsonNode(tree.root),
    });
    return 0;
  }
  printLine(
    runInfo.runId
      ? `run ${runInfo.runId} (branch ${runInfo.branch ?? "?"}): ${runInfo.iterations} iteration${runInfo.iterations === 1 ? "" : "s"} committed${runInfo.usage ? `; ${describeUsage(runInfo.usage)}` : ""}`
      : `no run: ${runInfo.branch ? `branch ${runInfo.branch} is not a runner/<id> branch` : "not on a branch"} (\`runner start\` begins one)`,
  );
  for (const line of renderTree(tree.root, nextId)) printLine(line);
  printLine(
    selection.kind === "complete"
      ? `complete: all ${nodes.length} nodes passed.`
      : `${passed} of ${nodes.length} nodes passed; next: ${selection.leaf.id}${selection.stuck ? " (stuck: the next step asks to decompose it)" : ""}`,
  );
  return 0;
}

function jsonNode(node: TaskNode): unknown {
  return {
    id: node.id,
    title: node.title,
    passes: node.passes,
    attempts: node.attempts,
    max_attempts: node.max_attempts,
    children: orderedChildren(node).map(jsonNode),
  };
}

/** One line per node: `├── ✓ id  title  1/3`, the next leaf marked `← next`. */
export function renderTree(root: TaskNode, nextId: string | undefined): string[] {
  const lines: string[] = [];
  const stack: { node: TaskNode; prefix: string; branch: string }[] = [{ node: root, prefix: "", branch: "" }];
  while (stack.length > 0) {
    const { node, prefix, branch } = stack.pop()!;
    const mark = node.passes ? "✓" : node.attempts >= node.max_attempts ? "!" : "○";
    const next = node.id === nextId ? "  ← next" : "";
    lines.push(`${prefix}${branch}${mark} ${node.id}  ${node.title}  ${node.attempts}/${node.max_attempts}${next}`);
    const children = orderedChildren(node);
    const childPrefix = prefix + (branch === "" ? "" : branch === "└── " ? "    " : "│   ");
    for (let i = children.length - 1; i >= 0; i--) {
      stack.push({ node: children[i]!, prefix: childPrefix, branch: i === children.length - 1 ? "└── " : "├── " });
    }
  }
  return lines;
}

async function readRunInfo(root: string, runIdOption: string | undefined): Promise<RunInfo> {
  if (!existsSync(path.join(root, ".git"))) return { branch: null, runId: runIdOption ?? null, iterations: 0, usage: undefined };
  const { GitRepo } = await import("../../adapters/git.js");
  const git = new GitRepo(root);
  const status = await git.status();
  const runId = runIdOption ?? runIdFromBranch(status.branch);
  if (runId === undefined || status.head === undefined) return { branch: status.branch ?? null, runId: runId ?? null, iterations: 0, usage: undefined };
  const commits = await git.loopCommits(loopSubjectPattern(runId));
  const numbers = commits.map((commit) => parseCommitSubject(commit.subject)).filter((subject) => subject?.runId === runId).map((subject) => subject!.iteration);
  return { branch: status.branch ?? null, runId, iterations: numbers.length, usage: await sumIterationUsage(root, runId, numbers) };
}
