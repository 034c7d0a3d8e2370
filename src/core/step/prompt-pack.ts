// The prompt pack (seed 001 §8): a stable order, bounded in size. Templates are Markdown with
// `{{name}}` placeholders; the built-in ones can be overridden per repository in `.runner/prompts/`
// (leaf.md, repair.md).
import { LAYOUT } from "../base/layout.js";
import { formatProblem, type Problem } from "../base/problems.js";
import { truncateForAgent } from "../base/text-limits.js";
import { orderedChildren, type TaskNode, type TaskTree } from "../tree/tree.js";

export type PromptKind = "leaf" | "repair";

export const LEAF_PLACEHOLDERS = [
  "contract",
  "goal",
  "node_id",
  "node_title",
  "node_path",
  "node_json",
  "attempts",
  "max_attempts",
  "stuck",
  "history",
  "failure",
  "node_context",
  "tree_summary",
  "notes",
  "guard",
  "output_file",
] as const;
export const REPAIR_PLACEHOLDERS = ["contract", "goal", "problems", "tree_summary", "output_file"] as const;

export const BUILTIN_TEMPLATES: Record<PromptKind, string> = {
  leaf: `# Runner contract

{{contract}}

# Project goal (.runner/GOAL.md)

{{goal}}

# Your task: node \`{{node_id}}\` — {{node_title}}

Path from the root: {{node_path}}
Attempts used: {{attempts}} of {{max_attempts}}.
{{stuck}}
\`\`\`json
{{node_json}}
\`\`\`

## Earlier iterations on this node

{{history}}

## Last failure on this node

{{failure}}

## Node context (.runner/nodes/{{node_id}}/context.md)

{{node_context}}

# The rest of the tree

{{tree_summary}}

# Notes

{{notes}}

# Guard

{{guard}}

# When you finish

Write your answer as JSON to the file \`{{output_file}}\` (also in $RUNNER_OUTPUT_FILE), nothing else in it:
\`{"status": "done" | "retry" | "decomposed", "summary": "what you did and what is left"}\`
`,
  repair: `# Runner contract

{{contract}}

# REPAIR TREE

The task tree \`.runner/state/tree.json\` is invalid after the last iteration. Do not work on any task now:
restore the tree so that it is valid again, keeping the work recorded in it. These are the problems:

{{problems}}

Rules: the file must match \`.runner/state/schema.json\` exactly (no extra keys), ids must be unique,
attempts ≤ max_attempts, and every node that had passed must be back exactly as it was, in the same place.
The last valid tree is in git history (\`git log -- .runner/state/tree.json\`).

# Project goal (.runner/GOAL.md)

{{goal}}

# The last valid tree

{{tree_summary}}

# When you finish

Write your answer as JSON to the file \`{{output_file}}\` (also in $RUNNER_OUTPUT_FILE), nothing else in it:
\`{"status": "done", "summary": "what you repaired"}\`
`,
};

export const RUNNER_CONTRACT = `You are one fresh agent session of a deterministic loop runner. The runner, not you, decides what
is done: it selected one leaf of the task tree for you, and after you finish it classifies the
iteration, runs the guard, updates the tree and commits everything.

- The task tree \`${LAYOUT.tree}\` is the only progress state. Keep it strictly valid JSON matching
  \`${LAYOUT.schema}\`: every node has exactly id, order, title, goal, acceptance, passes, attempts,
  max_attempts, children; ids are unique (letters, digits, . _ -).
- \`passes\` and \`attempts\` are runner-owned: your edits to them are ignored.
- A node with passes = true is immutable: never change, move or remove it. Follow-up work becomes new nodes.
- You may edit any open node, not only yours. Children are ordered by (order, id).
- Work on the selected leaf only. Either do it (change files outside .runner/ and answer "done"), or
  split it into smaller child nodes under it in the tree (change only .runner/ and answer "decomposed"),
  or make partial progress and answer "retry".
- A leaf passes only when you answer "done", you changed something outside .runner/, and the guard is green.
- Never block on a question: record assumptions in \`${LAYOUT.assumptions}\` and open questions in
  \`${LAYOUT.questions}\` (append), then proceed.
- Do not edit \`${LAYOUT.config}\` or the guard's own files; do not commit: the runner commits.`;

export interface LeafPromptInput {
  tree: TaskTree;
  path: TaskNode[];
  stuck: boolean;
  goal: string;
  history: string;
  failure: string;
  nodeContext: string | undefined;
  notes: { name: string; text: string | undefined }[];
  guardCommand: readonly string[];
  protectedPaths: readonly string[];
  allowedWritePaths: readonly string[] | undefined;
  outputFile: string;
}

export interface RepairPromptInput {
  goal: string;
  problems: Problem[];
  lastValidTree: TaskTree | undefined;
  outputFile: string;
}

/** Longest text of any one free-text section (goal, notes, sidecars); the prompt stays bounded. */
export const SECTION_LIMIT = 16_000;
/** Lines of the rest-of-tree summary. */
export const SUMMARY_LINES = 200;

function bounded(text: string | undefined, empty: string, limit = SECTION_LIMIT): string {
  const trimmed = (text ?? "").trim();
  if (trimmed === "") return empty;
  return trimmed.length > limit ? `${trimmed.slice(0, limit)}\n... (${trimmed.length - limit} more characters not shown)` : trimmed;
}

/** Fills `{{name}}` placeholders; unknown names are left as they are. */
export function renderTemplate(template: string, values: Record<string, string>): string {
  return template.replace(/\{\{\s*([a-z_]+)\s*\}\}/g, (whole, name: string) => values[name] ?? whole);
}

