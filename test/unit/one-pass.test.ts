// The single-pass core (docs/performance.md, changes 1 and 7) against the implementations it
// replaced, kept here as references: the same problems in the same order with the same paths and
// messages, the same bytes on disk, the same state update in place as on a copy.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalNode, serializeTree } from "../../src/core/tree/canonical.js";
import { checkDerivedPasses, checkPassedImmutable, checkTreeShape, MAX_TREE_DEPTH, nestingExceeds } from "../../src/core/tree/invariants.js";
import { childPath, type Problem } from "../../src/core/base/problems.js";
import { validateTreeSchema } from "../../src/core/base/schema.js";
import { applyStateUpdates, deriveInternalPasses, transitionFor, type AgentStatus, type GuardOutcome } from "../../src/core/tree/state-update.js";
import { compareSiblings, isInCanonicalForm, walkTree, type TaskNode, type TaskTree } from "../../src/core/tree/tree.js";

const RUNS = { numRuns: 300 } as const;

// ---------------------------------------------------------------------------------------------
// References: the previous implementations, verbatim but for names.

function refSortedCopy(tree: TaskTree): TaskTree {
  const copies = new Map<TaskNode, TaskNode>();
  const stack: { node: TaskNode; expanded: boolean }[] = [{ node: tree.root, expanded: false }];
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!;
    if (!top.expanded) {
      top.expanded = true;
      for (const child of top.node.children) stack.push({ node: child, expanded: false });
      continue;
    }
    stack.pop();
    const node = top.node;
    copies.set(node, {
      id: node.id,
      order: node.order,
      title: node.title,
      goal: node.goal,
      acceptance: [...node.acceptance],
      passes: node.passes,
      attempts: node.attempts,
      max_attempts: node.max_attempts,
      children: node.children.map((child) => copies.get(child)!).sort(compareSiblings),
    });
  }
  return { version: tree.version, root: copies.get(tree.root)! };
}

const refSerialize = (tree: TaskTree) => `${JSON.stringify(refSortedCopy(tree), null, 2)}\n`;

type Loose = Record<string, unknown>;
const isObject = (value: unknown): value is Loose => value !== null && typeof value === "object" && !Array.isArray(value);

function refCheckTreeShape(data: unknown): { tree?: TaskTree; problems: Problem[] } {
  const nodes: { node: Loose; path: string }[] = [];
  let tooDeep: Problem | undefined;
  if (isObject(data) && isObject(data.root)) {
    const stack = [{ node: data.root, path: "$.root", depth: 0 }];
    while (stack.length > 0) {
      const current = stack.pop()!;
      if (current.depth >= MAX_TREE_DEPTH) {
        const where = typeof current.node.id === "string" ? ` (at node ${JSON.stringify(current.node.id.slice(0, 128))})` : "";
        tooDeep = { path: "$.root", message: `the tree is nested deeper than ${MAX_TREE_DEPTH} levels${where}; flatten the plan` };
        break;
      }
      nodes.push(current);
      const children = current.node.children;
      if (!Array.isArray(children)) continue;
      for (let i = children.length - 1; i >= 0; i--) {
        const child: unknown = children[i];
        if (isObject(child)) stack.push({ node: child, path: `${current.path}.children[${i}]`, depth: current.depth + 1 });
      }
    }
  }
  if (tooDeep || refNestingExceeds(data, MAX_TREE_DEPTH * 2 + 4)) {
    return { problems: [tooDeep ?? { path: "$", message: `the document is nested deeper than ${MAX_TREE_DEPTH} levels; flatten the plan` }] };
  }
  const schema = validateTreeSchema(data);
  const first = new Map<string, string>();
  const duplicates: Problem[] = [];
  for (const { node, path } of nodes) {
    if (typeof node.id !== "string") continue;
    const earlier = first.get(node.id);
    if (earlier === undefined) first.set(node.id, childPath(path, "id"));
    else
      duplicates.push({
        path: childPath(path, "id"),
        message: `duplicate id ${JSON.stringify(node.id)} (also used at ${earlier}); ids must be unique in the whole tree`,
      });
  }
  const attempts: Problem[] = [];
  for (const { node, path } of nodes) {
    if (typeof node.attempts === "number" && typeof node.max_attempts === "number" && node.attempts > node.max_attempts) {
      attempts.push({ path: childPath(path, "attempts"), message: `attempts ${node.attempts} is more than max_attempts ${node.max_attempts}` });
    }
  }
  const problems = [...(schema.ok ? [] : schema.problems), ...duplicates, ...attempts];
  return problems.length === 0 && schema.ok ? { tree: schema.value, problems } : { problems };
}

