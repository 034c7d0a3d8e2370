// Tree invariants beyond the schema (seed 001 §4, CONTRACT §3): globally unique ids,
// attempts ≤ max_attempts, derived passes at rest, and passed-node immutability against the
// previous tree. Every check walks defensively, so a tree that also fails its schema still gets
// every problem reported.
import { canonicalNode } from "./canonical.js";
import { childPath, type Problem } from "./problems.js";
import { validateTreeSchema } from "./schema.js";
import { sortedCopy, walkTree, type TaskNode, type TaskTree } from "./tree.js";

/** Deeper trees are refused before anything walks them (no plan needs more levels). */
export const MAX_TREE_DEPTH = 256;

type Loose = Record<string, unknown>;

function isObject(value: unknown): value is Loose {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

interface LooseNode {
  node: Loose;
  path: string;
  depth: number;
}

/** Every object that sits where a node should (root and children, recursively), without recursion. */
function looseNodes(data: unknown): { nodes: LooseNode[]; tooDeep?: Problem } {
  const nodes: LooseNode[] = [];
  if (!isObject(data) || !isObject(data.root)) return { nodes };
  const stack: LooseNode[] = [{ node: data.root, path: "$.root", depth: 0 }];
  while (stack.length > 0) {
    const current = stack.pop()!;
    if (current.depth >= MAX_TREE_DEPTH) {
      return { nodes, tooDeep: { path: current.path, message: `the tree is nested deeper than ${MAX_TREE_DEPTH} levels; flatten the plan` } };
    }
    nodes.push(current);
    const children = current.node.children;
    if (!Array.isArray(children)) continue;
    for (let i = children.length - 1; i >= 0; i--) {
      const child: unknown = children[i];
      if (isObject(child)) stack.push({ node: child, path: `${current.path}.children[${i}]`, depth: current.depth + 1 });
    }
  }
  return { nodes };
}

/** How deep the JSON value nests (arrays and objects), stopping once past `limit`. */
export function nestingExceeds(data: unknown, limit: number): boolean {
  const stack: { value: unknown; depth: number }[] = [{ value: data, depth: 0 }];
  while (stack.length > 0) {
    const { value, depth } = stack.pop()!;
    if (value === null || typeof value !== "object") continue;
    if (depth > limit) return true;
    for (const child of Array.isArray(value) ? value : Object.values(value)) {
      if (child !== null && typeof child === "object") stack.push({ value: child, depth: depth + 1 });
    }
  }
  return false;
}

/** Ids used more than once, each duplicate reported at its later occurrence. */
function duplicateIds(nodes: LooseNode[]): Problem[] {
  const first = new Map<string, string>();
  const problems: Problem[] = [];
  for (const { node, path } of nodes) {
    if (typeof node.id !== "string") continue;
    const earlier = first.get(node.id);
    if (earlier === undefined) first.set(node.id, childPath(path, "id"));
    else problems.push({ path: childPath(path, "id"), message: `duplicate id ${JSON.stringify(node.id)} (also used at ${earlier}); ids must be unique in the whole tree` });
  }
  return problems;
}

function attemptsWithinMax(nodes: LooseNode[]): Problem[] {
  const problems: Problem[] = [];
  for (const { node, path } of nodes) {
    if (typeof node.attempts === "number" && typeof node.max_attempts === "number" && node.attempts > node.max_attempts) {
      problems.push({ path: childPath(path, "attempts"), message: `attempts ${node.attempts} is more than max_attempts ${node.max_attempts}` });
    }
  }
  return problems;
}

/** Structural problems of a tree on its own: schema, depth, unique ids, attempts ≤ max_attempts. */
export function checkTreeShape(data: unknown): { tree?: TaskTree; problems: Problem[] } {
  const { nodes, tooDeep } = looseNodes(data);
  // A tree nested past the limit is refused before the schema validator recurses into it.
  if (tooDeep || nestingExceeds(data, MAX_TREE_DEPTH * 2 + 4)) {
    return { problems: [tooDeep ?? { path: "$", message: `the document is nested deeper than ${MAX_TREE_DEPTH} levels; flatten the plan` }] };
  }
  const schema = validateTreeSchema(data);
  const problems = [...(schema.ok ? [] : schema.problems), ...duplicateIds(nodes), ...attemptsWithinMax(nodes)];
  return problems.length === 0 && schema.ok ? { tree: schema.value, problems } : { problems };
}

/**
 * At rest (as the runner writes it), every internal node's `passes` equals "all children pass".
 * A tree that breaks this was edited by hand; the runner would otherwise select nothing, or pass a
 * parent with open work.
 */
export function checkDerivedPasses(tree: TaskTree): Problem[] {
  const problems: Problem[] = [];
  for (const { node, jsonPath } of walkTree(tree)) {
    if (node.children.length === 0) continue;
    const allPass = node.children.every((child) => child.passes);
    if (node.passes !== allPass) {
      problems.push({
        path: childPath(jsonPath, "passes"),
        message: allPass
          ? `is false although every child passes; the runner derives a parent's passes from its children`
          : `is true although a child has not passed; only the runner sets passes`,
      });
    }
  }
  return problems;
}

/**
 * Passed-node immutability (seed 001 §4.4): a node that passed in `previous` must exist in `next`
 * with the same id, be identical in RFC 8785 form (subtree included) and keep its parent. Only the
 * topmost passed nodes are compared: a passed subtree that is identical is identical all the way down.
 */
export function checkPassedImmutable(previous: TaskTree, next: TaskTree): Problem[] {
  // Compare sorted copies (children order on disk is not a change), report positions as stored.
  const storedPaths = new Map<string, string>();
  for (const { node, jsonPath } of walkTree(next)) storedPaths.set(node.id, jsonPath);
  const nextIndex = new Map<string, { node: TaskNode; parentId: string | undefined; jsonPath: string }>();
  for (const { node, parent } of walkTree(sortedCopy(next))) nextIndex.set(node.id, { node, parentId: parent?.id, jsonPath: storedPaths.get(node.id)! });
  const problems: Problem[] = [];
  const stack: { node: TaskNode; parentId: string | undefined }[] = [{ node: sortedCopy(previous).root, parentId: undefined }];
  while (stack.length > 0) {
    const { node, parentId } = stack.pop()!;
    if (!node.passes) {
      for (const child of node.children) stack.push({ node: child, parentId: node.id });
      continue;
    }
    const now = nextIndex.get(node.id);
    const name = JSON.stringify(node.id);
    if (now === undefined) {
      problems.push({ path: "$", message: `passed node ${name} was removed; passed nodes are immutable, put it back as it was` });
    } else if (now.parentId !== parentId) {
      problems.push({ path: now.jsonPath, message: `passed node ${name} was moved from parent ${JSON.stringify(parentId ?? null)} to ${JSON.stringify(now.parentId ?? null)}; passed nodes are immutable` });
    } else if (canonicalNode(now.node) !== canonicalNode(node)) {
      const fields = changedFields(node, now.node);
      problems.push({ path: now.jsonPath, message: `passed node ${name} was changed (${fields.join(", ")}); passed nodes are immutable, add follow-up work as a new node` });
    }
  }
  return problems;
}

function changedFields(before: TaskNode, after: TaskNode): string[] {
  const keys = ["id", "order", "title", "goal", "acceptance", "passes", "attempts", "max_attempts", "children"] as const;
  return keys.filter((key) => JSON.stringify(before[key]) !== JSON.stringify(after[key]));
}
