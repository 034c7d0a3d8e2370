// Tree invariants beyond the schema (seed 001 §4, CONTRACT §3): globally unique ids,
// attempts ≤ max_attempts, derived passes at rest, and passed-node immutability against the
// previous tree. Every check walks defensively, so a tree that also fails its schema still gets
// every problem reported.
import { childPath, type Problem } from "../base/problems.js";
import { validateTreeSchema } from "../base/schema.js";
import { allChildrenPass, forEachNode, jsonPathsOf, NODE_KEYS, orderedChildren, sortedNodeCopy, type TaskNode, type TaskTree } from "./tree.js";
import { isJsonObject } from "../base/json-object.js";

/** Deeper trees are refused before anything walks them (no plan needs more levels). */
export const MAX_TREE_DEPTH = 256;

/**
 * What a title may not hold: a control character (tab and line ends included: a title is one line),
 * U+FFFD (what undecodable bytes become) or half a surrogate pair. Binary data read as text is full
 * of them; no title a person or an agent writes needs one.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
export const TITLE_PROBLEM = /[\u0000-\u001F\u007F-\u009F\uFFFD]|\p{Cs}/u;

type Loose = Record<string, unknown>;

const isObject = isJsonObject;

/** How deep a JSON document may nest (arrays and objects) around a tree of MAX_TREE_DEPTH levels. */
const MAX_NESTING = MAX_TREE_DEPTH * 2 + 4;

/** How deep the JSON value nests (arrays and objects), stopping once past `limit`. */
export function nestingExceeds(data: unknown, limit: number): boolean {
  return data !== null && typeof data === "object" && nestedPast(data, 0, limit);
}

/**
 * Whether `value` (an array or object at `depth`) holds an array or object deeper than `limit`.
 * Without recursion; a value of scalars allocates nothing.
 */
function nestedPast(value: object, depth: number, limit: number): boolean {
  if (depth > limit) return true;
  let pending: { value: object; depth: number }[] | undefined;
  let current = value;
  let level = depth;
  for (;;) {
    if (Array.isArray(current)) {
      for (const child of current as unknown[]) {
        if (child === null || typeof child !== "object") continue;
        if (level + 1 > limit) return true;
        (pending ??= []).push({ value: child, depth: level + 1 });
      }
    } else {
      for (const key in current) {
        const child = (current as Loose)[key];
        if (child === null || typeof child !== "object") continue;
        if (level + 1 > limit) return true;
        (pending ??= []).push({ value: child, depth: level + 1 });
      }
    }
    const next = pending?.pop();
    if (next === undefined) return false;
    current = next.value;
    level = next.depth;
  }
}

/**
 * One pass over every object that sits where a node should (root and children, recursively),
 * without recursion: the depth limit, the nesting of every other value, duplicate ids and
 * attempts > max_attempts. Nodes are known by their place in the walk (pre-order, stored child
 * order); paths are built, in a second walk, only for what it reports.
 */