function refNestingExceeds(data: unknown, limit: number): boolean {
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

function refCheckPassedImmutable(previous: TaskTree, next: TaskTree): Problem[] {
  const storedPaths = new Map<string, string>();
  for (const { node, jsonPath } of walkTree(next)) storedPaths.set(node.id, jsonPath);
  const nextIndex = new Map<string, { node: TaskNode; parentId: string | undefined; jsonPath: string }>();
  for (const { node, parent } of walkTree(refSortedCopy(next)))
    nextIndex.set(node.id, { node, parentId: parent?.id, jsonPath: storedPaths.get(node.id)! });
  const problems: Problem[] = [];
  const stack: { node: TaskNode; parentId: string | undefined }[] = [{ node: refSortedCopy(previous).root, parentId: undefined }];
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
      problems.push({
        path: now.jsonPath,
        message: `passed node ${name} was moved from parent ${JSON.stringify(parentId ?? null)} to ${JSON.stringify(now.parentId ?? null)}; passed nodes are immutable`,
      });
    } else if (canonicalNode(now.node) !== canonicalNode(node)) {
      const keys = ["id", "order", "title", "goal", "acceptance", "passes", "attempts", "max_attempts", "children"] as const;
      const fields = keys.filter((key) => JSON.stringify(node[key]) !== JSON.stringify(now.node[key]));
      problems.push({
        path: now.jsonPath,
        message: `passed node ${name} was changed (${fields.join(", ")}); passed nodes are immutable, add follow-up work as a new node`,
      });
    }
  }
  return problems;
}

function refCheckDerivedPasses(tree: TaskTree): Problem[] {
  const problems: Problem[] = [];
  for (const { node, jsonPath } of walkTree(tree)) {
    if (node.children.length === 0) continue;
    const allPass = node.children.every((child) => child.passes);
    if (node.passes !== allPass) {
      problems.push({
        path: childPath(jsonPath, "passes"),
        message: allPass
          ? `is false although every child passes (a child was removed by hand?); set it to true and commit: a parent passes when all its children do`
          : `is true although a child has not passed; only the runner sets passes`,
      });
    }
  }
  return problems;
}

function refApplyStateUpdates(
  previous: TaskTree,
  next: TaskTree,
  selectedId: string | undefined,
  outcome: { status: AgentStatus; guard: GuardOutcome } | undefined,
) {
  const owned = new Map<string, { passes: boolean; attempts: number; max_attempts: number }>();
  for (const { node } of walkTree(previous)) owned.set(node.id, { passes: node.passes, attempts: node.attempts, max_attempts: node.max_attempts });
  const tree = refSortedCopy(next);
  for (const { node } of walkTree(tree)) {
    const before = owned.get(node.id);
    node.passes = before?.passes ?? false;
    // (issue 20: max_attempts of a node that was there is a person's, reset from the previous tree)
    if (before) node.max_attempts = before.max_attempts;
    node.attempts = Math.min(before?.attempts ?? 0, node.max_attempts);
  }
  let selected: TaskNode | undefined;
  if (selectedId !== undefined) {
    for (const { node } of walkTree(tree)) {
      if (node.id === selectedId) {
        selected = node;
        break;
      }
    }
  }
  if (selected && outcome) {
    const transition = transitionFor(outcome.status, outcome.guard);
    if (transition.passes === "set-true") selected.passes = true;
    if (transition.attempts === "increment" && selected.attempts < selected.max_attempts) selected.attempts += 1;
  }
  const order = [...walkTree(tree)].map(({ node }) => node);
  const newlyPassed: string[] = [];
  for (let i = order.length - 1; i >= 0; i--) {
    const node = order[i]!;
    if (node.children.length === 0) continue;
    const passes = node.children.every((child) => child.passes);
    if (passes && !node.passes) newlyPassed.push(node.id);
    node.passes = passes;
  }
  return { tree, selected, derivedPasses: newlyPassed.reverse() };
}

