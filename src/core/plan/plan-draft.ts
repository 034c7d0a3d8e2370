// What every plan format is read into before it becomes a tree (src/core/plan/plan-import.ts): drafts of
// nodes with the plan's own marks (finished or not, dependencies), and the sentences a refusal is
// made of. Pure; every walk is iterative, and a draft deeper than the tree's limit is refused where
// it is made, before anything walks it.
import { MAX_TREE_DEPTH } from "../tree/invariants.js";
import { PlanEditError } from "../edit/plan-edit.js";
import { count, firstFew } from "../base/text-limits.js";

/** A node as a plan gives it, before ids are settled. */
export interface Draft {
  /** The id the plan gives (spec-kit's T001, a ralph story id, task-master's task-3); else derived from the title. */
  id?: string;
  title: string;
  goal: string[];
  acceptance: string[];
  children: Draft[];
  /** Its place among its siblings, when the plan gives one (else the place it was read in). */
  order?: number;
  /** The plan marks this item finished (a checked box, status done, passes: true). */
  finished?: boolean;
  /** The plan leaves this item out on purpose (task-master's "cancelled"). */
  cancelled?: boolean;
  /** How refusals name the item: "line 12", "task 3.2", "story US-004". */
  where: string;
  /** Items this one comes after (resolved by the format's reader). */
  after?: Draft[];
  /** Levels below the root (the root is 0). */
  depth: number;
}

export function draft(title: string, where: string, depth: number): Draft {
  return { title, goal: [], acceptance: [], children: [], where, depth };
}

/** A draft one level below `parent`, refused once the tree's depth limit is reached (before anything recurses into it). */
export function childDraft(name: string, parent: Draft, title: string, where: string): Draft {
  const depth = parent.depth + 1;
  if (depth >= MAX_TREE_DEPTH)
    throw new PlanEditError(`${name}: ${firstFew([where])} nests deeper than the tree's limit of ${MAX_TREE_DEPTH} levels; flatten the plan`);
  return draft(title, where, depth);
}

/**
 * Refuses when any item offends: one sentence with how many, the first few, and the way out —
 * `${name}: 3 tasks have no title (task 2, task 5, task 9); give each a title`.
 */
export function refuseAll(name: string, offending: readonly string[], what: (n: number) => string, wayOut: string): void {
  if (offending.length === 0) return;
  throw new PlanEditError(`${name}: ${what(offending.length)} (${firstFew(offending)}); ${wayOut}`);
}

/** Every draft under `root` (root included) in pre-order, without recursion. */
export function allDrafts(root: Draft): Draft[] {
  const out: Draft[] = [];
  const stack = [root];
  while (stack.length > 0) {
    const next = stack.pop()!;
    out.push(next);
    for (let i = next.children.length - 1; i >= 0; i--) stack.push(next.children[i]!);
  }
  return out;
}

/**
 * Items taken out of the plan (`--skip-done`: the finished ones; always: task-master's cancelled
 * ones): a leaf that `gone` holds for, and an item `gone` holds for all of whose children went too.
 * An item it does not hold for stays, even when all its children went (its own work is left: an
 * open task whose subtasks are all done), and so does an unmarked one (a Markdown section: it
 * becomes context). Returns the topmost items taken out, in plan order.
 */
export function removeItems(root: Draft, goneItem: (item: Draft) => boolean): Draft[] {
  const order = allDrafts(root);
  const parentOf = new Map<Draft, Draft>();
  for (const node of order) for (const child of node.children) parentOf.set(child, node);
  const gone = new Set<Draft>();
  for (let i = order.length - 1; i >= 0; i--) {
    const node = order[i]!;
    const had = node.children.length;
    if (node.children.some((child) => gone.has(child))) node.children = node.children.filter((child) => !gone.has(child));
    if (node !== root && goneItem(node) && (had === 0 || node.children.length === 0)) gone.add(node);
  }
  return order.filter((node) => gone.has(node) && !gone.has(parentOf.get(node)!));
}

/** Priority as task-master and ralph read it, lower first: a number as given, high / medium / low as 0 / 1 / 2. */
export type Rank = (item: Draft) => number;

/**
 * Orders every draft's children so that each comes after the items it depends on; ties by `rank`,
 * then by the place it was read in. A dependency between two items of different parents orders
 * their ancestors that are siblings (task 2 after task 1 when subtask 2.1 depends on 1.2); one
 * between an item and its own ancestor says nothing and is dropped. A cycle is refused, naming
 * every item on it. Sets each child's `order` to its place.
 */
