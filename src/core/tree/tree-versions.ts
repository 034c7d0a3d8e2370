// The versions of the tree file a run's history holds, read one after another (`runner audit`,
// `runner report`). Each version is checked as `checkTreeText` checks a file — parsed, schema,
// depth, unique ids, attempts — and, where it is the version before with one subtree replaced, the
// change is named, so that judging it needs only that subtree: a run of 1,000 iterations over a
// 1,000-node plan no longer parses and checks 1,000 whole trees.
//
// Nothing is taken on trust: every byte of every version is compared with the version before
// (the bytes come from git). The texts the runner writes are canonical (CONTRACT §3: keys in order,
// two-space indent, one field per line), so the bytes that differ lie inside one node's lines; that
// node's text in the new version is parsed alone. Everything before and after it is byte for byte
// the version before, whose tree was checked whole or in the same way — so the new tree is that
// tree with the node replaced, and the checks that depend only on the replaced subtree and its
// ancestors decide for the whole tree. Anything unusual (a version not in canonical form, a change
// that is no subtree, a replacement that fails a check) and the version is parsed and checked whole.
import { checkTreeShape, MAX_TREE_DEPTH } from "./invariants.js";
import { compareSiblings, isInCanonicalForm, type TaskNode, type TaskTree } from "./tree.js";
import { PiecedBytes } from "./pieced-bytes.js";
import { serializeTree } from "./serialize.js";

/** One node of the newest version, with its parent's id (undefined for the root). */
interface Placed {
  node: TaskNode;
  parent: string | undefined;
}

/** How a version came from the one before it: that tree with one subtree replaced. */
export interface SubtreeChange {
  /** The version before (a checked tree). */
  before: TaskTree;
  /** The subtree of `before` that was replaced, and its replacement in the new version. */
  removed: TaskNode;
  added: TaskNode;
  /** The ancestors of the replaced node, root first, in `before` and in the new version: the same fields, and children that differ only in it. */
  ancestorsBefore: readonly TaskNode[];
  ancestorsAfter: readonly TaskNode[];
  /** The node with this id in `before` (undefined when it has none). Valid until the next version is read. */
  nodeBefore(id: string): TaskNode | undefined;
}

export interface TreeVersion {
  /** The tree, checked; undefined when the file is missing or not a valid tree. */
  tree: TaskTree | undefined;
  /** When `tree` is the version before with one subtree replaced; undefined when it was read whole. */
  change?: SubtreeChange;
  /** The node with this id in `tree` (undefined when it has none), without a walk. Valid until the next version is read. */
  node(id: string): TaskNode | undefined;
}

const NEWLINE = 10;
const SPACE = 32;
const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;
/** The line that holds the root node's opening brace in the canonical text. */
const ROOT_LINE = '  "root": {';

/**
 * Reads versions in order. Holds the newest version's bytes, its tree and an index of its nodes by
 * id (what a whole read of a version builds once; a replaced subtree updates it).
 */
export class TreeVersions {
  private text: PiecedBytes | undefined;
  private tree: TaskTree | undefined;
  /** The newest version's bytes are the canonical text of `tree` (the form the runner writes). */
  private canonical = false;
  private index = new Map<string, Placed>();
  /** How many versions were read whole, and how many as a replaced subtree (for the bench). */
  readonly counts = { whole: 0, subtree: 0 };

  /** The next version's bytes (undefined: the file is missing at that commit). */
  next(given: Buffer | PiecedBytes | undefined): TreeVersion {
    const bytes = given === undefined || given instanceof PiecedBytes ? given : PiecedBytes.of(given);
    const previous = this.text;
    this.text = bytes;
    if (bytes === undefined) return this.settle(undefined, false);
    if (previous !== undefined && this.tree !== undefined && this.canonical) {
      const change = this.replacedSubtree(previous, bytes, this.tree);
      if (change !== undefined) {
        this.counts.subtree++;
        return change;
      }
    }
    this.counts.whole++;
    return this.readWhole(bytes);
  }

  private readWhole(bytes: PiecedBytes): TreeVersion {
    const text = bytes.toString();
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch {
      return this.settle(undefined, false);
    }
    const { tree } = checkTreeShape(data);
    // (the serialization, only when the tree is in canonical form: a hand-written file rarely is)
    return this.settle(tree, tree !== undefined && isInCanonicalForm(tree) && serializeTree(tree) === text);
  }

  private settle(tree: TaskTree | undefined, canonical: boolean): TreeVersion {
    this.tree = tree;
    this.canonical = canonical;
    this.index = new Map();
    if (tree) indexSubtree(this.index, tree.root, undefined);
    const index = this.index;
    return { tree, node: (id) => index.get(id)?.node };
  }

