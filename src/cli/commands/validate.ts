// `runner validate`: schema and invariants of the tree, the config and node policies, each problem
// with its file and JSON path. Where git has a committed tree, passed nodes are also checked
// against it (immutability): against HEAD's, or, after an iteration that left the tree invalid,
// against the tree the runner last accepted, as `runner step` does. validateProject is also
// `runner mcp`'s validate tool.
import { existsSync } from "node:fs";
import path from "node:path";
import { checkDerivedPasses, checkPassedImmutable } from "../../core/tree/invariants.js";
import { LAYOUT } from "../../core/base/layout.js";
import { formatProblem, type Problem } from "../../core/base/problems.js";
import { countNodes, walkTree } from "../../core/tree/tree.js";
import { loadAllPolicies, loadConfig, loadFinished, loadTree, projectPath, readOptional } from "../../adapters/files/project-files.js";
import { LEAF_PLACEHOLDERS, REPAIR_PLACEHOLDERS, unknownPlaceholders } from "../../core/step/prompt-pack.js";
import type { GlobalArgs } from "../command-table.js";
import { printError, printJson, printLine } from "../output.js";
import { findProjectRoot } from "../repo.js";
import { plural } from "../../report/format.js";

interface FileProblem extends Problem {
  file: string;
}

/** What `runner validate` found: every problem with its file (`--json`: valid and problems), and for the sentence, what was checked. */
export interface Validation {
  valid: boolean;
  problems: FileProblem[];
  /** The tree's node count and how many passed ("" when it did not load). */
  summary: string;
  policies: number;
}

/** Checks the tree, the config, node policies and prompt templates of the repository at `folder`. */
export async function validateProject(folder: string): Promise<Validation> {
  const root = findProjectRoot(folder);
  const problems: FileProblem[] = [];
  const add = (file: string, list: Problem[]) => problems.push(...list.map((p) => ({ file, ...p })));

  const [treeLoad, config, policies, finished] = await Promise.all([loadTree(root), loadConfig(root), loadAllPolicies(root), loadFinished(root)]);
  let summary = "";
  if (treeLoad.ok) {
    add(LAYOUT.tree, checkDerivedPasses(treeLoad.tree));
    add(LAYOUT.tree, await immutabilityAgainstBase(root, treeLoad.tree));
    const passed = [...walkTree(treeLoad.tree)].filter(({ node }) => node.passes).length;
    summary = `${plural(countNodes(treeLoad.tree), "node")}, ${passed} passed`;
  } else {
    add(LAYOUT.tree, treeLoad.problems);
  }
  if (!config.ok) add(LAYOUT.config, config.problems);
  // (an unreadable list judges nothing first: each of its leaves then goes to the agent)
  if (finished && !finished.ok)
    add(LAYOUT.finished, [{ path: "$", message: `${finished.problem}; the guard judges no plan-finished leaf first until it is fixed` }]);
  for (const policy of policies) add(policy.file, policy.problems);
  for (const kind of ["leaf", "repair"] as const) {
    const file = `${LAYOUT.prompts}/${kind}.md`;
    const template = await readOptional(projectPath(root, file));
    if (template === undefined) continue;
    const unknown = unknownPlaceholders(template, kind);
    if (unknown.length > 0) {
      add(file, [
        {
          path: "$",
          message: `uses unknown placeholder${unknown.length === 1 ? "" : "s"} ${unknown.map((name) => `{{${name}}}`).join(", ")}; a ${kind} template knows ${(kind === "leaf" ? LEAF_PLACEHOLDERS : REPAIR_PLACEHOLDERS).map((name) => `{{${name}}}`).join(", ")}`,
        },
      ]);
    }
  }
  return { valid: problems.length === 0, problems, summary, policies: policies.length };
}

export async function run(argv: GlobalArgs & { json?: boolean }): Promise<number> {
  const { valid, problems, summary, policies } = await validateProject(argv.C);
  if (argv.json) {
    printJson({ valid, problems });
    return valid ? 0 : 1;
  }
  if (valid) {
    printLine(`valid: ${LAYOUT.tree} (${summary}), ${LAYOUT.config}${policies ? `, ${policies} node polic${policies === 1 ? "y" : "ies"}` : ""}`);
    return 0;
  }
  const files = [...new Set(problems.map((p) => p.file))];
  printError(
    `${problems.length} problem${problems.length === 1 ? "" : "s"} in ${files.join(", ")}; fix ${problems.length === 1 ? "it" : "them"} and run \`runner validate\` again:`,
  );
  for (const problem of problems) printError(`  ${problem.file} ${formatProblem(problem)}`);
  return 1;
}

/**
 * Passed nodes of the committed tree must be unchanged in the working tree: HEAD's, or the one the
 * runner last accepted when the run's newest iteration left the tree invalid.
 */
async function immutabilityAgainstBase(root: string, tree: Parameters<typeof checkPassedImmutable>[1]): Promise<Problem[]> {
  if (!existsSync(path.join(root, ".git"))) return [];
  const [{ GitRepo }, { immutabilityBase }] = await Promise.all([import("../../adapters/git/git.js"), import("../../adapters/audit/run-trees.js")]);
  const base = await immutabilityBase(root, new GitRepo(root));
  if (!base) return [];
  const problems = checkPassedImmutable(base.tree, tree);
  if (base.from === "HEAD") return problems;
  return problems.map((problem) => ({
    ...problem,
    message: `${problem.message} (compared with the tree the runner last accepted: the newest iteration left the tree invalid)`,
  }));
}