export function orderByDependencies(name: string, root: Draft, rank: Rank): void {
  const drafts = allDrafts(root);
  const present = new Set(drafts);
  const parentOf = new Map<Draft, Draft>();
  for (const each of drafts) for (const child of each.children) parentOf.set(child, each);
  // The dependencies as edges between siblings (one on an item left out of the tree is dropped).
  const before = new Map<Draft, Draft[]>();
  for (const each of drafts) {
    for (const target of each.after ?? []) {
      if (!present.has(target)) continue;
      const edge = siblingsOnPaths(each, target, parentOf);
      if (!edge) continue;
      const list = before.get(edge.later);
      if (list) list.push(edge.earlier);
      else before.set(edge.later, [edge.earlier]);
    }
  }
  const cyclic: string[] = [];
  for (const parent of drafts) {
    const children = parent.children;
    if (children.length < 2 || !children.some((child) => before.has(child))) {
      children.forEach((child, i) => (child.order ??= i));
      if (children.length >= 2) sortByRank(children, rank);
      continue;
    }
    // Kahn's algorithm over the children's places, the ready ones in a heap by (rank, place).
    const place = new Map(children.map((child, i) => [child, i]));
    const ranks = children.map(rank);
    const waiting = new Int32Array(children.length);
    const dependents: number[][] = children.map(() => []);
    children.forEach((child, i) => {
      for (const earlier of new Set(before.get(child) ?? [])) {
        waiting[i]!++;
        dependents[place.get(earlier)!]!.push(i);
      }
    });
    const ready = new MinHeap((a, b) => (ranks[a] !== ranks[b] ? ranks[a]! < ranks[b]! : a < b));
    for (let i = 0; i < children.length; i++) if (waiting[i] === 0) ready.push(i);
    const sorted: Draft[] = [];
    for (let next = ready.pop(); next !== undefined; next = ready.pop()) {
      children[next]!.order = sorted.length;
      sorted.push(children[next]!);
      for (const later of dependents[next]!) if (--waiting[later]! === 0) ready.push(later);
    }
    if (sorted.length < children.length) {
      const placed = new Set(sorted);
      for (const child of children) if (!placed.has(child)) cyclic.push(child.where);
    } else parent.children = sorted;
  }
  refuseAll(
    name,
    cyclic,
    (n) => `the dependencies of ${count(n, "item")} form a cycle`,
    "break it (remove one of those dependencies) to give the items an order",
  );
}

/** Siblings without dependencies between them: by rank, then the place they were read in (a stable sort). */
function sortByRank(children: Draft[], rank: Rank): void {
  const ranks = new Map(children.map((child) => [child, rank(child)]));
  children.sort((a, b) => ranks.get(a)! - ranks.get(b)!);
  children.forEach((child, i) => (child.order = i));
}

/** The ancestors of `later` and `earlier` (themselves included) that are siblings; none when one holds the other. */
function siblingsOnPaths(later: Draft, earlier: Draft, parentOf: ReadonlyMap<Draft, Draft>): { later: Draft; earlier: Draft } | undefined {
  const chain = (item: Draft) => {
    const path = [item];
    for (let at = parentOf.get(item); at !== undefined; at = parentOf.get(at)) path.push(at);
    return path.reverse();
  };
  const [a, b] = [chain(later), chain(earlier)];
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  if (i >= a.length || i >= b.length) return undefined;
  return { later: a[i]!, earlier: b[i]! };
}

/** A binary heap: the ready items of a topological sort (their places), least first. */
class MinHeap {
  private items: number[] = [];
  constructor(private readonly less: (a: number, b: number) => boolean) {}

  push(item: number): void {
    const items = this.items;
    items.push(item);
    let i = items.length - 1;
    while (i > 0) {
      const up = (i - 1) >> 1;
      if (!this.less(items[i]!, items[up]!)) break;
      [items[i], items[up]] = [items[up]!, items[i]!];
      i = up;
    }
  }

  pop(): number | undefined {
    const items = this.items;
    if (items.length === 0) return undefined;
    const top = items[0];
    const last = items.pop()!;
    if (items.length > 0) {
      items[0] = last;
      let i = 0;
      for (;;) {
        const [l, r] = [2 * i + 1, 2 * i + 2];
        let least = i;
        if (l < items.length && this.less(items[l]!, items[least]!)) least = l;
        if (r < items.length && this.less(items[r]!, items[least]!)) least = r;
        if (least === i) break;
        [items[i], items[least]] = [items[least]!, items[i]!];
        i = least;
      }
    }
    return top;
  }
}
