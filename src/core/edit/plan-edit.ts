// A person's edits of the plan (`runner add | edit | move | remove | unstick | extend`): each one
// computed on a copy of the current tree and checked — schema, unique ids, derived passes, passed
// nodes immutable, runner-owned fields untouched — before anything is written. A bad edit is one
// sentence naming the field and the way out (PlanEditError). Ids are derived from titles
// deterministically: the same title in the same tree always gives the same id.
import { NODE_ID_PATTERN, type EditVerb } from "../commit/commit-message.js";
import { formatChange } from "./edit-changes.js";
import { ownedFieldProblems } from "../tree/owned-fields.js";
import { checkDerivedPasses, checkPassedImmutable, checkTreeShape, MAX_TREE_DEPTH, nestingExceeds } from "../tree/invariants.js";
import { formatProblem } from "../base/problems.js";
import { deriveInternalPasses } from "../tree/state-update.js";
import { countNodes, findNode, forEachNode, indexById, nodesById, sortedCopy, type TaskNode, type TaskTree } from "../tree/tree.js";

/** A person's edit that cannot be made: the sentence says which field and what to do instead. */
export class PlanEditError extends Error {}

export interface PlanEdit {
  verb: EditVerb;
  /** The node the edit is about (the new one for add and extend). */
  nodeId: string;
  /** The tree after the edit, sorted and in canonical key order. */
  tree: TaskTree;
  /** What changed, one line each (the commit's Runner-Change trailers). */
  changes: string[];
}

const ID_SLUG_LENGTH = 48;

/**
 * `Add the login page!` → `add-the-login-page`; a long title is cut after its last whole word within
 * ID_SLUG_LENGTH characters; `-2`, `-3`, … when the id is taken. `next` remembers, per slug, where
 * the search for a free suffix goes on: many ids made into one growing `taken` cost linear time
 * (15,000 items titled "task" would otherwise try `task-2`, `task-3`, … from the start each time).
 */
export function idFromTitle(title: string, taken: ReadonlySet<string>, next?: Map<string, number>): string {
  const full = title
    .normalize("NFKD")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
  const cut =
    full.length <= ID_SLUG_LENGTH || full[ID_SLUG_LENGTH] === "-"
      ? full.slice(0, ID_SLUG_LENGTH)
      : full.slice(0, ID_SLUG_LENGTH).replace(/-[^-]*$/, "");
  const slug = cut.replace(/-+$/, "") || "node";
  if (!taken.has(slug)) return slug;
  for (let n = next?.get(slug) ?? 2; ; n++) {
    if (taken.has(`${slug}-${n}`)) continue;
    next?.set(slug, n + 1);
    return `${slug}-${n}`;
  }
}

function allIds(tree: TaskTree): Set<string> {
  return new Set(nodesById(tree).keys());
}

const quote = (id: string) => JSON.stringify(id);

function locate(tree: TaskTree, id: string): { node: TaskNode; parent: TaskNode | undefined } {
  const found = indexById(tree).get(id);
  if (!found) throw new PlanEditError(`There is no node ${quote(id)} in the tree; \`runner status\` lists the node ids.`);
  return { node: found.node, parent: found.parent };
}

function requireOpen(node: TaskNode, what: string): void {
  if (node.passes)
    throw new PlanEditError(
      `Node ${quote(node.id)} has passed, and passed nodes are immutable, so it cannot be ${what}; add follow-up work as a new node (\`runner add\`, or \`runner extend\` once the root passed).`,
    );
}

function hasPassedNode(node: TaskNode): boolean {
  let found = false;
  forEachNode({ version: 1, root: node }, (each) => {
    if (each.passes) found = true;
    return !found;
  });
  return found;
}

function checkTitle(title: string | undefined, flag: string): void {
  if (title !== undefined && title.trim() === "") throw new PlanEditError(`${flag} must not be empty; give the node a short title.`);
}