  /**
   * The new version as the one before with one subtree replaced, when it is one (undefined: read
   * it whole). `before` is canonical text of `tree`.
   */
  private replacedSubtree(before: PiecedBytes, after: PiecedBytes, tree: TaskTree): TreeVersion | undefined {
    const start = PiecedBytes.commonPrefix(before, after);
    if (start === before.length && start === after.length) return { tree, node: (id) => this.index.get(id)?.node };
    const end = before.length - PiecedBytes.commonSuffix(before, after, start); // the changed bytes of `before`: [start, end)
    const shift = after.length - before.length;
    // The innermost node whose lines hold the changed bytes, then its parents, until one's text in
    // the new version parses as one value: that value is the node's replacement.
    for (let line = nodeLineAround(before, start); line !== undefined; line = parentNodeLine(before, line)) {
      const indent = indentOf(before, line);
      const open = before.at(line + indent) === OPEN_BRACE ? line + indent : line + ROOT_LINE.length - 1;
      const close = closingBrace(before, line);
      if (close === undefined) return undefined;
      if (open > start || close + 1 < end) continue;
      const replacementText = after.toString(open, close + 1 + shift);
      let replacement: unknown;
      try {
        replacement = JSON.parse(replacementText);
      } catch {
        continue;
      }
      const placed = this.index.get(idOnLineAfter(before, line) ?? "");
      if (placed === undefined) return undefined;
      return this.replace(tree, placed, replacement, replacementText, indent);
    }
    return undefined;
  }

  /** The tree with `placed.node` replaced by `replacement`, when the result is a valid tree; undefined: read it whole. */
  private replace(tree: TaskTree, placed: Placed, replacement: unknown, replacementText: string, indent: number): TreeVersion | undefined {
    const ancestorsBefore: TaskNode[] = [];
    for (let id = placed.parent; id !== undefined; id = this.index.get(id)!.parent) ancestorsBefore.unshift(this.index.get(id)!.node);
    // The replacement checked as a tree of its own (schema, depth, unique ids, attempts)…
    const { tree: alone } = checkTreeShape({ version: 1, root: replacement });
    if (!alone) return undefined;
    const added = alone.root;
    // …then against the rest: no id it holds is used outside the replaced subtree, and it is not too deep where it sits.
    const removedIds = new Map<string, TaskNode>();
    collectIds(placed.node, removedIds);
    const addedIds = new Map<string, TaskNode>();
    const height = collectIds(added, addedIds);
    if (ancestorsBefore.length + height >= MAX_TREE_DEPTH) return undefined;
    for (const id of addedIds.keys()) if (this.index.has(id) && !removedIds.has(id)) return undefined;

    // The new tree: the ancestors copied with the one child replaced, every other node shared.
    const ancestorsAfter: TaskNode[] = [];
    let child: TaskNode = added;
    let replaced: TaskNode = placed.node;
    /** Where the replacement stands among its siblings. */
    let place = 0;
    for (let i = ancestorsBefore.length - 1; i >= 0; i--) {
      const parent = ancestorsBefore[i]!;
      const at = parent.children.indexOf(replaced);
      if (at < 0) return undefined;
      if (i === ancestorsBefore.length - 1) place = at;
      const children = parent.children.slice();
      children[at] = child;
      const copy = { ...parent, children };
      ancestorsAfter.unshift(copy);
      replaced = parent;
      child = copy;
    }
    if (replaced !== tree.root) return undefined;
    const next: TaskTree = { ...tree, root: child };
    const parentAfter = ancestorsAfter[ancestorsAfter.length - 1];
    const canonical = inCanonicalPlace(added, parentAfter, place) && canonicalText(added, indent) === replacementText;

    const index = this.index;
    for (const id of removedIds.keys()) index.delete(id);
    indexSubtree(index, added, placed.parent);
    for (const ancestor of ancestorsAfter) index.get(ancestor.id)!.node = ancestor;
    this.tree = next;
    this.canonical = canonical;
    const ancestorById = new Map(ancestorsBefore.map((node) => [node.id, node]));
    return {
      tree: next,
      node: (id) => index.get(id)?.node,
      change: {
        before: tree,
        removed: placed.node,
        added,
        ancestorsBefore,
        ancestorsAfter,
        nodeBefore: (id) => removedIds.get(id) ?? ancestorById.get(id) ?? (addedIds.has(id) ? undefined : index.get(id)?.node),
      },
    };
  }
}

/** Every node of the subtree into the index, with its parent's id. */
function indexSubtree(index: Map<string, Placed>, top: TaskNode, parent: string | undefined): void {
  const nodes: TaskNode[] = [top];
  const parents: (string | undefined)[] = [parent];
  while (nodes.length > 0) {
    const node = nodes.pop()!;
    index.set(node.id, { node, parent: parents.pop() });
    for (const child of node.children) {
      nodes.push(child);
      parents.push(node.id);
    }
  }
}

