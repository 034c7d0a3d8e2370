// The tree file's versions read one after another (src/core/tree/tree-versions.ts) and the audit's quick
// path on them (src/core/audit/audit.ts): the same trees as parsing and checking each version whole, and
// the same audit — the same violations, in the same order, with the same words — as judging every
// commit's whole trees, over random histories: iterations legal and not, passed nodes touched,
// nodes added, moved and removed, files not in canonical form, invalid files, repeated ids.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { auditRun, type AuditCommit } from "../../src/core/audit/audit.js";
import { checkTreeShape } from "../../src/core/tree/invariants.js";
import { formatCommitSubject } from "../../src/core/commit/commit-message.js";
import { selectLeftmostOpenLeaf } from "../../src/core/tree/select.js";
import { serializeTree } from "../../src/core/tree/serialize.js";
import { PiecedBytes } from "../../src/core/tree/pieced-bytes.js";
import { TreeVersions } from "../../src/core/tree/tree-versions.js";
import { allChildrenPass, nodesById, walkTree, type TaskNode, type TaskTree } from "../../src/core/tree/tree.js";

const TREE = ".runner/state/tree.json";
const RUN = "r";

/** The tree a file holds, checked whole: what the audit read before tree versions. */
function wholeTree(text: string | undefined): TaskTree | undefined {
  if (text === undefined) return undefined;
  try {
    return checkTreeShape(JSON.parse(text)).tree;
  } catch {
    return undefined;
  }
}

function clone(tree: TaskTree): TaskTree {
  return JSON.parse(JSON.stringify(tree)) as TaskTree;
}

/** Every parent's passes derived from its children, bottom up. */
function derive(tree: TaskTree): TaskTree {
  const order = [...walkTree(tree)].map(({ node }) => node).reverse();
  for (const node of order) if (node.children.length > 0) node.passes = allChildrenPass(node);
  return tree;
}

const idArb = fc.stringMatching(/^[a-z][a-z0-9]{0,2}$/);

/** A valid tree in canonical order: unique ids, attempts within max_attempts, passes derived. */
const treeArb: fc.Arbitrary<TaskTree> = fc
  .uniqueArray(idArb, { minLength: 2, maxLength: 24 })
  .chain((ids) =>
    fc.tuple(
      fc.constant(ids),
      fc.array(fc.record({ parent: fc.nat(), order: fc.integer({ min: 0, max: 2 }), passes: fc.boolean(), attempts: fc.nat(2) }), {
        minLength: ids.length,
        maxLength: ids.length,
      }),
    ),
  )
  .map(([ids, fields]) => {
    const nodes: TaskNode[] = ids.map((id, i) => ({
      id,
      order: fields[i]!.order,
      title: `t ${id}`,
      goal: i % 3 === 0 ? "" : "g",
      acceptance: i % 4 === 0 ? ["x"] : [],
      passes: fields[i]!.passes,
      attempts: fields[i]!.attempts,
      max_attempts: 3,
      children: [],
    }));
    for (let i = 1; i < nodes.length; i++) nodes[fields[i]!.parent % i]!.children.push(nodes[i]!);
    const tree = derive({ version: 1, root: nodes[0]! });
    // (an open root, so that there is a leaf to work on)
    if (tree.root.passes) {
      const leaf = [...walkTree(tree)].map(({ node }) => node).find((node) => node.children.length === 0)!;
      leaf.passes = false;
      derive(tree);
    }
    return wholeTree(serializeTree(tree))!;
  });

function leftmostOpenLeaf(tree: TaskTree): TaskNode | undefined {
  try {
    const selection = selectLeftmostOpenLeaf(tree);
    return selection.kind === "leaf" ? selection.leaf : undefined;
  } catch {
    return undefined; // (a parent's passes that disagrees with its children)
  }
}

/** What an audit gives, or the error it ends with. */
async function outcome<T>(audit: Promise<T>): Promise<T | { error: string }> {
  try {
    return await audit;
  } catch (error) {
    return { error: String(error) };
  }
}

/** One step of a history: what kind of commit, and the numbers that pick what it does. */
const stepArb = fc.record({
  kind: fc.constantFrom(
    "pass",
    "pass",
    "fail",
    "retry",
    "decompose",
    "pass-not-derived",
    "wrong-attempts",
    "touch-passed",
    "other-owned",
    "edit-open",
    "wrong-node",
    "hand-commit",
    "compact",
    "scrambled-keys",
    "invalid-json",
    "duplicate-id",
    "unchanged",
    "remove-open",
    "move-open",
    "reorder",
    "repair",
    "rename-to-existing",
    "root-key",
    "version",
  ),
  pick: fc.nat(),
  other: fc.nat(),
});