function scanNodes(data: unknown): { problems: Problem[]; tooDeep?: Problem; nestedTooDeep: boolean } {
  let nested = false;
  if (data === null || typeof data !== "object") return { problems: [], nestedTooDeep: false };
  if (!isObject(data)) return { problems: [], nestedTooDeep: nestedPast(data, 0, MAX_NESTING) };
  const stack: Loose[] = [];
  const depths: number[] = [];
  for (const key in data) {
    const value = data[key];
    if (key === "root" && isObject(value)) {
      stack.push(value);
      depths.push(0);
    } else if (!nested && value !== null && typeof value === "object") {
      nested = nestedPast(value, 1, MAX_NESTING);
    }
  }
  const firstById = new Map<string, number>();
  const duplicates: { later: number; earlier: number; id: string }[] = [];
  const overAttempts: { visit: number; attempts: number; max: number }[] = [];
  for (let visit = 0; stack.length > 0; visit++) {
    const node = stack.pop()!;
    const depth = depths.pop()!;
    if (depth >= MAX_TREE_DEPTH) {
      // (the path of a node that deep is thousands of characters: the node's id says where)
      const where = typeof node.id === "string" ? ` (at node ${JSON.stringify(node.id.slice(0, 128))})` : "";
      return {
        problems: [],
        nestedTooDeep: nested,
        tooDeep: { path: "$.root", message: `the tree is nested deeper than ${MAX_TREE_DEPTH} levels${where}; flatten the plan` },
      };
    }
    const id = node.id;
    if (typeof id === "string") {
      const earlier = firstById.get(id);
      if (earlier === undefined) firstById.set(id, visit);
      else duplicates.push({ later: visit, earlier, id });
    }
    if (typeof node.attempts === "number" && typeof node.max_attempts === "number" && node.attempts > node.max_attempts)
      overAttempts.push({ visit, attempts: node.attempts, max: node.max_attempts });
    // The node object sits at document depth 1 + 2·depth, its values one deeper, children's items two.
    for (const key in node) {
      const value = node[key];
      if (value === null || typeof value !== "object") continue;
      if (key !== "children" || !Array.isArray(value)) {
        if (!nested) nested = nestedPast(value, 2 + 2 * depth, MAX_NESTING);
        continue;
      }
      if (!nested && 2 + 2 * depth > MAX_NESTING) nested = true;
      const children = value as unknown[];
      for (let i = children.length - 1; i >= 0; i--) {
        const child = children[i];
        if (isObject(child)) {
          stack.push(child);
          depths.push(depth + 1);
        } else if (!nested && child !== null && typeof child === "object") {
          nested = nestedPast(child, 3 + 2 * depth, MAX_NESTING);
        }
      }
    }
  }
  if (duplicates.length === 0 && overAttempts.length === 0) return { problems: [], nestedTooDeep: nested };
  // Duplicates first, each at its later occurrence, then attempts; both in pre-order.
  const paths = loosePaths(data, [...duplicates.flatMap(({ later, earlier }) => [later, earlier]), ...overAttempts.map(({ visit }) => visit)]);
  const problems: Problem[] = [];
  for (const { later, earlier, id } of duplicates) {
    problems.push({
      path: childPath(paths.get(later)!, "id"),
      message: `duplicate id ${JSON.stringify(id)} (also used at ${childPath(paths.get(earlier)!, "id")}); ids must be unique in the whole tree`,
    });
  }
  for (const { visit, attempts, max } of overAttempts) {
    problems.push({ path: childPath(paths.get(visit)!, "attempts"), message: `attempts ${attempts} is more than max_attempts ${max}` });
  }
  return { problems, nestedTooDeep: nested };
}

/**
 * The JSON paths of the loose nodes at the given places of scanNodes' walk (the same walk again,
 * this time with paths, stopping after the last place wanted).
 */
function loosePaths(data: Loose, visits: readonly number[]): Map<number, string> {
  const wanted = new Set(visits);
  let last = 0;
  for (const visit of visits) if (visit > last) last = visit;
  const paths = new Map<number, string>();
  const stack: { node: Loose; path: string }[] = isObject(data.root) ? [{ node: data.root, path: "$.root" }] : [];
  for (let visit = 0; stack.length > 0 && visit <= last; visit++) {
    const { node, path } = stack.pop()!;
    if (wanted.has(visit)) paths.set(visit, path);
    const children = node.children;
    if (!Array.isArray(children)) continue;
    for (let i = children.length - 1; i >= 0; i--) {
      const child: unknown = children[i];
      if (isObject(child)) stack.push({ node: child, path: `${path}.children[${i}]` });
    }
  }
  return paths;
}

/** Structural problems of a tree on its own: schema, depth, unique ids, attempts ≤ max_attempts. */
export function checkTreeShape(data: unknown): { tree?: TaskTree; problems: Problem[] } {
  const scan = scanNodes(data);
  // A tree nested past the limit is refused before the schema validator recurses into it.
  if (scan.tooDeep) return { problems: [scan.tooDeep] };
  if (scan.nestedTooDeep)
    return { problems: [{ path: "$", message: `the document is nested deeper than ${MAX_TREE_DEPTH} levels; flatten the plan` }] };
  const schema = validateTreeSchema(data);
  const problems = schema.ok ? [...scan.problems, ...titleProblems(schema.value)] : [...schema.problems, ...scan.problems];
  return problems.length === 0 && schema.ok ? { tree: schema.value, problems } : { problems };
}