// ---------------------------------------------------------------------------------------------
// Arbitraries.

const idArb = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,3}$/);

/** Trees with small order ranges (ties), random passes and attempts; ids unique unless `duplicates`. */
function treeArb(duplicates = false): fc.Arbitrary<TaskTree> {
  const ids = duplicates ? fc.array(idArb, { minLength: 1, maxLength: 20 }) : fc.uniqueArray(idArb, { minLength: 1, maxLength: 20 });
  return ids
    .chain((list) =>
      fc.tuple(
        fc.constant(list),
        fc.array(
          fc.record({
            parentPick: fc.nat(),
            order: fc.integer({ min: -1, max: 1 }),
            title: fc.constantFrom("a", "b", "é"),
            goal: fc.constantFrom("", "g"),
            acceptance: fc.array(fc.constantFrom("x", "y"), { maxLength: 2 }),
            passes: fc.boolean(),
            maxAttempts: fc.integer({ min: 1, max: 3 }),
            attemptsPick: fc.nat(),
          }),
          { minLength: list.length, maxLength: list.length },
        ),
      ),
    )
    .map(([list, fields]) => {
      const nodes: TaskNode[] = list.map((id, i) => {
        const f = fields[i]!;
        return {
          id,
          order: f.order,
          title: f.title,
          goal: f.goal,
          acceptance: f.acceptance,
          passes: f.passes,
          attempts: f.attemptsPick % (f.maxAttempts + 2),
          max_attempts: f.maxAttempts,
          children: [],
        };
      });
      for (let i = 1; i < nodes.length; i++) nodes[fields[i]!.parentPick % i]!.children.push(nodes[i]!);
      return { version: 1 as const, root: nodes[0]! };
    });
}

function nodesOf(t: TaskTree): TaskNode[] {
  return [...walkTree(t)].map(({ node }) => node);
}

/** Deterministic shuffles of keys and children (a file is not always canonical). */
function scramble(t: TaskTree, seed: number): TaskTree {
  let a = seed >>> 0;
  const random = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), a | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
  const shuffle = <T>(items: T[]): T[] => {
    const out = [...items];
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [out[i], out[j]] = [out[j]!, out[i]!];
    }
    return out;
  };
  const keepKeys = random() < 0.5;
  const scrambleNode = (n: TaskNode): TaskNode => {
    const entries = Object.entries(n).map(([key, value]): [string, unknown] =>
      key === "children"
        ? [key, shuffle((value as TaskNode[]).map(scrambleNode))]
        : key === "acceptance"
          ? [key, [...(value as string[])]]
          : [key, value],
    );
    return Object.fromEntries(keepKeys ? entries : shuffle(entries)) as unknown as TaskNode;
  };
  const top: [string, unknown][] = [
    ["version", t.version],
    ["root", scrambleNode(t.root)],
  ];
  return Object.fromEntries(keepKeys ? top : shuffle(top)) as unknown as TaskTree;
}

/** An agent's edits: fields of any node changed, nodes moved, removed or added. */
const editsArb = fc.array(
  fc.record({
    kind: fc.constantFrom("title", "acceptance", "order", "passes", "attempts", "max_attempts", "move", "remove", "add"),
    pick: fc.nat(),
    other: fc.nat(),
  }),
  { maxLength: 4 },
);