interface Built {
  base: string;
  commits: { subject: string; body: string; changedPaths: string[]; text: string | undefined }[];
}

/** A history from a tree and steps: each step's commit and the tree file's text at it. */
function history(start: TaskTree, steps: { kind: string; pick: number; other: number }[]): Built {
  const commits: Built["commits"] = [];
  let tree = clone(start);
  let text: string | undefined = serializeTree(tree);
  let iteration = 0;
  const nodes = (t: TaskTree) => [...walkTree(t)].map(({ node }) => node);
  const loop = (nodeId: string, kind: string, guard: string, status: string, attempts?: string, extra: string[] = []) => {
    iteration++;
    const trailers = [`Runner-Status: ${status}`, ...(attempts ? [`Runner-Attempts: ${attempts}`] : []), ...extra];
    return {
      subject: formatCommitSubject({ kind: kind as "execute", runId: RUN, iteration, nodeId, guard: guard as "pass" }),
      body: `did it\n\n${trailers.join("\n")}`,
    };
  };
  for (const step of steps) {
    const leaf = leftmostOpenLeaf(tree);
    const next = clone(tree);
    const byId = nodesById(next);
    const mine = leaf ? byId.get(leaf.id)! : undefined;
    const all = nodes(next);
    const someNode = all[step.pick % all.length]!;
    const open = all.filter((node) => !node.passes);
    const someOpen = open[step.other % Math.max(1, open.length)];
    let commit: { subject: string; body: string } | undefined;
    let paths = [TREE, "src/work.ts"];
    let newText: string | undefined;
    switch (step.kind) {
      case "pass":
      case "pass-not-derived":
        if (!mine) continue;
        mine.passes = true;
        if (step.kind === "pass") derive(next);
        commit = loop(mine.id, "execute", "pass", "done", `${mine.attempts}/${mine.max_attempts}`);
        break;
      case "fail":
      case "retry":
        if (!mine) continue;
        mine.attempts = Math.min(mine.attempts + 1, mine.max_attempts);
        commit = loop(mine.id, "execute", step.kind === "fail" ? "fail" : "skipped", step.kind === "fail" ? "done" : "retry");
        break;
      case "wrong-attempts":
        if (!mine) continue;
        mine.attempts = (mine.attempts + 2) % (mine.max_attempts + 1);
        commit = loop(mine.id, "execute", "fail", "done");
        break;
      case "decompose": {
        if (!mine) continue;
        const id = `n${iteration}x${step.other % 7}`;
        if (byId.has(id)) continue;
        mine.children.push({ ...mine, id, order: step.other % 2, children: [], attempts: step.pick % 2, passes: false });
        paths = [TREE];
        commit = loop(mine.id, "decompose", "skipped", "decomposed");
        break;
      }
      case "touch-passed":
        someNode.title = `${someNode.title}!`;
        commit = loop(leaf?.id ?? "root", "execute", "fail", "done");
        break;
      case "other-owned":
        someNode.attempts = Math.min(someNode.max_attempts, someNode.attempts + 1);
        if (step.other % 2) someNode.passes = !someNode.passes;
        commit = loop(leaf?.id ?? "root", "execute", "fail", "done");
        break;
      case "edit-open":
        if (!someOpen) continue;
        someOpen.goal = `${someOpen.goal} more`;
        commit = loop(leaf?.id ?? "root", "execute", "fail", "done");
        break;
      case "wrong-node":
        commit = loop(someNode.id, "execute", "fail", "done");
        break;
      case "hand-commit":
        if (someOpen) someOpen.title = `${someOpen.title} by hand`;
        commit = { subject: "a hand commit", body: "" };
        paths = step.other % 2 ? [TREE] : [TREE, "README.md"];
        break;
      case "compact":
        newText = JSON.stringify(next);
        commit = loop(leaf?.id ?? "root", "execute", "fail", "done");
        break;
      case "scrambled-keys": {
        const [first, ...rest] = Object.entries(someNode);
        const scrambled = Object.fromEntries([...rest, first!]) as unknown as TaskNode;
        const parent = all.find((node) => node.children.includes(someNode));
        if (parent) parent.children[parent.children.indexOf(someNode)] = scrambled;
        else next.root = scrambled;
        commit = loop(leaf?.id ?? "root", "execute", "fail", "done");
        break;
      }
      case "invalid-json":
        newText = serializeTree(next).slice(0, 1 + (step.other % 40));
        commit = loop(leaf?.id ?? "root", "execute", "fail", "done", undefined, step.pick % 2 ? ["Runner-Tree: invalid"] : []);
        break;
      case "duplicate-id":
        someNode.children.push({ ...someNode, children: [], passes: false, attempts: 0 });
        commit = loop(leaf?.id ?? "root", "decompose", "skipped", "decomposed");
        break;
      case "unchanged":
        paths = ["src/work.ts"];
        newText = text;
        commit = step.other % 3 ? loop(leaf?.id ?? "root", "execute", "fail", "done") : { subject: "a hand commit", body: "" };
        break;
      case "remove-open": {
        const parent = all.find((node) => node.children.some((child) => !child.passes && child !== mine));
        if (!parent) continue;
        parent.children.splice(
          parent.children.findIndex((child) => !child.passes && child !== mine),
          1,
        );
        commit = step.other % 2 ? { subject: "a hand commit", body: "" } : loop(leaf?.id ?? "root", "execute", "fail", "done");
        break;
      }
      case "move-open": {
        if (!someOpen || someOpen === next.root) continue;
        const from = all.find((node) => node.children.includes(someOpen))!;
        const to = all.find((node) => node !== someOpen && !nodes({ version: 1, root: someOpen }).includes(node) && !node.passes);
        if (!to || to === from) continue;
        from.children.splice(from.children.indexOf(someOpen), 1);
        to.children.push(someOpen);
        commit = { subject: "a hand commit", body: "" };
        break;
      }
      case "reorder":
        someNode.order = (someNode.order + 1 + (step.other % 3)) % 4;
        commit = loop(leaf?.id ?? "root", "execute", "fail", "done");
        break;
      case "rename-to-existing":
        if (!someOpen || someOpen.id === someNode.id) continue;
        someOpen.id = someNode.id;
        commit = loop(leaf?.id ?? "root", "execute", "fail", "done");
        break;
      case "root-key":
      case "version":
        newText = serializeTree(next).replace(
          step.kind === "root-key" ? '"root": {' : '"version": 1',
          step.kind === "root-key" ? '"rooT": {' : '"version": 2',
        );
        commit = loop(leaf?.id ?? "root", "execute", "fail", "done");
        break;
      case "repair":
        iteration++;
        commit = { subject: formatCommitSubject({ kind: "repair", runId: RUN, iteration }), body: "Runner-Status: done" };
        paths = [TREE];
        break;
    }
    if (commit === undefined) continue;
    const written = newText ?? serializeTree(next);
    if (!paths.includes(TREE) && written !== text) continue;
    commits.push({ ...commit, changedPaths: paths.sort(), text: paths.includes(TREE) ? written : undefined });
    if (paths.includes(TREE)) text = written;
    const parsed = wholeTree(text);
    if (parsed) tree = parsed;
  }
  return { base: serializeTree(start), commits };
}