function checkMaxAttempts(node: TaskNode, max: number): void {
  if (!Number.isSafeInteger(max) || max < 1) throw new PlanEditError(`--max-attempts must be a whole number of at least 1, not ${String(max)}.`);
  if (max < node.attempts)
    throw new PlanEditError(
      `--max-attempts ${max} is below the ${node.attempts} attempts already spent on ${quote(node.id)}; give at least ${node.attempts} (attempts already spent stay on record), or \`runner unstick ${node.id}\` to give it more.`,
    );
}

/** The order after every sibling's (0 for the first child). */
function nextOrder(parent: TaskNode): number {
  return parent.children.reduce((max, child) => Math.max(max, child.order + 1), 0);
}

/**
 * The runner's rules for any tree a person's edit produces, against the tree before: valid on its
 * own, parents' passes derived, passed nodes unchanged and in place, passes and attempts moved by
 * nobody (a new node starts open with no attempt).
 */
export function personEditProblems(before: TaskTree, after: unknown): string[] {
  const shape = checkTreeShape(after);
  if (!shape.tree) return shape.problems.map(formatProblem);
  const tree = shape.tree;
  const problems = checkDerivedPasses(tree).map(formatProblem);
  // A follow-up root wraps the passed root as its first child: immutability holds for that subtree.
  const wrapped = tree.root.id !== before.root.id ? tree.root.children.find((child) => child.id === before.root.id) : undefined;
  const beforeForImmutability = wrapped ? { version: before.version, root: { ...tree.root, children: [before.root] } } : before;
  problems.push(...checkPassedImmutable(beforeForImmutability, tree).map(formatProblem));
  problems.push(...ownedFieldProblems(before, tree, { by: "person" }));
  return problems;
}

function finish(verb: EditVerb, nodeId: string, before: TaskTree, draft: TaskTree, changes: string[]): PlanEdit {
  // Parents' passes re-derived (a parent whose last open child was removed passes).
  deriveInternalPasses(draft);
  const tree = sortedCopy(draft);
  const problems = personEditProblems(before, tree);
  if (problems.length > 0) throw new PlanEditError(`The edit would break the tree's rules (${problems[0]}); nothing was written.`);
  return { verb, nodeId, tree, changes };
}

export interface NewNode {
  id?: string;
  title: string;
  goal?: string;
  acceptance?: string[];
  order?: number;
  maxAttempts?: number;
  children?: NewNode[];
}

/** Checks and builds a new subtree; ids derived from titles where none is given. */
function buildNode(spec: NewNode, taken: Set<string>, order: number, defaultMax: number, where: string): TaskNode {
  checkTitle(spec.title, `${where} title`);
  const id = spec.id ?? idFromTitle(spec.title, taken);
  if (!NODE_ID_PATTERN.test(id))
    throw new PlanEditError(
      `${where} id ${quote(id)} is not a valid node id; use 1 to 128 letters, digits, '.', '_' or '-', starting with a letter or digit.`,
    );
  if (taken.has(id))
    throw new PlanEditError(`${where} id ${quote(id)} is already used in the tree; ids are unique, pick another (or leave it out to derive one).`);
  taken.add(id);
  const max = spec.maxAttempts ?? defaultMax;
  if (!Number.isSafeInteger(max) || max < 1)
    throw new PlanEditError(`${where} max_attempts must be a whole number of at least 1, not ${String(max)}.`);
  const node: TaskNode = {
    id,
    order: spec.order ?? order,
    title: spec.title,
    goal: spec.goal ?? "",
    acceptance: [...(spec.acceptance ?? [])],
    passes: false,
    attempts: 0,
    max_attempts: max,
    children: [],
  };
  (spec.children ?? []).forEach((child, i) => node.children.push(buildNode(child, taken, i, defaultMax, `${where} child ${i + 1}`)));
  return node;
}

