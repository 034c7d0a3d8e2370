// `runner init --plan FILE` and `runner import FILE`: the tree from a plan a person already wrote — a
// Markdown checklist (plain, spec-kit's or Kiro's tasks.md), ralph's prd.json, or task-master's
// tasks.json. Pure and deterministic: the same bytes give the same tree, and so the same file. What
// cannot be mapped is refused in one sentence naming every offending item (how many, the first few).
// A finished item (a checked box, status done, passes: true) is neither refused nor passed: it is an
// open leaf listed in `finished`, for the guard alone to judge first (src/core/plan/plan-finished.ts), or
// with `skipDone` left out and listed in `done`. How each field maps: docs/plans.md.
import { allDrafts, orderByDependencies, refuseAll, removeItems, type Draft } from "./plan-draft.js";
import { count } from "../base/text-limits.js";
import { idFromTitle, PlanEditError } from "../edit/plan-edit.js";
import { NODE_ID_PATTERN as ID_PATTERN } from "../commit/commit-message.js";
import { jsonPlan } from "./plan-json.js";
import { markdownDraft } from "./plan-markdown.js";
import { checkTreeShape, TITLE_PROBLEM } from "../tree/invariants.js";
import { formatProblem } from "../base/problems.js";
import { sortedCopy, type TaskNode, type TaskTree } from "../tree/tree.js";

export type PlanFormat = "markdown" | "ralph" | "task-master";

export interface ImportOptions {
  maxAttempts: number;
  /** --goal: the root's goal instead of the plan's. */
  goal?: string;
  /** --skip-done: finished items left out (listed in `done`) instead of judged by the guard first. */
  skipDone?: boolean;
  /** --tag: the task-master tag to read. */
  tag?: string;
  /** task-master's current tag (`.taskmaster/state.json` beside the file), when the caller found one. */
  currentTag?: string;
}

/** An item the plan marks finished that `skipDone` left out. */
export interface DoneItem {
  id: string | undefined;
  title: string;
}

export interface ImportedPlan {
  format: PlanFormat;
  /** The plan's top node (the tree's root for `init --plan`). */
  root: TaskNode;
  /** Leaves the plan marks finished, in tree order: the guard alone judges each first. */
  finished: string[];
  /** With `skipDone`: the finished items left out (topmost ones), in plan order. */
  done: DoneItem[];
  /** The task-master tag read. */
  tag?: string;
}

/** The tree of a plan file for `runner init --plan`: its root is the tree's root (`root`). */
export function importPlan(name: string, content: Uint8Array | string, options: ImportOptions): ImportedPlan & { tree: TaskTree } {
  const plan = readPlan(name, content, options, { rootId: "root", taken: new Set() });
  if (options.goal?.trim()) plan.root.goal = options.goal.trim();
  const tree = sortedCopy({ version: 1, root: plan.root });
  const shape = checkTreeShape(tree);
  if (!shape.tree) throw new PlanEditError(`${name} does not give a valid tree (${formatProblem(shape.problems[0]!)})`);
  return { ...plan, root: tree.root, tree };
}

/**
 * The nodes of a plan file for `runner import`: its top node gets an id from its title, not taken
 * by `taken` (the ids of the tree it joins), nor are any of the ids under it.
 */
export function importPlanNodes(name: string, content: Uint8Array | string, options: ImportOptions, taken: ReadonlySet<string>): ImportedPlan {
  return readPlan(name, content, options, { taken });
}

function readPlan(
  name: string,
  content: Uint8Array | string,
  options: ImportOptions,
  into: { rootId?: string; taken: ReadonlySet<string> },
): ImportedPlan {
  const text = planText(name, content);
  const skipDone = options.skipDone === true;
  let format: PlanFormat;
  let root: Draft;
  let removed: Draft[] = [];
  let tag: string | undefined;
  if (/\.(md|markdown|txt)$/i.test(name)) {
    if (options.tag !== undefined) throw new PlanEditError(`--tag is for task-master's tasks.json, and ${name} is Markdown; leave --tag out`);
    format = "markdown";
    ({ root, removed } = markdownDraft(name, text, { skipDone }));
  } else {
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch {
      throw new PlanEditError(
        `${name} is neither Markdown (.md) nor valid JSON; give a Markdown checklist, ralph's prd.json or task-master's tasks.json`,
      );
    }
    const json = jsonPlan(name, data, options);
    ({ format, root, tag } = json);
    // Cancelled items are never work; finished ones leave the plan only when asked to.
    removed = removeItems(root, (item) => item.cancelled === true || (skipDone && item.finished === true)).filter((item) => !item.cancelled);
    orderByDependencies(name, root, json.rank);
  }
  if (root.children.length === 0)
    throw new PlanEditError(
      removed.length > 0
        ? `${name}: every one of its ${count(removed.length, "item")} is finished; import it without --skip-done (the guard then judges them first), or start from --goal`
        : `${name} has nothing left to work on (every task is cancelled); give a plan with open work, or start from --goal`,
    );
  const built = buildNodes(name, root, options.maxAttempts, into);
  return {
    format,
    root: built.root,
    finished: skipDone ? [] : built.finished,
    done: removed.map((item) => ({ id: item.id, title: item.title })),
    ...(tag !== undefined ? { tag } : {}),
  };
}

