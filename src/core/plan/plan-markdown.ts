// A Markdown plan as drafts (src/core/plan/plan-draft.ts): plain checklists, spec-kit's tasks.md and Kiro's
// tasks.md. How each construct maps is in docs/plans.md; in short: the first top heading outside code
// blocks is the root, checklist items are the nodes (nested by indentation, Kiro's `1.1` under `1.`
// whatever its indentation), headings with items beneath them group those items, and everything
// else — headings without items, fenced code, `_Requirements: …_` — is context for the node it sits
// under. One pass over the lines to find the code blocks, one to read the rest; no recursion.
import { childDraft, draft, refuseAll, removeItems, type Draft } from "./plan-draft.js";
import { count } from "../base/text-limits.js";
import { PlanEditError } from "../edit/plan-edit.js";

const FENCE = /^( {0,3})(`{3,}|~{3,})/;
const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$/;
/** `- [ ] text`, `* [x] text`, `1. [-] text`, Kiro's optional `- [ ]* text`. */
const CHECK_ITEM = /^([ \t]*)(?:[-*+]|\d{1,9}[.)])[ \t]+\[([ xX-])\](\*?)(?:[ \t]+(.*?))?[ \t]*$/;
const BULLET = /^([ \t]*)(?:[-*+]|\d{1,9}[.)])[ \t]+(.*?)[ \t]*$/;
const RULE = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const CHECKPOINT = /^[ \t]*\*\*Checkpoint\*\*[ \t]*:?[ \t]*(.*?)[ \t]*$/i;
/** spec-kit's task id at the start of an item: `T001 [P] [US1] Create …`. */
const SPEC_KIT_ID = /^(T\d{1,9})\b[ \t]*(.*)$/;
/** Kiro's (or any) outline number at the start of an item: `12. Create …`, `12.1 Add …`. */
const OUTLINE = /^(\d{1,6}(?:\.\d{1,6})*)\.?[ \t]+(.*)$/;
/** Kiro's labelled notes (`_Requirements: 1.1, 2.3_`): context, not a criterion. */
const LABELLED_NOTE = /^_[^_]+:.*_$/;

interface Line {
  text: string;
  /** Inside a fenced code block, or one of its fences. */
  fenced: boolean;
  /** YAML front matter at the top: metadata, ignored. */
  front: boolean;
}

const widthOf = (indent: string) => indent.replace(/\t/g, "    ").length;

/** The lines, each marked as code (fenced) or front matter, so that no later pass reads a heading or an item in them. */
function classify(text: string): Line[] {
  const lines = text.split("\n").map((line) => ({ text: line, fenced: false, front: false }));
  let start = 0;
  if (lines[0]?.text.trim() === "---") {
    const end = lines.findIndex((line, i) => i > 0 && (line.text.trim() === "---" || line.text.trim() === "..."));
    if (end > 0) {
      for (let i = 0; i <= end; i++) lines[i]!.front = true;
      start = end + 1;
    }
  }
  let open: { char: string; length: number } | undefined;
  for (let i = start; i < lines.length; i++) {
    const line = lines[i]!;
    const fence = FENCE.exec(line.text);
    if (open) {
      line.fenced = true;
      if (fence && fence[2]![0] === open.char && fence[2]!.length >= open.length && line.text.trim() === fence[2]) open = undefined;
    } else if (fence) {
      line.fenced = true;
      open = { char: fence[2]![0]!, length: fence[2]!.length };
    }
  }
  return lines;
}

/** The outline numbers of the file's items, when every numbered item has its own (else numbers are read as plain title text). */
function outlineNumbering(lines: readonly Line[]): boolean {
  const seen = new Set<string>();
  for (const line of lines) {
    if (line.fenced || line.front) continue;
    const item = CHECK_ITEM.exec(line.text);
    const title = item?.[4]?.trim();
    if (!title || SPEC_KIT_ID.test(title)) continue;
    const number = OUTLINE.exec(title)?.[1];
    if (number === undefined) continue;
    if (seen.has(number)) return false;
    seen.add(number);
  }
  return seen.size > 0;
}

export interface MarkdownPlan {
  root: Draft;
  /** Items left out because the plan marks them finished (with `skipDone`). */
  removed: Draft[];
}

export function markdownDraft(name: string, text: string, options: { skipDone: boolean }): MarkdownPlan {
  const lines = classify(text);
  const hasItems = lines.some((line) => !line.fenced && !line.front && CHECK_ITEM.test(line.text));
  const numbering = outlineNumbering(lines);
  const root = draft(`Plan from ${name}`, "the root", 0);
  // Each heading's own lines (up to the next heading), kept for when it turns out to be context.
  const headings = new Map<Draft, string[]>();
  const items = new Set<Draft>();
  const context = new Map<Draft, string[][]>();
  let rootTaken = false;
  let headingStack: { level: number; node: Draft }[] = [{ level: 0, node: root }];
  let itemStack: { indent: number; node: Draft }[] = [];
  const outline = new Map<string, Draft>();
  const untitled: string[] = [];
  let last: Draft = root; // the node the previous line went to (a lazy continuation joins it)
  let blank = false;
  let fenceTarget: Draft | undefined;

  const container = () => headingStack[headingStack.length - 1]!.node;
  const itemFor = (indent: number) => {
    for (let k = itemStack.length - 1; k >= 0; k--) if (itemStack[k]!.indent < indent) return itemStack[k]!.node;
    return undefined;
  };
  const addText = (node: Draft, line: string) => {
    if (blank && node.goal.length > 0) node.goal.push("");
    node.goal.push(line);
    last = node;
    blank = false;
  };

  lines.forEach((line, index) => {
    if (line.front) return;
    const where = `line ${index + 1}`;
    const heading = line.fenced ? null : HEADING.exec(line.text);
    if (!heading) headings.get(container())?.push(line.text);
    if (line.fenced) {
      // Code is never parsed: it is text of the node it sits under, as written (a block goes whole to one node).
      fenceTarget ??= itemFor(widthOf(/^[ \t]*/.exec(line.text)![0])) ?? (!blank && itemStack.length > 0 ? last : container());
      addText(fenceTarget, line.text);
      if (!lines[index + 1]?.fenced) fenceTarget = undefined;
      return;
    }
    if (heading) {
      const level = heading[1]!.length;
      const title = (heading[2] ?? "").replace(/[ \t]+#+$/, "").trim();
      if (title === "") untitled.push(where);
      itemStack = [];
      blank = false;
      if (level === 1 && !rootTaken) {
        rootTaken = true;
        root.title = title;
        headingStack = [{ level: 0, node: root }];
        last = root;
        return;
      }
      headingStack = headingStack.filter((entry) => entry.level < level);
      const parent = container();
      const node = childDraft(name, parent, title, where);
      parent.children.push(node);
      headingStack.push({ level, node });
      headings.set(node, [line.text]);
      last = node;
      return;
    }
    const item = CHECK_ITEM.exec(line.text);
    if (item) {
      const indent = widthOf(item[1]!);
      let title = (item[4] ?? "").trim();
      let id: string | undefined;
      let number: string | undefined;
      const specKit = SPEC_KIT_ID.exec(title);
      if (specKit) [, id, title] = specKit as unknown as [string, string, string];
      else if (numbering) {
        const numbered = OUTLINE.exec(title);
        if (numbered) {
          [, number, title] = numbered as unknown as [string, string, string];
          id = `task-${number}`;
        }
      }
      title = title.trim();
      if (title === "") untitled.push(where);
      const up = number?.includes(".") ? outline.get(number.slice(0, number.lastIndexOf("."))) : undefined;
      const parent = up ?? (number !== undefined ? container() : (itemFor(indent) ?? container()));
      const node = childDraft(name, parent, title, id ?? where);
      if (id !== undefined) node.id = id;
      if (item[2] === "x" || item[2] === "X") node.finished = true;
      if (item[3] === "*") node.goal.push("Optional in the plan (`[ ]*`).");
      parent.children.push(node);
      items.add(node);
      if (number !== undefined) outline.set(number, node);
      itemStack = itemStack.filter((entry) => entry.indent < indent);
      itemStack.push({ indent, node });
      last = node;
      blank = false;
      return;
    }
    const checkpoint = CHECKPOINT.exec(line.text);
    if (checkpoint) {
      // spec-kit closes each phase with its checkpoint: an acceptance criterion of the phase (the outermost section).
      (headingStack[1]?.node ?? container()).acceptance.push(checkpoint[1] || "Checkpoint");
      itemStack = [];
      blank = false;
      return;
    }
    if (RULE.test(line.text)) {
      blank = true;
      return;
    }
    const bullet = BULLET.exec(line.text);
    if (bullet) {
      const target = itemFor(widthOf(bullet[1]!)) ?? container();
      const entry = bullet[2]!;
      if (LABELLED_NOTE.test(entry)) addText(target, entry);
      else {
        target.acceptance.push(entry);
        last = target;
        blank = false;
      }
      return;
    }
    if (line.text.trim() === "") {
      blank = true;
      return;
    }
    const indent = widthOf(/^[ \t]*/.exec(line.text)![0]);
    // A line right under an item continues it; an indented one belongs to the item it is indented under; else a paragraph ends the list.
    const target = !blank && itemStack.length > 0 ? last : itemFor(indent);
    if (target === undefined) itemStack = [];
    addText(target ?? container(), line.text.trim());
  });

  refuseAll(name, untitled, (n) => `${count(n, "heading or item")} without text`, "give each a title or remove it");
  const removed = options.skipDone ? removeItems(root, (item) => item.finished === true) : [];
  if (hasItems) foldSectionsWithoutItems(root, headings, items, context);
  for (const [node, sections] of context) for (const section of sections) node.goal.push("", ...section);
  if (root.children.length === 0 && removed.length === 0)
    throw new PlanEditError(
      `${name} has no checklist items (\`- [ ] …\`) or headings to make nodes of; write the plan as a checklist, or use \`runner init --goal\``,
    );
  return { root, removed };
}