export function addNodes(before: TaskTree, parentId: string, specs: NewNode[], defaultMax: number): PlanEdit {
  if (specs.length === 0) throw new PlanEditError("Nothing to add; give --title (or --from-file with at least one node).");
  const draft = sortedCopy(before);
  const { node: parent } = locate(draft, parentId);
  requireOpen(parent, "given new children");
  const taken = allIds(draft);
  const added: TaskNode[] = [];
  let order = nextOrder(parent);
  for (const spec of specs) {
    const node = buildNode(spec, taken, order, defaultMax, specs.length > 1 ? `node ${added.length + 1}` : "the new node's");
    order = Math.max(order, node.order) + 1;
    parent.children.push(node);
    added.push(node);
  }
  return finish(
    "add",
    added[0]!.id,
    before,
    draft,
    added.map((node) => formatChange({ kind: "added", node: node.id, parent: parentId })),
  );
}

/** `runner import FILE --under NODE`: a plan's nodes (src/core/plan/plan-import.ts), its top node under an open node, after its siblings. */
export function importNodes(before: TaskTree, parentId: string, top: TaskNode, file: string): PlanEdit {
  const draft = sortedCopy(before);
  const { node: parent } = locate(draft, parentId);
  requireOpen(parent, "given new children");
  parent.children.push({ ...top, order: nextOrder(parent) });
  const count = countNodes({ version: 1, root: top });
  return finish("import", top.id, before, draft, [formatChange({ kind: "imported", node: top.id, parent: parentId, file, count })]);
}

export interface NodeFields {
  title?: string;
  goal?: string;
  acceptance?: string[];
  order?: number;
  maxAttempts?: number;
}

export function editNode(before: TaskTree, nodeId: string, fields: NodeFields): PlanEdit {
  const draft = sortedCopy(before);
  const { node } = locate(draft, nodeId);
  requireOpen(node, "edited");
  checkTitle(fields.title, "--title");
  const changes: string[] = [];
  const set = <K extends "title" | "goal">(key: K, value: TaskNode[K] | undefined) => {
    if (value === undefined || value === node[key]) return;
    changes.push(formatChange({ kind: "field", node: nodeId, field: key }));
    node[key] = value;
  };
  set("title", fields.title);
  set("goal", fields.goal);
  if (fields.order !== undefined && fields.order !== node.order) {
    changes.push(formatChange({ kind: "field", node: nodeId, field: "order", from: node.order, to: fields.order }));
    node.order = fields.order;
  }
  if (fields.acceptance !== undefined && JSON.stringify(fields.acceptance) !== JSON.stringify(node.acceptance)) {
    changes.push(formatChange({ kind: "field", node: nodeId, field: "acceptance" }));
    node.acceptance = [...fields.acceptance];
  }
  if (fields.maxAttempts !== undefined && fields.maxAttempts !== node.max_attempts) {
    checkMaxAttempts(node, fields.maxAttempts);
    changes.push(formatChange({ kind: "field", node: nodeId, field: "max_attempts", from: node.max_attempts, to: fields.maxAttempts }));
    node.max_attempts = fields.maxAttempts;
  }
  if (changes.length === 0)
    throw new PlanEditError(`Nothing to change on ${quote(nodeId)}; give --title, --goal, --acceptance, --order or --max-attempts with a new value.`);
  return finish("edit", nodeId, before, draft, changes);
}

