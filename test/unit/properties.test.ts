// Property tests (fast-check) of canonical serialization (CONTRACT §3), deterministic selection
// (seed 001 §4.2) and the runner-owned state updates (seed 002) over random valid trees.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { serializeTree, treeFingerprint } from "../../src/core/tree/canonical.js";
import { serializeTreePieces } from "../../src/core/tree/serialize.js";
import { checkTreeShape } from "../../src/core/tree/invariants.js";
import { formatCommitSubject, parseCommitSubject, type CommitSubject } from "../../src/core/commit/commit-message.js";
import { selectLeftmostOpenLeaf } from "../../src/core/tree/select.js";
import {
  applyStateUpdates,
  deriveInternalPasses,
  resetRunnerOwnedFields,
  transitionFor,
  type AgentStatus,
  type GuardOutcome,
} from "../../src/core/tree/state-update.js";
import { walkTree, type TaskNode, type TaskTree } from "../../src/core/tree/tree.js";

const RUNS = { numRuns: 300 } as const;

/** Ids as the schema allows them, short so that case-only differences and ties are common. */
const idArb = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,5}$/);

const nodeFieldsArb = fc.record({
  parentPick: fc.nat(),
  order: fc.integer({ min: -2, max: 2 }), // a small range: order ties are frequent
  title: fc.string({ unit: "grapheme", minLength: 1, maxLength: 6 }),
  goal: fc.string({ unit: "grapheme", maxLength: 6 }),
  acceptance: fc.array(fc.string({ unit: "grapheme", maxLength: 4 }), { maxLength: 2 }),
  passes: fc.boolean(),
  maxAttempts: fc.integer({ min: 1, max: 4 }),
  attemptsPick: fc.nat(),
});

/** Valid trees: unique ids, random order keys with ties, random passes and attempts ≤ max_attempts. */
const treeArb: fc.Arbitrary<TaskTree> = fc
  .uniqueArray(idArb, { minLength: 1, maxLength: 24 })
  .chain((ids) => fc.tuple(fc.constant(ids), fc.array(nodeFieldsArb, { minLength: ids.length, maxLength: ids.length })))
  .map(([ids, fields]) => {
    const nodes: TaskNode[] = ids.map((id, i) => {
      const f = fields[i]!;
      return {
        id,
        order: f.order,
        title: f.title,
        goal: f.goal,
        acceptance: f.acceptance,
        passes: f.passes,
        attempts: f.attemptsPick % (f.maxAttempts + 1),
        max_attempts: f.maxAttempts,
        children: [],
      };
    });
    for (let i = 1; i < nodes.length; i++) nodes[fields[i]!.parentPick % i]!.children.push(nodes[i]!);
    return { version: 1 as const, root: nodes[0]! };
  });

/** Trees at rest: every parent's passes derived from its children. */
const derivedTreeArb = treeArb.map((t) => {
  deriveInternalPasses(t);
  return t;
});

/** A small deterministic PRNG (mulberry32), so a shrunk counterexample replays exactly. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function shuffle<T>(items: T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** The same tree with every object's keys and every children array in a random order. */
function scramble(t: TaskTree, seed: number): TaskTree {
  const random = prng(seed);
  const scrambleNode = (n: TaskNode): TaskNode => {
    const entries: [string, unknown][] = Object.entries(n).map(([key, value]) => {
      if (key === "children") return [key, shuffle((value as TaskNode[]).map(scrambleNode), random)];
      if (key === "acceptance") return [key, [...(value as string[])]]; // acceptance order is meaningful
      return [key, value];
    });
    return Object.fromEntries(shuffle(entries, random)) as unknown as TaskNode;
  };
  return Object.fromEntries(
    shuffle(
      [
        ["version", t.version],
        ["root", scrambleNode(t.root)],
      ],
      random,
    ),
  ) as unknown as TaskTree;
}