/**
 * A heading with no checklist item anywhere beneath it (spec-kit's "Format", "Notes", "Parallel
 * Example") is context, not work: its lines, as written, join the goal of the section above it.
 * Children before parents, so a section's item-less subsections are already folded into it.
 */
function foldSectionsWithoutItems(root: Draft, headings: ReadonlyMap<Draft, string[]>, items: ReadonlySet<Draft>, context: Map<Draft, string[][]>) {
  const order: { node: Draft; parent: Draft | undefined }[] = [];
  const stack: { node: Draft; parent: Draft | undefined }[] = [{ node: root, parent: undefined }];
  while (stack.length > 0) {
    const entry = stack.pop()!;
    order.push(entry);
    for (const child of entry.node.children) stack.push({ node: child, parent: entry.node });
  }
  const holdsItems = new Set<Draft>();
  for (let i = order.length - 1; i >= 0; i--) {
    const { node, parent } = order[i]!;
    if (items.has(node) || node.children.some((child) => holdsItems.has(child))) {
      holdsItems.add(node);
      continue;
    }
    const lines = headings.get(node);
    if (!parent || !lines) continue;
    parent.children = parent.children.filter((child) => child !== node);
    const own = context.get(node) ?? [];
    const section = [...lines, ...own.flatMap((part) => ["", ...part])];
    while (section.length > 0 && section[section.length - 1]!.trim() === "") section.pop();
    const list = context.get(parent);
    if (list) list.push(section);
    else context.set(parent, [section]);
  }
}
