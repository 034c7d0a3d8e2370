// `runner next`: the leaf `runner step` would select, with its path from the root.
import { selectLeftmostOpenLeaf } from "../../core/select.js";
import type { GlobalArgs } from "../command-table.js";
import { printJson, printLine } from "../output.js";
import { findProjectRoot } from "../repo.js";
import { loadValidTree } from "../valid-tree.js";

export async function run(argv: GlobalArgs & { json?: boolean }): Promise<number> {
  const tree = await loadValidTree(findProjectRoot(argv.C));
  const selection = selectLeftmostOpenLeaf(tree);
  if (selection.kind === "complete") {
    if (argv.json) printJson({ complete: true, node: null, path: [] });
    else printLine("complete: the root passes; nothing is left to do.");
    return 0;
  }
  const { leaf, path, stuck } = selection;
  if (argv.json) {
    printJson({
      complete: false,
      node: {
        id: leaf.id,
        title: leaf.title,
        goal: leaf.goal,
        acceptance: leaf.acceptance,
        attempts: leaf.attempts,
        max_attempts: leaf.max_attempts,
      },
      path: path.map((node) => node.id),
      stuck,
    });
    return 0;
  }
  printLine(`next: ${leaf.id} — ${leaf.title} (attempts ${leaf.attempts}/${leaf.max_attempts})`);
  printLine(`path: ${path.map((node) => node.id).join(" › ")}`);
  if (stuck) printLine(`stuck: ${leaf.id} has used all its attempts; the next step asks the agent to decompose it.`);
  return 0;
}
