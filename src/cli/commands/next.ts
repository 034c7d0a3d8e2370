// `runner next`: the leaf `runner step` would select, with its path from the root. nextLeaf is also
// `runner mcp`'s next tool.
import { selectLeftmostOpenLeaf } from "../../core/tree/select.js";
import type { GlobalArgs } from "../command-table.js";
import { printJson, printLine } from "../output.js";
import { findProjectRoot } from "../repo.js";
import { loadValidTree } from "../valid-tree.js";

/** The next leaf as `runner next --json` prints it. */
export interface NextLeaf {
  complete: boolean;
  node: { id: string; title: string; goal: string; acceptance: string[]; attempts: number; max_attempts: number } | null;
  path: string[];
  /** Whether the leaf has used all its attempts (absent when the tree is complete). */
  stuck?: boolean;
}

export async function nextLeaf(folder: string): Promise<NextLeaf> {
  const selection = selectLeftmostOpenLeaf(await loadValidTree(findProjectRoot(folder)));
  if (selection.kind === "complete") return { complete: true, node: null, path: [] };
  const { leaf, path, stuck } = selection;
  return {
    complete: false,
    node: { id: leaf.id, title: leaf.title, goal: leaf.goal, acceptance: leaf.acceptance, attempts: leaf.attempts, max_attempts: leaf.max_attempts },
    path: path.map((node) => node.id),
    stuck,
  };
}

export async function run(argv: GlobalArgs & { json?: boolean }): Promise<number> {
  const next = await nextLeaf(argv.C);
  if (argv.json) {
    printJson(next);
    return 0;
  }
  const leaf = next.node;
  if (leaf === null) {
    printLine("complete: the root passes; nothing is left to do.");
    return 0;
  }
  printLine(`next: ${leaf.id} — ${leaf.title} (attempts ${leaf.attempts}/${leaf.max_attempts})`);
  printLine(`path: ${next.path.join(" › ")}`);
  if (next.stuck) printLine(`stuck: ${leaf.id} has used all its attempts; the next step asks the agent to decompose it.`);
  return 0;
}