function edited(prev: TaskTree, edits: { kind: string; pick: number; other: number }[], seed: number): TaskTree {
  const next = structuredClone(prev);
  edits.forEach((edit, i) => {
    const all = nodesOf(next);
    const target = all[edit.pick % all.length]!;
    const other = all[edit.other % all.length]!;
    switch (edit.kind) {
      case "title":
        target.title = `${target.title}!`;
        break;
      case "acceptance":
        target.acceptance = [...target.acceptance, "new"];
        break;
      case "order":
        target.order += 1;
        break;
      case "passes":
        target.passes = !target.passes;
        break;
      case "attempts":
        target.attempts += 1;
        break;
      case "max_attempts":
        target.max_attempts = Math.max(1, target.max_attempts - 1);
        break;
      case "move":
      case "remove": {
        if (target === next.root) break;
        const parent = all.find((n) => n.children.includes(target))!;
        parent.children = parent.children.filter((child) => child !== target);
        if (edit.kind === "move" && !nodesOf({ version: 1, root: target }).includes(other) && other !== target) other.children.push(target);
        break;
      }
      case "add":
        other.children.push({
          id: `added-${i}`,
          order: 0,
          title: "t",
          goal: "",
          acceptance: [],
          passes: edit.pick % 2 === 0,
          attempts: 0,
          max_attempts: 2,
          children: [],
        });
        break;
    }
  });
  return scramble(next, seed);
}

const outcomeArb = fc.option(
  fc.constantFrom<{ status: AgentStatus; guard: GuardOutcome }>(
    { status: "done", guard: "pass" },
    { status: "done", guard: "fail" },
    { status: "retry", guard: "skipped" },
    { status: "decomposed", guard: "skipped" },
  ),
  { nil: undefined },
);

// ---------------------------------------------------------------------------------------------