/** Placeholders a template uses that the kind does not know (reported by `runner validate`). */
export function unknownPlaceholders(template: string, kind: PromptKind): string[] {
  const known: readonly string[] = kind === "leaf" ? LEAF_PLACEHOLDERS : REPAIR_PLACEHOLDERS;
  const used = [...template.matchAll(/\{\{\s*([a-z_]+)\s*\}\}/g)].map((m) => m[1]!);
  return [...new Set(used.filter((name) => !known.includes(name)))].sort();
}

/** One line per node, indented, the selected leaf marked; at most SUMMARY_LINES lines. */
export function summarizeTree(tree: TaskTree, selectedId?: string): string {
  const lines: string[] = [];
  let total = 0;
  const stack: { node: TaskNode; depth: number }[] = [{ node: tree.root, depth: 0 }];
  while (stack.length > 0) {
    if (lines.length >= SUMMARY_LINES) {
      // The summary is full: the rest is only counted, in any order, without sorting or copying.
      const rest = stack.map((entry) => entry.node);
      while (rest.length > 0) {
        const node = rest.pop()!;
        total++;
        for (const child of node.children) rest.push(child);
      }
      break;
    }
    const { node, depth } = stack.pop()!;
    total++;
    const mark = node.passes ? "✓" : "○";
    const you = node.id === selectedId ? "   ← your task" : "";
    lines.push(`${"  ".repeat(depth)}${mark} ${node.id} — ${node.title} (${node.attempts}/${node.max_attempts})${you}`);
    const children = orderedChildren(node);
    for (let i = children.length - 1; i >= 0; i--) stack.push({ node: children[i]!, depth: depth + 1 });
  }
  if (total > lines.length) lines.push(`... and ${total - lines.length} more nodes (see ${LAYOUT.tree})`);
  return lines.join("\n");
}

function guardSection(input: LeafPromptInput): string {
  const lines = [
    `After an EXECUTE iteration (a change outside .runner/) where you answer "done", the runner runs \`${input.guardCommand.join(" ")}\`.`,
    "The leaf passes only if it exits 0 within the iteration's time budget. Its output is not shown to you now;",
    "if it fails, the next iteration on this node sees the failure.",
    `You may not change these paths (the iteration fails if you do): ${input.protectedPaths.join(", ")}.`,
  ];
  if (input.allowedWritePaths) {
    lines.push(`This node may change only these paths outside .runner/: ${input.allowedWritePaths.join(", ")}.`);
  }
  return lines.join("\n");
}

export function buildLeafPrompt(input: LeafPromptInput, template = BUILTIN_TEMPLATES.leaf): string {
  const leaf = input.path[input.path.length - 1]!;
  const leafJson = JSON.stringify({ ...leaf, children: orderedChildren(leaf) }, null, 2);
  const stuck = input.stuck
    ? `\n**This leaf is stuck: it has used all ${leaf.max_attempts} attempts.** Do not try it again as it is. Decompose it:\nadd smaller child nodes under \`${leaf.id}\` in ${LAYOUT.tree} and answer "decomposed".\n`
    : "";
  return renderTemplate(template, {
    contract: RUNNER_CONTRACT,
    goal: bounded(input.goal, "(.runner/GOAL.md is empty)"),
    node_id: leaf.id,
    node_title: leaf.title,
    node_path: input.path.map((node) => node.id).join(" › "),
    node_json: leafJson,
    attempts: String(leaf.attempts),
    max_attempts: String(leaf.max_attempts),
    stuck,
    history: truncateForAgent(input.history.trim() || "(none)"),
    failure: truncateForAgent(input.failure.trim() || "(none)"),
    node_context: bounded(input.nodeContext, "(none)"),
    tree_summary: summarizeTree(input.tree, leaf.id),
    notes: input.notes.map((note) => `## ${note.name}\n\n${truncateForAgent(bounded(note.text, "(empty)"))}`).join("\n\n"),
    guard: guardSection(input),
    output_file: input.outputFile,
  });
}

export function buildRepairPrompt(input: RepairPromptInput, template = BUILTIN_TEMPLATES.repair): string {
  return renderTemplate(template, {
    contract: RUNNER_CONTRACT,
    goal: bounded(input.goal, "(.runner/GOAL.md is empty)"),
    problems: truncateForAgent(input.problems.map((p) => `- ${formatProblem(p)}`).join("\n")),
    tree_summary: input.lastValidTree ? summarizeTree(input.lastValidTree) : "(no valid tree found in history)",
    output_file: input.outputFile,
  });
}

/** `.runner/context/node.md`: the selected leaf as the agent reads it. */
export function renderNodeContext(leaf: TaskNode, path: readonly TaskNode[], stuck: boolean): string {
  const acceptance = leaf.acceptance.length > 0 ? leaf.acceptance.map((line) => `- ${line}`).join("\n") : "(none given)";
  const lines = [
    `# ${leaf.id} — ${leaf.title}`,
    "",
    `Path: ${path.map((node) => node.id).join(" › ")}`,
    `Attempts: ${leaf.attempts} of ${leaf.max_attempts}${stuck ? " (stuck: decompose it)" : ""}`,
    "",
    "## Goal",
    "",
    leaf.goal || "(none given)",
    "",
    "## Acceptance",
    "",
    acceptance,
    "",
  ];
  return lines.join("\n");
}

/** The files of `.runner/context/` for a repair step (no leaf is selected). */
export function repairContextFiles(goal: string, problems: readonly Problem[]): Record<string, string> {
  return {
    "goal.md": goal,
    "node.md": `# REPAIR TREE\n\nNo leaf is selected: restore ${LAYOUT.tree} to a valid tree.\n`,
    "history.md": "A repair step has no node history.\n",
    "failure.md": `# Problems of ${LAYOUT.tree}\n\n${problems.map((p) => `- ${formatProblem(p)}`).join("\n")}\n`,
  };
}