/** The subtree's nodes by id; returns its height (1 for a leaf). */
function collectIds(top: TaskNode, into: Map<string, TaskNode>): number {
  let height = 0;
  const nodes: TaskNode[] = [top];
  const depths: number[] = [1];
  while (nodes.length > 0) {
    const node = nodes.pop()!;
    const depth = depths.pop()!;
    if (depth > height) height = depth;
    into.set(node.id, node);
    for (const child of node.children) {
      nodes.push(child);
      depths.push(depth + 1);
    }
  }
  return height;
}

/**
 * Whether the replacement is in canonical form and sorts where it stands among its siblings (at
 * `place` of `parent`'s children). Its siblings are those of the version before, which was canonical
 * (a subtree is looked for only then): they are in order among themselves, so only the two beside
 * it need a look — not all of them, a thousand for each version of a flat plan.
 */
function inCanonicalPlace(added: TaskNode, parent: TaskNode | undefined, place: number): boolean {
  if (!isInCanonicalForm({ version: 1, root: added })) return false;
  if (parent === undefined) return true;
  const before = parent.children[place - 1];
  const after = parent.children[place + 1];
  return (before === undefined || compareSiblings(before, added) <= 0) && (after === undefined || compareSiblings(added, after) <= 0);
}

/**
 * A node's canonical text on a line indented by `indent`: its fields two spaces deeper, its closing
 * brace at `indent` (the root's line `  "root": {` is indented by 2, as its closing brace is).
 */
function canonicalText(node: TaskNode, indent: number): string {
  return JSON.stringify(node, null, 2).replaceAll("\n", `\n${" ".repeat(indent)}`);
}

// ---------------------------------------------------------------------------------------------
// The canonical text, line by line. A node's opening brace ends a line of its own (the root's
// ends `  "root": {`); its fields are the lines after it, two spaces deeper; its closing brace
// starts a line indented as the opening one. Nothing inside a node is indented less than its
// braces, and a string never holds a line end, so indentation alone tells where a node ends.

function lineStart(text: PiecedBytes, at: number): number {
  return at <= 0 ? 0 : text.lastIndexOf(NEWLINE, at - 1) + 1;
}

function indentOf(text: PiecedBytes, line: number): number {
  let at = line;
  while (text.at(at) === SPACE) at++;
  return at - line;
}

/** Whether the line opens a node: its brace alone, or the root's line. */
function opensNode(text: PiecedBytes, line: number): boolean {
  const indent = indentOf(text, line);
  if (text.at(line + indent) === OPEN_BRACE) return text.at(line + indent + 1) === NEWLINE && line > 0;
  return indent === 2 && text.at(line + ROOT_LINE.length) === NEWLINE && text.toString(line, line + ROOT_LINE.length) === ROOT_LINE;
}

/** The line that opens the innermost node holding byte `at` (or one around it); undefined: none does. */
function nodeLineAround(text: PiecedBytes, at: number): number | undefined {
  const line = lineStart(text, at);
  const indent = indentOf(text, line);
  if (opensNode(text, line) && at >= line + indent) return line;
  return enclosingNodeLine(text, line, indent);
}

/** The line of the node around the node that `line` opens. */
function parentNodeLine(text: PiecedBytes, line: number): number | undefined {
  return enclosingNodeLine(text, line, indentOf(text, line));
}

/** Back from `line`, the first line less indented than `indent` that opens a node (skipping the `children` and `acceptance` lines). */
function enclosingNodeLine(text: PiecedBytes, line: number, indent: number): number | undefined {
  let limit = indent;
  for (let at = line; at > 0; ) {
    at = lineStart(text, at - 1);
    const depth = indentOf(text, at);
    if (depth >= limit) continue;
    if (opensNode(text, at)) return at;
    limit = depth;
  }
  return undefined;
}

/** Where the closing brace of the node that `line` opens is (undefined: the text is not as expected). */
function closingBrace(text: PiecedBytes, line: number): number | undefined {
  const indent = indentOf(text, line);
  for (let at = text.indexOf(NEWLINE, line) + 1; at > 0 && at < text.length; at = text.indexOf(NEWLINE, at) + 1) {
    const depth = indentOf(text, at);
    if (depth > indent) continue;
    return depth === indent && text.at(at + depth) === CLOSE_BRACE ? at + depth : undefined;
  }
  return undefined;
}

/** The id on the line after a node's opening line (`"id": "…",`), or undefined. */
function idOnLineAfter(text: PiecedBytes, line: number): string | undefined {
  const next = text.indexOf(NEWLINE, line) + 1;
  const end = text.indexOf(NEWLINE, next);
  if (next <= 0 || end < 0) return undefined;
  const match = /^ *"id": ("(?:[^"\\]|\\.)*"),$/.exec(text.toString(next, end));
  if (!match) return undefined;
  try {
    return JSON.parse(match[1]!) as string;
  } catch {
    return undefined;
  }
}