describe("the single-pass core gives what the implementations it replaced gave", () => {
  it("serializeTree: the same bytes as JSON.stringify of the old sorted copy, for any key and child order", () => {
    fc.assert(
      fc.property(treeArb(true), fc.nat(), (t, seed) => {
        const scrambled = scramble(t, seed);
        expect(serializeTree(scrambled)).toBe(refSerialize(scrambled));
        expect(serializeTree(t)).toBe(refSerialize(t));
        const canonical = JSON.parse(refSerialize(scrambled)) as TaskTree;
        expect(isInCanonicalForm(canonical)).toBe(true);
        expect(serializeTree(canonical)).toBe(refSerialize(scrambled));
      }),
      RUNS,
    );
  });

  it("checkTreeShape: the same problems, in the same order, as the old several passes", () => {
    fc.assert(
      fc.property(
        treeArb(true),
        fc.nat(),
        fc.constantFrom("none", "extra-key", "bad-id", "no-title", "string-child", "array-child", "bad-version"),
        (t, seed, damage) => {
          const data = scramble(t, seed) as unknown as Loose;
          const nodes = nodesOf(data as unknown as TaskTree) as unknown as Loose[];
          const target = nodes[seed % nodes.length]!;
          if (damage === "extra-key") target.extra = 1;
          if (damage === "bad-id") target.id = "bad id!";
          if (damage === "no-title") delete target.title;
          if (damage === "string-child") (target.children as unknown[]).push("x");
          if (damage === "array-child") (target.children as unknown[]).push([[1]]);
          if (damage === "bad-version") data.version = 2;
          const json = JSON.parse(JSON.stringify(data)) as unknown;
          expect(checkTreeShape(json)).toEqual(refCheckTreeShape(json));
        },
      ),
      RUNS,
    );
  });

  it("checkTreeShape: depth and nesting limits as before, deep node chains and deep values alike", () => {
    const chain = (levels: number, leaf: Loose = {}) => {
      let node: Loose = {
        id: `n${levels - 1}`,
        order: 0,
        title: "t",
        goal: "",
        acceptance: [],
        passes: false,
        attempts: 0,
        max_attempts: 1,
        children: [],
        ...leaf,
      };
      for (let i = levels - 2; i >= 0; i--)
        node = { id: `n${i}`, order: 0, title: "t", goal: "", acceptance: [], passes: false, attempts: 0, max_attempts: 1, children: [node] };
      return { version: 1, root: node };
    };
    const nested = (depth: number) => {
      let value: unknown = "x";
      for (let i = 0; i < depth; i++) value = i % 2 ? { k: value } : [value];
      return value;
    };
    const cases: unknown[] = [
      chain(MAX_TREE_DEPTH),
      chain(MAX_TREE_DEPTH + 1),
      chain(200_000),
      chain(10, { acceptance: [nested(600)] }),
      chain(10, { goal: nested(490) }),
      chain(10, { goal: nested(510) }),
      chain(MAX_TREE_DEPTH, { title: nested(3) }),
      chain(MAX_TREE_DEPTH, { acceptance: [nested(5)] }),
      chain(MAX_TREE_DEPTH, { children: [[nested(2)]] }),
      { version: 1, root: [nested(600)] },
      { version: nested(600), root: chain(3).root },
      nested(100_000),
      [1, 2],
      "text",
      null,
    ];
    for (const data of cases) expect(checkTreeShape(data)).toEqual(refCheckTreeShape(data));
    expect(nestingExceeds(nested(10), 10)).toBe(refNestingExceeds(nested(10), 10));
    expect(nestingExceeds(nested(10), 9)).toBe(refNestingExceeds(nested(10), 9));
  });

  it("checkPassedImmutable: the same problems, paths and messages for any edit of the tree", () => {
    fc.assert(
      fc.property(treeArb(), editsArb, fc.nat(), (prev, edits, seed) => {
        const next = edited(prev, edits, seed);
        expect(checkPassedImmutable(prev, next)).toEqual(refCheckPassedImmutable(prev, next));
        const scrambledPrev = scramble(prev, seed + 1);
        expect(checkPassedImmutable(scrambledPrev, next)).toEqual(refCheckPassedImmutable(scrambledPrev, next));
      }),
      RUNS,
    );
  });

  it("checkDerivedPasses: the same problems as before", () => {
    fc.assert(
      fc.property(treeArb(true), fc.nat(), (t, seed) => {
        const scrambled = scramble(t, seed);
        expect(checkDerivedPasses(scrambled)).toEqual(refCheckDerivedPasses(scrambled));
      }),
      RUNS,
    );
  });

  it("applyStateUpdates on a fresh parse: the same tree, selected node and derived passes as the old implementation, the previous tree untouched", () => {
    fc.assert(
      fc.property(treeArb(), editsArb, fc.nat(), outcomeArb, fc.boolean(), (prev, edits, seed, outcome, unchanged) => {
        if (seed % 2 === 0) deriveInternalPasses(prev);
        const next = unchanged
          ? prev
          : edited(
              prev,
              edits.filter((edit) => edit.kind !== "remove" || edit.pick % 3 !== 0),
              seed,
            );
        const ids = nodesOf(next).map((n) => n.id);
        const selectedId = seed % 7 === 0 ? undefined : ids[seed % ids.length];
        const prevText = JSON.stringify(prev);
        const reference = refApplyStateUpdates(prev, next, selectedId, outcome);
        // The step hands over a fresh parse of the agent's file: updated in place, in canonical form.
        const fresh = JSON.parse(JSON.stringify(next)) as TaskTree;
        const result = applyStateUpdates(prev, fresh, selectedId, outcome);
        expect(JSON.stringify(prev)).toBe(prevText);
        expect(isInCanonicalForm(result.tree)).toBe(true);
        expect(result.tree).toEqual(reference.tree);
        expect(serializeTree(result.tree)).toBe(refSerialize(reference.tree));
        expect(JSON.stringify(result.tree)).toBe(JSON.stringify(reference.tree));
        expect(result.selected).toEqual(reference.selected);
        expect(result.derivedPasses).toEqual(reference.derivedPasses);
        if (result.selected) expect(nodesOf(result.tree)).toContain(result.selected);
      }),
      RUNS,
    );
  });
});