/** Titles that are not one line of text (TITLE_PROBLEM). */
function titleProblems(tree: TaskTree): Problem[] {
  return jsonPathsOf(tree, (node) => TITLE_PROBLEM.test(node.title)).map(({ jsonPath }) => ({
    path: childPath(jsonPath, "title"),
    message: "holds a control character or U+FFFD (binary data?); a title is one line of text",
  }));
}

/**
 * At rest (as the runner writes it), every internal node's `passes` equals "all children pass".
 * A tree that breaks this was edited by hand; the runner would otherwise select nothing, or pass a
 * parent with open work.
 */
export function checkDerivedPasses(tree: TaskTree): Problem[] {
  const wrong = new Set<TaskNode>();
  forEachNode(tree, (node) => {
    if (node.children.length > 0 && node.passes !== allChildrenPass(node)) wrong.add(node);
  });
  if (wrong.size === 0) return [];
  return jsonPathsOf(tree, (node) => wrong.has(node)).map(({ node, jsonPath }) => ({
    path: childPath(jsonPath, "passes"),
    message: allChildrenPass(node)
      ? `is false although every child passes (a child was removed by hand?); set it to true and commit: a parent passes when all its children do`
      : `is true although a child has not passed; only the runner sets passes`,
  }));
}

/**
 * Passed-node immutability (seed 001 §4.4): a node that passed in `previous` must exist in `next`
 * with the same id, be identical in RFC 8785 form (subtree included) and keep its parent. Only the
 * topmost passed nodes are compared: a passed subtree that is identical is identical all the way down.
 */
export function checkPassedImmutable(previous: TaskTree, next: TaskTree): Problem[] {
  // The topmost passed nodes of `previous`, children taken in sorted order (order on disk is not a
  // change) and visited as a stack visits them, which is the order problems are reported in.
  const passed: { node: TaskNode; parentId: string | undefined }[] = [];
  const pending: TaskNode[] = [previous.root];
  const pendingParents: (string | undefined)[] = [undefined];
  while (pending.length > 0) {
    const node = pending.pop()!;
    const parentId = pendingParents.pop();
    if (node.passes) {
      passed.push({ node, parentId });
      continue;
    }
    for (const child of orderedChildren(node)) {
      pending.push(child);
      pendingParents.push(node.id);
    }
  }
  if (passed.length === 0) return [];

  // Where each of them is in `next`: one walk in sorted pre-order (the last one wins if an id repeats).
  const wanted = new Set(passed.map(({ node }) => node.id));
  const found = new Map<string, { node: TaskNode; parentId: string | undefined }>();
  const nodes: TaskNode[] = [next.root];
  const parents: (string | undefined)[] = [undefined];
  while (nodes.length > 0) {
    const node = nodes.pop()!;
    const parentId = parents.pop();
    if (wanted.has(node.id)) found.set(node.id, { node, parentId });
    const children = orderedChildren(node);
    for (let i = children.length - 1; i >= 0; i--) {
      nodes.push(children[i]!);
      parents.push(node.id);
    }
  }

  type Finding = {
    kind: "removed" | "moved" | "changed";
    id: string;
    parentId: string | undefined;
    before: TaskNode;
    now?: { node: TaskNode; parentId: string | undefined };
  };
  const findings: Finding[] = [];
  for (const { node, parentId } of passed) {
    const now = found.get(node.id);
    if (now === undefined) findings.push({ kind: "removed", id: node.id, parentId, before: node });
    else if (now.parentId !== parentId) findings.push({ kind: "moved", id: node.id, parentId, before: node, now });
    else if (!sameSubtree(node, now.node)) findings.push({ kind: "changed", id: node.id, parentId, before: node, now });
  }
  if (findings.length === 0) return [];

  // Problems point where the user sees the node: its position in the file (the last one if an id repeats).
  const located = new Set(findings.filter((finding) => finding.kind !== "removed").map((finding) => finding.id));
  const storedPaths = new Map<string, string>();
  if (located.size > 0) for (const { node, jsonPath } of jsonPathsOf(next, (node) => located.has(node.id))) storedPaths.set(node.id, jsonPath);
  return findings.map(({ kind, id, parentId, before, now }): Problem => {
    const name = JSON.stringify(id);
    if (kind === "removed") return { path: "$", message: `passed node ${name} was removed; passed nodes are immutable, put it back as it was` };
    const path = storedPaths.get(id)!;
    if (kind === "moved") {
      return {
        path,
        message: `passed node ${name} was moved from parent ${JSON.stringify(parentId ?? null)} to ${JSON.stringify(now!.parentId ?? null)}; passed nodes are immutable`,
      };
    }
    const fields = changedFields(sortedNodeCopy(before), sortedNodeCopy(now!.node));
    return { path, message: `passed node ${name} was changed (${fields.join(", ")}); passed nodes are immutable, add follow-up work as a new node` };
  });
}