/** The audit commits of a history, each with its tree read whole (what the audit did before tree versions). */
function wholeCommits(built: Built): AuditCommit[] {
  let tree = wholeTree(built.base);
  return built.commits.map((commit, i) => {
    if (commit.text !== undefined) tree = wholeTree(commit.text);
    return {
      sha: `c${i}`,
      subject: commit.subject,
      body: commit.body,
      author: "A <a@x>",
      committer: "A <a@x>",
      parents: [`c${i - 1}`],
      changedPaths: commit.changedPaths,
      tree,
    };
  });
}

/**
 * The audit with every tree read whole, and with the trees read as versions, given one commit at
 * a time as the adapter streams them (a version's lookups hold until the next one is read).
 */
async function auditBothWays(built: Built) {
  const commits = wholeCommits(built);
  const whole = await outcome(auditRun(RUN, wholeTree(built.base), commits));
  const versions = new TreeVersions();
  const baseVersion = versions.next(Buffer.from(built.base));
  async function* oneByOne(): AsyncGenerator<AuditCommit> {
    let version = baseVersion;
    for (const [i, commit] of built.commits.entries()) {
      version = commit.text === undefined ? { tree: version.tree, node: version.node } : versions.next(Buffer.from(commit.text));
      yield { ...commits[i]!, tree: version.tree, treeVersion: version };
    }
  }
  const quick = await outcome(auditRun(RUN, baseVersion.tree, oneByOne()));
  return { whole, quick, counts: versions.counts };
}