export function moveNode(before: TaskTree, nodeId: string, parentId: string, order: number | undefined): PlanEdit {
  const draft = sortedCopy(before);
  const { node, parent: oldParent } = locate(draft, nodeId);
  if (!oldParent) throw new PlanEditError(`${quote(nodeId)} is the root and cannot be moved; move its children instead.`);
  requireOpen(node, "moved");
  const { node: target } = locate(draft, parentId);
  if (hasPassedNode(node))
    throw new PlanEditError(`${quote(nodeId)} holds a passed node, and passed nodes stay where they are; move its open children one by one instead.`);
  if (findNode({ version: 1, root: node }, parentId) !== undefined)
    throw new PlanEditError(
      `Cannot move ${quote(nodeId)} under ${quote(parentId)}, which is ${parentId === nodeId ? "the node itself" : `inside ${quote(nodeId)}'s own subtree`} (a cycle); pick a --parent outside it.`,
    );
  requireOpen(target, "given new children");
  if (target === oldParent) {
    // A reorder among the same siblings: only its order changes.
    if (order === undefined || order === node.order)
      throw new PlanEditError(
        `Nothing to change: ${quote(nodeId)} is already under ${quote(parentId)}${order === undefined ? "" : ` at order ${order}`}; give --order with a new place among its siblings, or --parent another node.`,
      );
    const from = node.order;
    node.order = order;
    return finish("move", nodeId, before, draft, [formatChange({ kind: "field", node: nodeId, field: "order", from, to: order })]);
  }
  oldParent.children = oldParent.children.filter((child) => child !== node);
  node.order = order ?? nextOrder(target);
  target.children.push(node);
  return finish("move", nodeId, before, draft, [formatChange({ kind: "moved", node: nodeId, from: oldParent.id, to: parentId })]);
}

export function removeNode(before: TaskTree, nodeId: string): PlanEdit {
  const draft = sortedCopy(before);
  const { node, parent } = locate(draft, nodeId);
  if (!parent)
    throw new PlanEditError(`${quote(nodeId)} is the root and cannot be removed; remove its children, or start a new plan with \`runner init\`.`);
  requireOpen(node, "removed");
  if (hasPassedNode(node))
    throw new PlanEditError(`${quote(nodeId)} holds a passed node, and passed nodes are immutable; remove its open children one by one instead.`);
  parent.children = parent.children.filter((child) => child !== node);
  if (parent.children.length === 0 && parent.passes)
    throw new PlanEditError(`Removing ${quote(nodeId)} would leave ${quote(parent.id)} without children; edit it instead.`);
  return finish("remove", nodeId, before, draft, [formatChange({ kind: "removed", node: nodeId, parent: parent.id })]);
}

/** A stuck (or any open) leaf gets `more` attempts: max_attempts rises, the attempts spent stay. */
export function unstickLeaf(before: TaskTree, nodeId: string, more: number | undefined): PlanEdit {
  const draft = sortedCopy(before);
  const { node } = locate(draft, nodeId);
  requireOpen(node, "given more attempts");
  if (node.children.length > 0)
    throw new PlanEditError(
      `${quote(nodeId)} is not a leaf (it has ${node.children.length} children); unstick the stuck leaf under it (\`runner next\` names it).`,
    );
  const extra = more ?? node.max_attempts;
  if (!Number.isSafeInteger(extra) || extra < 1) throw new PlanEditError(`--attempts must be a whole number of at least 1, not ${String(extra)}.`);
  const from = node.max_attempts;
  node.max_attempts = from + extra;
  return finish("unstick", nodeId, before, draft, [
    `${formatChange({ kind: "field", node: nodeId, field: "max_attempts", from, to: node.max_attempts })} (attempts spent: ${node.attempts})`,
  ]);
}

/**
 * Follow-up work after the root passed: a new root whose first child is the passed tree, unchanged
 * (immutable), and whose second child is the new work as an open leaf.
 */
export function extendTree(before: TaskTree, spec: NewNode, defaultMax: number, rootId?: string): PlanEdit {
  if (!before.root.passes)
    throw new PlanEditError(
      `The root ${quote(before.root.id)} has not passed yet; add follow-up work to the open tree with \`runner add ${before.root.id} --title …\` instead.`,
    );
  checkTitle(spec.title, "--title");
  const taken = allIds(before);
  const id = rootId ?? idFromTitle(before.root.id.replace(/-[0-9]+$/, ""), taken);
  if (!NODE_ID_PATTERN.test(id)) throw new PlanEditError(`--root-id ${quote(id)} is not a valid node id; use letters, digits, '.', '_' or '-'.`);
  if (taken.has(id)) throw new PlanEditError(`--root-id ${quote(id)} is already used in the tree; pick another.`);
  taken.add(id);
  const old = sortedCopy(before).root;
  const work = buildNode({ ...spec, order: 1 }, taken, 1, defaultMax, "the new work's");
  const draft: TaskTree = {
    version: before.version,
    root: {
      id,
      order: 0,
      title: spec.title,
      goal: spec.goal ?? "",
      acceptance: [],
      passes: false,
      attempts: 0,
      max_attempts: defaultMax,
      children: [{ ...old, order: 0 }, work],
    },
  };
  if (old.order !== 0)
    throw new PlanEditError(`The root's order is ${old.order}, not 0; the passed root must keep its fields, so edit nothing and report this.`);
  return finish("extend", id, before, draft, [
    formatChange({ kind: "new-root", node: id, over: before.root.id }),
    formatChange({ kind: "added", node: work.id, parent: id }),
  ]);
}