/**
 * Equal JSON values, as equal RFC 8785 forms are: scalars by value; arrays item by item; objects
 * key by key, whatever the key order, a key holding undefined counting as absent. Arrays and
 * objects are never met in a schema-valid tree's scalar fields; they are compared without recursion.
 */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return false;
  const left: unknown[] = [a];
  const right: unknown[] = [b];
  while (left.length > 0) {
    const x = left.pop();
    const y = right.pop();
    if (x === y) continue;
    if (x === null || y === null || typeof x !== "object" || typeof y !== "object" || Array.isArray(x) !== Array.isArray(y)) return false;
    if (Array.isArray(x)) {
      const ys = y as unknown[];
      if (x.length !== ys.length) return false;
      for (let i = 0; i < x.length; i++) {
        left.push(x[i]);
        right.push(ys[i]);
      }
      continue;
    }
    const xo = x as Loose;
    const yo = y as Loose;
    const keys = Object.keys(xo).filter((key) => xo[key] !== undefined);
    if (keys.length !== Object.keys(yo).filter((key) => yo[key] !== undefined).length) return false;
    for (const key of keys) {
      if (!Object.prototype.hasOwnProperty.call(yo, key)) return false;
      left.push(xo[key]);
      right.push(yo[key]);
    }
  }
  return true;
}

/**
 * Whether two subtrees have the same RFC 8785 form once their children are sorted: every field
 * equal, children compared pairwise in sibling order. Without recursion and without copies.
 */
function sameSubtree(a: TaskNode, b: TaskNode): boolean {
  const left: TaskNode[] = [a];
  const right: TaskNode[] = [b];
  while (left.length > 0) {
    const x = left.pop()!;
    const y = right.pop()!;
    if (
      !sameValue(x.id, y.id) ||
      !sameValue(x.order, y.order) ||
      !sameValue(x.title, y.title) ||
      !sameValue(x.goal, y.goal) ||
      !sameValue(x.passes, y.passes) ||
      !sameValue(x.attempts, y.attempts) ||
      !sameValue(x.max_attempts, y.max_attempts) ||
      !sameList(x.acceptance, y.acceptance)
    ) {
      return false;
    }
    const xs = orderedChildren(x);
    const ys = orderedChildren(y);
    if (xs.length !== ys.length) return false;
    for (let i = 0; i < xs.length; i++) {
      left.push(xs[i]!);
      right.push(ys[i]!);
    }
  }
  return true;
}

function sameList(a: readonly unknown[], b: readonly unknown[]): boolean {
  if (a === b) return true;
  if (!Array.isArray(a) || !Array.isArray(b)) return sameValue([...a], [...b]);
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!sameValue(a[i], b[i])) return false;
  return true;
}

function changedFields(before: TaskNode, after: TaskNode): string[] {
  return NODE_KEYS.filter((key) => JSON.stringify(before[key]) !== JSON.stringify(after[key]));
}