describe("tree versions", () => {
  it("read one after another give the trees a whole read gives, and name a replaced subtree exactly", () => {
    fc.assert(
      fc.property(treeArb, fc.array(stepArb, { maxLength: 25 }), (start, steps) => {
        const built = history(start, steps);
        const versions = new TreeVersions();
        let previous = versions.next(Buffer.from(built.base));
        expect(previous.tree).toEqual(wholeTree(built.base));
        for (const commit of built.commits) {
          if (commit.text === undefined) continue;
          const before = previous.tree;
          const beforeNodes = before ? nodesById(before) : undefined;
          const version = versions.next(Buffer.from(commit.text));
          const whole = wholeTree(commit.text);
          expect(version.tree).toEqual(whole);
          if (whole) for (const [id, node] of nodesById(whole)) expect(version.node(id)).toEqual(node);
          if (version.change) {
            expect(version.change.before).toBe(before);
            for (const [id, node] of beforeNodes!) expect(version.change.nodeBefore(id)).toBe(node);
            // Outside the replaced subtree and its ancestors, every node is the same object.
            const inside = new Set([...walkTree({ version: 1, root: version.change.added })].map(({ node }) => node));
            const ancestors = new Set(version.change.ancestorsAfter);
            for (const { node } of walkTree(version.tree!)) {
              if (!inside.has(node) && !ancestors.has(node)) expect(beforeNodes!.get(node.id)).toBe(node);
            }
          }
          previous = version;
        }
      }),
      { numRuns: 300 },
    );
  });

  it("a leaf's passes set: only that leaf's lines are read again", () => {
    const tree = wholeTree(
      serializeTree({
        version: 1,
        root: {
          id: "root",
          order: 0,
          title: "Root",
          goal: "",
          acceptance: [],
          passes: false,
          attempts: 0,
          max_attempts: 3,
          children: ["a", "b"].map((id, order) => ({
            id,
            order,
            title: id,
            goal: "",
            acceptance: ["it works"],
            passes: false,
            attempts: 0,
            max_attempts: 3,
            children: [],
          })),
        },
      }),
    )!;
    const versions = new TreeVersions();
    versions.next(Buffer.from(serializeTree(tree)));
    const next = clone(tree);
    next.root.children[0]!.passes = true;
    const version = versions.next(Buffer.from(serializeTree(next)));
    expect(versions.counts).toEqual({ whole: 1, subtree: 1 });
    expect(version.change?.removed.id).toBe("a");
    expect(version.change?.ancestorsAfter.map((node) => node.id)).toEqual(["root"]);
    expect(version.tree).toEqual(next);
  });

  it("a node given an order that puts it out of place among its siblings: the version after is read whole, as after a whole read of it", () => {
    const leaf = (id: string, order: number): TaskNode => ({
      id,
      order,
      title: id,
      goal: "",
      acceptance: [],
      passes: false,
      attempts: 0,
      max_attempts: 3,
      children: [],
    });
    const root = (children: TaskNode[]): TaskTree => ({
      version: 1,
      root: { id: "root", order: 0, title: "Root", goal: "", acceptance: [], passes: false, attempts: 0, max_attempts: 3, children },
    });
    const first = serializeTree(root(["a", "b", "c", "d"].map((id, order) => leaf(id, order))));
    // (serializeTree sorts siblings: the texts out of place are edited by hand, one line each)
    const orderOf = (text: string, id: string, order: number) => text.replace(new RegExp(`("id": "${id}",\\n( *)"order": )[0-9]+`), `$1${order}`);
    for (const [id, order, canonical] of [
      ["b", 9, false], // after c and d by order: out of place
      ["a", 9, false], // the first, after every other
      ["d", -1, false], // the last, before every other
      ["b", 2, true], // a tie with c broken by id: in place
      ["c", 1, true], // a tie with b broken by id: in place
    ] as const) {
      const versions = new TreeVersions();
      versions.next(Buffer.from(first));
      const moved = orderOf(first, id, order);
      expect(moved).not.toBe(first);
      versions.next(Buffer.from(moved));
      expect(versions.counts).toEqual({ whole: 1, subtree: 1 });
      versions.next(Buffer.from(moved.replace('"title": "Root"', '"title": "Root!"')));
      // A whole read of the moved version would find it out of canonical form exactly when it is out of place.
      expect(wholeTree(moved) !== undefined && serializeTree(wholeTree(moved)!) === moved).toBe(canonical);
      expect(versions.counts).toEqual(canonical ? { whole: 1, subtree: 2 } : { whole: 2, subtree: 1 });
    }
  });
});