const NEW_NODE_KEYS = new Set(["id", "order", "title", "goal", "acceptance", "max_attempts", "children"]);
const OWNED_KEYS = new Set(["passes", "attempts"]);

/**
 * The nodes of an `--from-file` document: one node or an array of them, each with a title and
 * optionally id, order, goal, acceptance, max_attempts and children. `passes` and `attempts` are the
 * runner's and refused; so is any other key.
 */
export function newNodesFromJson(data: unknown, where = "$"): NewNode[] {
  // Refused before anything recurses into it: a node holds its children one array deeper.
  if (nestingExceeds(data, MAX_TREE_DEPTH * 2 + 2))
    throw new PlanEditError(`${where} nests nodes deeper than ${MAX_TREE_DEPTH} levels, more than a tree may hold; flatten it.`);
  const items = Array.isArray(data) ? data : [data];
  return items.map((item, i) => newNodeFromJson(item, Array.isArray(data) ? `${where}[${i}]` : where));
}

function newNodeFromJson(item: unknown, where: string): NewNode {
  if (item === null || typeof item !== "object" || Array.isArray(item))
    throw new PlanEditError(`${where} must be a node object with at least a "title".`);
  const value = item as Record<string, unknown>;
  for (const key of Object.keys(value)) {
    if (OWNED_KEYS.has(key))
      throw new PlanEditError(`${where}.${key} is the runner's own field (a new node starts open with no attempt); remove it from the file.`);
    if (!NEW_NODE_KEYS.has(key))
      throw new PlanEditError(`${where}.${key} is not a node field; use id, order, title, goal, acceptance, max_attempts and children.`);
  }
  const text = (key: string): string | undefined => {
    if (value[key] === undefined) return undefined;
    if (typeof value[key] !== "string") throw new PlanEditError(`${where}.${key} must be a string.`);
    return value[key];
  };
  const integer = (key: string): number | undefined => {
    if (value[key] === undefined) return undefined;
    if (!Number.isSafeInteger(value[key])) throw new PlanEditError(`${where}.${key} must be a whole number.`);
    return value[key] as number;
  };
  const title = text("title");
  if (title === undefined) throw new PlanEditError(`${where} has no "title"; every node needs one.`);
  const acceptance = value.acceptance;
  if (acceptance !== undefined && (!Array.isArray(acceptance) || acceptance.some((line) => typeof line !== "string")))
    throw new PlanEditError(`${where}.acceptance must be an array of strings.`);
  const children = value.children;
  if (children !== undefined && !Array.isArray(children)) throw new PlanEditError(`${where}.children must be an array of nodes.`);
  const spec: NewNode = { title };
  const id = text("id");
  if (id !== undefined) spec.id = id;
  const goal = text("goal");
  if (goal !== undefined) spec.goal = goal;
  if (acceptance !== undefined) spec.acceptance = acceptance as string[];
  const order = integer("order");
  if (order !== undefined) spec.order = order;
  const max = integer("max_attempts");
  if (max !== undefined) spec.maxAttempts = max;
  if (children !== undefined) spec.children = children.map((child, i) => newNodeFromJson(child, `${where}.children[${i}]`));
  return spec;
}