/** Sibling order written independently of src/core/tree/tree.ts: (order ASC, id ASC by UTF-16 code units). */
function siblingOrder(a: TaskNode, b: TaskNode): number {
  if (a.order !== b.order) return a.order - b.order;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

function nodesOf(t: TaskTree): TaskNode[] {
  return [...walkTree(t)].map(({ node }) => node);
}

function everyNodePasses(n: TaskNode): boolean {
  return n.passes && n.children.every(everyNodePasses);
}

/** Reference selection, recursive and naive: the leftmost open leaf, or undefined. */
function referencePath(n: TaskNode): string[] | undefined {
  if (n.passes) return undefined;
  if (n.children.length === 0) return [n.id];
  for (const child of [...n.children].sort(siblingOrder)) {
    const below = referencePath(child);
    if (below) return [n.id, ...below];
  }
  return undefined;
}

describe("CONTRACT §3 canonical serialization (properties)", () => {
  it("generated trees are valid trees (schema, unique ids, attempts ≤ max_attempts)", () => {
    fc.assert(
      fc.property(treeArb, (t) => {
        expect(checkTreeShape(JSON.parse(serializeTree(t))).problems).toEqual([]);
      }),
      { numRuns: 100 },
    );
  });

  it("writing the same tree twice gives the same bytes: parse(serialize(t)) serializes to the same bytes", () => {
    fc.assert(
      fc.property(treeArb, (t) => {
        const bytes = serializeTree(t);
        expect(serializeTree(JSON.parse(bytes) as TaskTree)).toBe(bytes);
        expect(bytes.endsWith("}\n")).toBe(true);
        expect(bytes.endsWith("\n\n")).toBe(false);
      }),
      RUNS,
    );
  });

  it("written piece by piece (serializeTreePieces), the text is exactly serializeTree's: unicode, escapes, shuffled keys and children", () => {
    const text = fc.string({ unit: "binary", maxLength: 12 });
    fc.assert(
      fc.property(treeArb, fc.integer(), text, text, (t, seed, title, goal) => {
        const odd = scramble(t, seed);
        odd.root.title = `${title}\u2028"\\\n\t😀`;
        odd.root.goal = goal;
        const pieces = [...serializeTreePieces(odd)];
        expect(pieces.join("")).toBe(serializeTree(odd));
        expect(pieces.at(-1)!.endsWith("\n")).toBe(true);
      }),
      RUNS,
    );
    // Large trees come in pieces of bounded size.
    const wide = {
      version: 1,
      root: {
        id: "root",
        order: 0,
        title: "r",
        goal: "",
        acceptance: [],
        passes: false,
        attempts: 0,
        max_attempts: 1,
        children: Array.from({ length: 5000 }, (_, i) => ({
          id: `n${String(i).padStart(5, "0")}`,
          order: i,
          title: "x".repeat(100),
          goal: "",
          acceptance: ["a", "b"],
          passes: false,
          attempts: 0,
          max_attempts: 1,
          children: [],
        })),
      },
    } as TaskTree;
    const pieces = [...serializeTreePieces(wide)];
    expect(pieces.length).toBeGreaterThan(3);
    // Large nodes on several levels (each written field by field), with text that needs escaping.
    const leaf = (id: string) => ({
      id,
      order: 0,
      title: `t "${id}"\n`,
      goal: "ü\u2028",
      acceptance: [],
      passes: false,
      attempts: 0,
      max_attempts: 1,
      children: [],
    });
    const deep = {
      version: 1,
      root: {
        ...leaf("root"),
        acceptance: ["x"],
        children: [0, 1, 2].map((b) => ({
          ...leaf(`b${b}`),
          order: b,
          children: Array.from({ length: 600 }, (_, i) => ({ ...leaf(`b${b}l${String(i).padStart(3, "0")}`), order: i })),
        })),
      },
    } as TaskTree;
    expect([...serializeTreePieces(deep)].join("")).toBe(serializeTree(deep));
    expect(Math.max(...pieces.map((piece) => piece.length))).toBeLessThan(300 * 1024);
    expect(pieces.join("")).toBe(serializeTree(wide));
  });

  it("the bytes and the fingerprint do not depend on key order or children order (shuffle both)", () => {
    fc.assert(
      fc.property(treeArb, fc.integer(), (t, seed) => {
        const shuffled = scramble(t, seed);
        expect(serializeTree(shuffled)).toBe(serializeTree(t));
        expect(treeFingerprint(shuffled)).toBe(treeFingerprint(t));
      }),
      RUNS,
    );
  });

  it("every children array on disk is sorted by (order ASC, id ASC)", () => {
    fc.assert(
      fc.property(treeArb, (t) => {
        const written = JSON.parse(serializeTree(t)) as TaskTree;
        for (const n of nodesOf(written)) {
          for (let i = 1; i < n.children.length; i++) expect(siblingOrder(n.children[i - 1]!, n.children[i]!)).toBeLessThan(0);
        }
      }),
      RUNS,
    );
  });

  it("serialization does not mutate its input", () => {
    fc.assert(
      fc.property(treeArb, fc.integer(), (t, seed) => {
        const shuffled = scramble(t, seed);
        const before = JSON.stringify(shuffled);
        serializeTree(shuffled);
        treeFingerprint(shuffled);
        expect(JSON.stringify(shuffled)).toBe(before);
      }),
      { numRuns: 100 },
    );
  });
});

describe("seed 001 deterministic selection: the leftmost open leaf (properties)", () => {
  it('"complete" iff the root passes; otherwise an open leaf whose left siblings\' subtrees fully pass at every level of its path', () => {
    fc.assert(
      fc.property(derivedTreeArb, fc.integer(), (t, seed) => {
        const selection = selectLeftmostOpenLeaf(scramble(t, seed));
        if (t.root.passes) {
          expect(selection.kind).toBe("complete");
          return;
        }
        expect(selection.kind).toBe("leaf");
        if (selection.kind !== "leaf") return;
        const { leaf, path, stuck } = selection;
        expect(leaf.children).toEqual([]);
        expect(leaf.passes).toBe(false);
        expect(stuck).toBe(leaf.attempts === leaf.max_attempts);
        expect(path[0]!.id).toBe(t.root.id);
        expect(path[path.length - 1]).toBe(leaf);
        for (let level = 0; level + 1 < path.length; level++) {
          const parent = path[level]!;
          const onPath = path[level + 1]!;
          expect(parent.passes).toBe(false);
          const siblings = [...parent.children].sort(siblingOrder);
          const at = siblings.indexOf(onPath);
          expect(at).toBeGreaterThanOrEqual(0);
          for (const left of siblings.slice(0, at)) expect(everyNodePasses(left)).toBe(true);
        }
        expect(path.map((n) => n.id)).toEqual(referencePath(t.root));
      }),
      RUNS,
    );
  });

  it("with derived passes, the root passes iff every leaf passes", () => {
    fc.assert(
      fc.property(derivedTreeArb, (t) => {
        const leaves = nodesOf(t).filter((n) => n.children.length === 0);
        expect(t.root.passes).toBe(leaves.every((n) => n.passes));
        expect(selectLeftmostOpenLeaf(t).kind === "complete").toBe(leaves.every((n) => n.passes));
      }),
      RUNS,
    );
  });
});

const outcomeArb: fc.Arbitrary<{ status: AgentStatus; guard: GuardOutcome } | undefined> = fc.option(
  fc.constantFrom<{ status: AgentStatus; guard: GuardOutcome }>(
    { status: "done", guard: "pass" },
    { status: "done", guard: "fail" },
    { status: "done", guard: "skipped" },
    { status: "retry", guard: "skipped" },
    { status: "decomposed", guard: "skipped" },
  ),
  { nil: undefined },
);

/** What an agent might do to the tree: flip runner-owned fields anywhere, add new leaves anywhere. */
const agentEditArb = fc.record({
  flips: fc.array(fc.record({ pick: fc.nat(), passes: fc.boolean(), attempts: fc.nat({ max: 4 }) }), { maxLength: 10 }),
  // New ids are longer than any generated id, so they never collide with an existing one.
  additions: fc.array(fc.record({ parentPick: fc.nat(), passes: fc.boolean(), attempts: fc.nat({ max: 4 }) }), { maxLength: 3 }),
  selectPick: fc.nat(),
});

interface AgentEdit {
  flips: { pick: number; passes: boolean; attempts: number }[];
  additions: { parentPick: number; passes: boolean; attempts: number }[];
}

function agentEdit(prev: TaskTree, edit: AgentEdit): { next: TaskTree; added: Set<string> } {
  const next = structuredClone(prev);
  const nodes = nodesOf(next);
  for (const flip of edit.flips) {
    const target = nodes[flip.pick % nodes.length]!;
    target.passes = flip.passes;
    target.attempts = Math.min(flip.attempts, target.max_attempts);
  }
  const added = new Set<string>();
  edit.additions.forEach((addition, i) => {
    const id = `new-node-by-agent-${i}`;
    added.add(id);
    nodes[addition.parentPick % nodes.length]!.children.push({
      id,
      order: 0,
      title: "added",
      goal: "",
      acceptance: [],
      passes: addition.passes,
      attempts: addition.attempts,
      max_attempts: 4,
      children: [],
    });
  });
  return { next, added };
}

describe("seed 002 state updates (properties)", () => {
  it("after apply_state_updates a parent passes iff all its children pass", () => {
    fc.assert(
      fc.property(derivedTreeArb, agentEditArb, outcomeArb, (prev, edit, outcome) => {
        const { next } = agentEdit(prev, edit);
        const ids = nodesOf(next).map((n) => n.id);
        const result = applyStateUpdates(prev, next, ids[edit.selectPick % ids.length], outcome);
        for (const n of nodesOf(result.tree)) {
          if (n.children.length > 0) expect(n.passes).toBe(n.children.every((child) => child.passes));
        }
      }),
      RUNS,
    );
  });

  it("agent edits to passes and attempts never survive the reset: existing nodes keep prev's values, new nodes get false / 0", () => {
    fc.assert(
      fc.property(derivedTreeArb, agentEditArb, (prev, edit) => {
        const { next, added } = agentEdit(prev, edit);
        const before = new Map(nodesOf(prev).map((n) => [n.id, n]));
        for (const n of nodesOf(resetRunnerOwnedFields(prev, next))) {
          const old = before.get(n.id);
          if (old) expect({ passes: n.passes, attempts: n.attempts }).toEqual({ passes: old.passes, attempts: old.attempts });
          else {
            expect(added.has(n.id)).toBe(true);
            expect({ passes: n.passes, attempts: n.attempts }).toEqual({ passes: false, attempts: 0 });
          }
        }
      }),
      RUNS,
    );
  });

  it("without a transition (runner error recovery) and without new nodes, the result carries prev's passes and attempts exactly", () => {
    fc.assert(
      fc.property(derivedTreeArb, agentEditArb, (prev, edit) => {
        const { next } = agentEdit(prev, { ...edit, additions: [] });
        const ids = nodesOf(next).map((n) => n.id);
        const result = applyStateUpdates(prev, next, ids[edit.selectPick % ids.length], undefined);
        const owned = (t: TaskTree) => new Map(nodesOf(t).map((n) => [n.id, { passes: n.passes, attempts: n.attempts }]));
        expect(owned(result.tree)).toEqual(owned(prev));
        expect(result.derivedPasses).toEqual([]);
      }),
      RUNS,
    );
  });

  it("only the selected node's attempts move, by the transition table, saturating at max_attempts; the previous tree is not mutated", () => {
    fc.assert(
      fc.property(derivedTreeArb, agentEditArb, outcomeArb, (prev, edit, outcome) => {
        const { next, added } = agentEdit(prev, edit);
        const ids = nodesOf(next).map((n) => n.id);
        const selectedId = ids[edit.selectPick % ids.length]!;
        const prevText = JSON.stringify(prev);
        // The agent's tree as the step hands it over: a fresh parse of its own.
        const result = applyStateUpdates(prev, JSON.parse(JSON.stringify(next)) as TaskTree, selectedId, outcome);
        expect(JSON.stringify(prev)).toBe(prevText);
        const before = new Map(nodesOf(prev).map((n) => [n.id, n]));
        for (const n of nodesOf(result.tree)) {
          const base = before.get(n.id)?.attempts ?? 0;
          const increments = n.id === selectedId && outcome !== undefined && transitionFor(outcome.status, outcome.guard).attempts === "increment";
          expect(n.attempts).toBe(increments ? Math.min(base + 1, n.max_attempts) : base);
          if (added.has(n.id) && n.children.length === 0) {
            const passedByTable = n.id === selectedId && outcome?.status === "done" && outcome.guard === "pass";
            expect(n.passes).toBe(passedByTable);
          }
        }
        expect(result.selected?.id).toBe(selectedId);
      }),
      RUNS,
    );
  });
});

describe("CONTRACT §7 commit subjects (properties)", () => {
  const runIdArb = fc.stringMatching(/^[A-Za-z0-9._-]{1,64}$/);
  const subjectArb: fc.Arbitrary<CommitSubject> = fc.oneof(
    fc.record({
      kind: fc.constantFrom("decompose" as const, "execute" as const),
      runId: runIdArb,
      iteration: fc.integer({ min: 1, max: 1_000_000 }),
      nodeId: fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/),
      guard: fc.constantFrom("pass" as const, "fail" as const, "skipped" as const),
    }),
    fc.record({ kind: fc.constant("repair" as const), runId: runIdArb, iteration: fc.integer({ min: 1, max: 1_000_000 }) }),
  );

  it("parse(format(subject)) gives the subject back", () => {
    fc.assert(
      fc.property(subjectArb, (subject) => {
        expect(parseCommitSubject(formatCommitSubject(subject))).toEqual(subject);
      }),
      RUNS,
    );
  });
});