describe("the audit on tree versions", () => {
  it("reports what judging every commit's whole trees reports, over random histories", async () => {
    let subtree = 0;
    await fc.assert(
      fc.asyncProperty(treeArb, fc.array(stepArb, { maxLength: 25 }), async (start, steps) => {
        const { whole, quick, counts } = await auditBothWays(history(start, steps));
        subtree += counts.subtree;
        expect(quick).toEqual(whole);
      }),
      { numRuns: 400 },
    );
    // (the quick path is taken, not only the whole one)
    expect(subtree).toBeGreaterThan(100);
  });
});

describe("pieced bytes", () => {
  type Piece = { buffer: Buffer; start: number; end: number };
  /** Pieces cut at `cuts`, each in `bytes` itself or, where `copied` says so, in a copy of it. */
  function cut(bytes: Buffer, copy: Buffer, cuts: number[], copied: boolean[]): Piece[] {
    const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((x, y) => x - y);
    const bounds = [0, ...at, bytes.length];
    return bounds.slice(1).map((end, i) => ({ buffer: copied[i % copied.length] ? copy : bytes, start: bounds[i]!, end }));
  }
  const flat = (pieces: Piece[]) => Buffer.concat(pieces.map((p) => p.buffer.subarray(p.start, p.end)));
  const naivePrefix = (a: Buffer, b: Buffer) => {
    let n = 0;
    while (n < Math.min(a.length, b.length) && a[n] === b[n]) n++;
    return n;
  };
  const naiveSuffix = (a: Buffer, b: Buffer, prefix: number) => {
    let n = 0;
    while (n < Math.min(a.length, b.length) - prefix && a[a.length - 1 - n] === b[b.length - 1 - n]) n++;
    return n;
  };
  const bytesArb = fc.uint8Array({ maxLength: 300 }).map((array) => Buffer.from(array.map((x) => [10, 32, 97][x % 3]!)));

  it("read as the bytes they stand for, and compare as those do, where two hold the same memory or not", () => {
    fc.assert(
      fc.property(
        bytesArb,
        bytesArb,
        fc.array(fc.nat(), { maxLength: 6 }),
        fc.array(fc.nat(), { maxLength: 6 }),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 4 }),
        fc.nat(),
        (x, inserted, cutsA, cutsB, copied, pick) => {
          const copy = Buffer.from(x);
          const aPieces = cut(x, copy, cutsA, copied);
          // b: x with a stretch replaced (as a delta against x is), its unchanged stretches x's own memory or its copy's.
          const from = pick % (x.length + 1);
          const to = Math.min(x.length, from + (pick % 5));
          const head = cut(
            x.subarray(0, from),
            copy.subarray(0, from),
            cutsB,
            copied.map((c) => !c),
          );
          const tail = cut(x.subarray(to), copy.subarray(to), cutsB, copied);
          // (or x's own memory rotated: the same buffer, other places)
          const bPieces =
            pick % 4 === 0
              ? [
                  { buffer: x, start: from, end: x.length },
                  { buffer: x, start: 0, end: from },
                ]
              : [...head, { buffer: inserted, start: 0, end: pick % 7 ? Math.min(inserted.length, pick % 7) : 0 }, ...tail];
          const a = new PiecedBytes(aPieces);
          const b = new PiecedBytes(bPieces);
          const bBytes = flat(bPieces);
          expect(a.copy().equals(x)).toBe(true);
          expect(a.toString()).toBe(x.toString("utf8"));
          expect(b.toString(1, 9)).toBe(bBytes.toString("utf8", 1, Math.max(1, Math.min(9, bBytes.length))));
          for (let i = -1; i <= x.length; i++) {
            expect(a.at(i)).toBe(x[i]);
            expect(a.indexOf(10, i)).toBe(x.indexOf(10, Math.max(0, i)));
            expect(a.lastIndexOf(10, i)).toBe(i < 0 ? -1 : x.lastIndexOf(10, i));
          }
          const prefix = PiecedBytes.commonPrefix(a, b);
          expect(prefix).toBe(naivePrefix(x, bBytes));
          expect(PiecedBytes.commonSuffix(a, b, prefix)).toBe(naiveSuffix(x, bBytes, prefix));
        },
      ),
      { numRuns: 1000 },
    );
  });
});