/** GOAL.md's section for the items `--skip-done` left out: work the plan says is already done (empty when none). */
export function doneSection(done: readonly DoneItem[]): string {
  if (done.length === 0) return "";
  const lines = done.map((item) => `- ${item.id !== undefined ? `${item.id}: ` : ""}${item.title}`);
  return `\n## Already done\n\nThe plan marks these finished; \`--skip-done\` left them out of the task tree (no guard judged them):\n\n${lines.join("\n")}\n`;
}

/** The plan's bytes as text: UTF-8 without control characters (a tab and line ends aside), line ends made `\n`. */
function planText(name: string, content: Uint8Array | string): string {
  let text: string;
  if (typeof content === "string") text = content;
  else {
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(content);
    } catch {
      throw new PlanEditError(`${name} is not text (it is not valid UTF-8); give a Markdown or JSON plan saved as UTF-8 text`);
    }
  }
  text = text.replace(/^\uFEFF/, "").replace(/\r\n?/g, "\n");
  const lines: string[] = [];
  let line = 1;
  // A control character is what binary data is full of and no plan holds.
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  for (const match of text.matchAll(/[\u0000-\u0008\u000B-\u001F\u007F-\u009F]|\n/g)) {
    if (match[0] === "\n") line++;
    else if (lines[lines.length - 1] !== `line ${line}`) lines.push(`line ${line}`);
  }
  refuseAll(
    name,
    lines,
    (n) => `is not text: ${count(n, "line")} ${n === 1 ? "holds" : "hold"} control characters`,
    "give a Markdown or JSON plan saved as UTF-8 text",
  );
  return text;
}

/**
 * The drafts as tree nodes, without recursion: ids the plan gives checked (pattern, unique, not
 * taken), then the others derived from titles in one pass (linear: each title's counter remembered).
 */
function buildNodes(
  name: string,
  root: Draft,
  maxAttempts: number,
  into: { rootId?: string; taken: ReadonlySet<string> },
): { root: TaskNode; finished: string[] } {
  const drafts = allDrafts(root);
  const taken = new Set(into.taken);
  if (into.rootId !== undefined) {
    root.id = into.rootId;
    taken.add(into.rootId);
  } else root.id = undefined;
  const invalid: string[] = [];
  const twice: string[] = [];
  const clash: string[] = [];
  const badTitles: string[] = [];
  const given = new Set<string>();
  for (const item of drafts) {
    if (TITLE_PROBLEM.test(item.title)) badTitles.push(item.where);
    if (item.id === undefined || item === root) continue;
    if (!ID_PATTERN.test(item.id)) invalid.push(JSON.stringify(item.id));
    else if (given.has(item.id)) twice.push(JSON.stringify(item.id));
    else if (taken.has(item.id)) clash.push(JSON.stringify(item.id));
    given.add(item.id);
  }
  refuseAll(name, invalid, (n) => `${count(n, "id")} cannot be node ids`, "ids use letters, digits, '.', '_' and '-' (at most 128)");
  refuseAll(name, twice, (n) => `${count(n, "id")} ${n === 1 ? "is" : "are"} used twice`, "ids must be unique");
  refuseAll(
    name,
    clash,
    (n) => `${count(n, "id")} ${n === 1 ? "is" : "are"} already in the tree`,
    "rename them in the file, or remove those nodes first",
  );
  refuseAll(name, badTitles, (n) => `${count(n, "title")} ${n === 1 ? "holds" : "hold"} control characters`, "titles are one line of text");
  for (const id of given) taken.add(id);
  const counters = new Map<string, number>();
  const nodes = new Map<Draft, TaskNode>();
  const finished: string[] = [];
  for (const item of drafts) {
    const id = item.id ?? idFromTitle(item.title, taken, counters);
    taken.add(id);
    const node: TaskNode = {
      id,
      order: item.order ?? 0,
      title: item.title,
      goal: item.goal.join("\n").trim(),
      acceptance: item.acceptance,
      passes: false,
      attempts: 0,
      max_attempts: maxAttempts,
      children: [],
    };
    nodes.set(item, node);
    if (item.children.length === 0 && item.finished === true && item !== root) finished.push(id);
  }
  for (const item of drafts) {
    const node = nodes.get(item)!;
    item.children.forEach((child, i) => {
      const built = nodes.get(child)!;
      built.order = child.order ?? i;
      node.children.push(built);
    });
  }
  return { root: nodes.get(root)!, finished };
}
