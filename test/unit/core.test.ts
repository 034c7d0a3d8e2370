// The pure core, example by example: canonical bytes (CONTRACT §3), selection (seed 001 §4.2),
// classification (CONTRACT §7), invariants and schema messages with their JSON paths, text limits
// and redaction (CONTRACT §9), path rules, config, commit subjects and JSON paths.
import { execa } from "execa";
import { cpSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { canonicalJson, serializeTree, treeFingerprint } from "../../src/core/tree/canonical.js";
import { classifyChangedPaths } from "../../src/core/guard/classify.js";
import { isRunnerPath } from "../../src/core/guard/path-rules.js";
import { ALWAYS_PROTECTED, DEFAULT_LIMITS, parseConfig, resolveConfig } from "../../src/core/config/config.js";
import { DEFAULT_TEST_PATTERNS } from "../../src/core/guard/test-files.js";
import { MAX_TREE_DEPTH, checkDerivedPasses, checkPassedImmutable, checkTreeShape, nestingExceeds } from "../../src/core/tree/invariants.js";
import { pathEntryProblem, pathMatchesEntry, pathsInside, pathsOutside } from "../../src/core/guard/path-rules.js";
import { childPath, formatProblem, pointerToPath } from "../../src/core/base/problems.js";
import { runIdFromBranch, runIdProblem } from "../../src/core/commit/run-id.js";
import { formatCommitSubject, loopSubjectPattern, parseCommitSubject } from "../../src/core/commit/commit-message.js";
import { validateAgentOutputSchema, validateConfigSchema, validatePolicySchema, validateTreeSchema } from "../../src/core/base/schema.js";
import { selectLeftmostOpenLeaf } from "../../src/core/tree/select.js";
import { redactSecrets, secretValues, truncateForAgent } from "../../src/core/base/text-limits.js";
import { compareSiblings, countNodes, indexById, orderedChildren, sortedCopy, walkTree, type TaskTree } from "../../src/core/tree/tree.js";
import { PROJECT_ROOT, node, tree } from "../helpers/sandbox.js";

/** A chain root → n1 → n2 … of `levels` nodes (built without recursion). */
function chain(levels: number): TaskTree {
  const root = node("n0");
  let at = root;
  for (let i = 1; i < levels; i++) {
    const child = node(`n${i}`);
    at.children.push(child);
    at = child;
  }
  return tree(root);
}

describe("CONTRACT §3 canonical serialization", () => {
  const expected = `{
  "version": 1,
  "root": {
    "id": "root",
    "order": 0,
    "title": "Root",
    "goal": "Ship it",
    "acceptance": [
      "tests pass"
    ],
    "passes": false,
    "attempts": 1,
    "max_attempts": 3,
    "children": [
      {
        "id": "a",
        "order": 0,
        "title": "A",
        "goal": "",
        "acceptance": [],
        "passes": true,
        "attempts": 0,
        "max_attempts": 2,
        "children": []
      },
      {
        "id": "b",
        "order": 1,
        "title": "B",
        "goal": "g",
        "acceptance": [],
        "passes": false,
        "attempts": 2,
        "max_attempts": 3,
        "children": []
      }
    ]
  }
}
`;

  it("writes keys in schema order, two-space indent, \\n line ends, one trailing newline, children sorted (exact bytes)", () => {
    const input = {
      root: {
        children: [
          { max_attempts: 3, attempts: 2, passes: false, acceptance: [], goal: "g", title: "B", order: 1, id: "b", children: [] },
          { children: [], id: "a", passes: true, order: 0, title: "A", goal: "", acceptance: [], attempts: 0, max_attempts: 2 },
        ],
        passes: false,
        id: "root",
        title: "Root",
        max_attempts: 3,
        acceptance: ["tests pass"],
        attempts: 1,
        order: 0,
        goal: "Ship it",
      },
      version: 1,
    } as unknown as TaskTree;
    expect(serializeTree(input)).toBe(expected);
  });

  it("two serializations of the same tree given with shuffled keys and children are byte-identical", () => {
    const first = `{"version":1,"root":{"id":"root","order":0,"title":"Root","goal":"Ship it","acceptance":["tests pass"],"passes":false,"attempts":1,"max_attempts":3,"children":[
      {"id":"a","order":0,"title":"A","goal":"","acceptance":[],"passes":true,"attempts":0,"max_attempts":2,"children":[]},
      {"id":"b","order":1,"title":"B","goal":"g","acceptance":[],"passes":false,"attempts":2,"max_attempts":3,"children":[]}]}}`;
    const second = `{"root":{"children":[
      {"children":[],"max_attempts":3,"attempts":2,"passes":false,"acceptance":[],"goal":"g","title":"B","order":1,"id":"b"},
      {"title":"A","id":"a","children":[],"order":0,"passes":true,"max_attempts":2,"goal":"","attempts":0,"acceptance":[]}],
      "max_attempts":3,"passes":false,"attempts":1,"acceptance":["tests pass"],"goal":"Ship it","title":"Root","order":0,"id":"root"},"version":1}`;
    const one = serializeTree(JSON.parse(first) as TaskTree);
    const two = serializeTree(JSON.parse(second) as TaskTree);
    expect(two).toBe(one);
    expect(one).toBe(expected);
    expect(treeFingerprint(JSON.parse(second) as TaskTree)).toBe(treeFingerprint(JSON.parse(first) as TaskTree));
  });

  it('children sort by (order ASC, id ASC) with order ties broken by UTF-16 code units, not locale ("B" < "a", "Z" < "_")', () => {
    const ids = ["a_", "aZ", "B", "a", "A", "a-", "a.", "a0", "10", "9"];
    const t = tree(node("root", { children: [...ids.map((id) => node(id, { order: 5 })), node("z", { order: -1 }), node("Y", { order: 6 })] }));
    const written = JSON.parse(serializeTree(t)) as TaskTree;
    expect(written.root.children.map((child) => child.id)).toEqual(["z", "10", "9", "A", "B", "a", "a-", "a.", "a0", "aZ", "a_", "Y"]);
    // A locale comparison would order these the other way round; the runner must not.
    expect("a".localeCompare("B")).toBeLessThan(0);
    expect(compareSiblings(node("B"), node("a"))).toBeLessThan(0);
    expect(compareSiblings(node("aZ"), node("a_"))).toBeLessThan(0);
    expect(compareSiblings(node("a", { order: 1 }), node("B", { order: 2 }))).toBeLessThan(0);
    expect(compareSiblings(node("x"), node("x"))).toBe(0);
  });

  it("serialization does not touch its input (children stay in their stored order)", () => {
    const t = tree(node("root", { children: [node("b", { order: 1 }), node("a")] }));
    serializeTree(t);
    expect(t.root.children.map((child) => child.id)).toEqual(["b", "a"]);
  });

  it("canonicalJson is RFC 8785: sorted keys, no whitespace, ES number form", () => {
    expect(canonicalJson({ b: 1, a: [1, "x", { d: true, c: null }] })).toBe('{"a":[1,"x",{"c":null,"d":true}],"b":1}');
    expect(canonicalJson(1e21)).toBe("1e+21");
    expect(canonicalJson({ "\u00e9": 1, e: 2 })).toBe('{"e":2,"\u00e9":1}');
    expect(() => canonicalJson(undefined)).toThrow(TypeError);
  });

  it("treeFingerprint is a sha256 hex digest that changes when any field changes", () => {
    const t = tree(node("root", { children: [node("a")] }));
    const fingerprint = treeFingerprint(t);
    expect(fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(treeFingerprint(tree(node("root", { children: [node("a", { title: "other" })] })))).not.toBe(fingerprint);
    expect(treeFingerprint(tree(node("root", { children: [node("a", { attempts: 1 })] })))).not.toBe(fingerprint);
  });
});

describe("the tree model (src/core/tree/tree.ts)", () => {
  const t = tree(node("root", { children: [node("b", { order: 1, children: [node("b1")] }), node("a")] }));

  it("walkTree visits in pre-order, stored child order, with JSON paths and depths", () => {
    expect([...walkTree(t)].map(({ node: n, parent, jsonPath, depth }) => [n.id, parent?.id, jsonPath, depth])).toEqual([
      ["root", undefined, "$.root", 0],
      ["b", "root", "$.root.children[0]", 1],
      ["b1", "b", "$.root.children[0].children[0]", 2],
      ["a", "root", "$.root.children[1]", 1],
    ]);
  });

  it("orderedChildren sorts without touching the node, and returns the stored array when already sorted", () => {
    expect(orderedChildren(t.root).map((child) => child.id)).toEqual(["a", "b"]);
    expect(t.root.children.map((child) => child.id)).toEqual(["b", "a"]);
    const sorted = node("p", { children: [node("a"), node("b")] });
    expect(orderedChildren(sorted)).toBe(sorted.children);
  });

  it("indexById, countNodes and sortedCopy (a deep copy, sorted)", () => {
    expect([...indexById(t).keys()].sort()).toEqual(["a", "b", "b1", "root"]);
    expect(indexById(t).get("b1")?.jsonPath).toBe("$.root.children[0].children[0]");
    expect(countNodes(t)).toBe(4);
    const copy = sortedCopy(t);
    expect(copy.root.children.map((child) => child.id)).toEqual(["a", "b"]);
    copy.root.children[1]!.children[0]!.title = "changed";
    expect(t.root.children[0]!.children[0]!.title).toBe("Title of b1");
  });

  it("walking and selecting a 100,000-level chain costs no stack (iterative)", () => {
    const deep = chain(100_000);
    expect(countNodes(deep)).toBe(100_000);
    const selection = selectLeftmostOpenLeaf(deep);
    expect(selection.kind === "leaf" && selection.leaf.id).toBe("n99999");
    expect(selection.kind === "leaf" && selection.path.length).toBe(100_000);
  });
});

describe("seed 001 §4.2 deterministic selection", () => {
  it("picks the leftmost open leaf depth-first over siblings in (order, id) order, with its path from the root", () => {
    const t = tree(
      node("root", {
        children: [
          node("c", { order: 2 }),
          node("b", { order: 1, children: [node("b2", { order: 1 }), node("b1", { order: 1 }), node("b0", { order: 0, passes: true })] }),
          node("a", { order: 0, passes: true }),
        ],
      }),
    );
    const selection = selectLeftmostOpenLeaf(t);
    expect(selection.kind).toBe("leaf");
    if (selection.kind !== "leaf") return;
    expect(selection.leaf.id).toBe("b1");
    expect(selection.path.map((n) => n.id)).toEqual(["root", "b", "b1"]);
    expect(selection.stuck).toBe(false);
  });

  it("a stuck leaf (attempts = max_attempts) is still selected, marked stuck", () => {
    const selection = selectLeftmostOpenLeaf(
      tree(node("root", { children: [node("a", { attempts: 3, max_attempts: 3 }), node("b", { order: 1 })] })),
    );
    expect(selection).toMatchObject({ kind: "leaf", leaf: { id: "a" }, stuck: true });
  });

  it('"complete" once the root passes', () => {
    expect(selectLeftmostOpenLeaf(tree(node("root", { passes: true, children: [node("a", { passes: true })] })))).toEqual({ kind: "complete" });
  });

  it("a root that is open although every leaf passes (passes not derived) is an error, not a silent pick", () => {
    expect(() => selectLeftmostOpenLeaf(tree(node("root", { children: [node("a", { passes: true })] })))).toThrow(
      /passes disagrees with its children/,
    );
  });
});

describe("CONTRACT §7 classification from the changed paths", () => {
  it.each([
    { paths: [], kind: "decompose" },
    { paths: [".runner/state/tree.json"], kind: "decompose" },
    { paths: [".runner/state/tree.json", ".runner/state/assumptions.md", ".runner/nodes/a/context.md"], kind: "decompose" },
    { paths: [".runner/state/tree.json", "src/index.ts"], kind: "execute" },
    { paths: ["README.md"], kind: "execute" },
    { paths: [".runnerx/file"], kind: "execute" },
    { paths: ["docs/.runner/state/tree.json"], kind: "execute" },
  ] as const)("EXECUTE if any path lies outside .runner/, else DECOMPOSE: $paths → $kind", ({ paths, kind }) => {
    expect(classifyChangedPaths(paths)).toBe(kind);
  });

  it("isRunnerPath covers .runner and everything under it, nothing else", () => {
    expect(isRunnerPath(".runner")).toBe(true);
    expect(isRunnerPath(".runner/x")).toBe(true);
    expect(isRunnerPath(".runner-old/x")).toBe(false);
    expect(isRunnerPath("a/.runner/x")).toBe(false);
  });
});

describe("tree invariants: every problem with its JSON path", () => {
  it("duplicate id, wrong type, extra key and attempts > max_attempts are reported together, each at its path", () => {
    const data = {
      version: 1,
      root: {
        ...node("root"),
        extra: true,
        children: [{ ...node("a"), order: "1" }, node("b", { order: 1, children: [node("a"), node("c", { attempts: 4, max_attempts: 3 })] })],
      },
    };
    const { tree: accepted, problems } = checkTreeShape(data);
    expect(accepted).toBeUndefined();
    expect(problems).toHaveLength(4);
    expect(problems).toEqual(
      expect.arrayContaining([
        { path: "$.root.extra", message: 'unexpected key "extra"; remove it (extra keys are not allowed)' },
        { path: "$.root.children[0].order", message: 'must be an integer, not the string "1"' },
        {
          path: "$.root.children[1].children[0].id",
          message: expect.stringMatching(/^duplicate id "a" \(also used at \$\.root\.children\[0\]\.id\)/),
        },
        { path: "$.root.children[1].children[1].attempts", message: "attempts 4 is more than max_attempts 3" },
      ]),
    );
  });

  it("a valid tree is accepted and returned", () => {
    const t = tree(node("root", { children: [node("a", { attempts: 3, max_attempts: 3 })] }));
    expect(checkTreeShape(t)).toEqual({ tree: t, problems: [] });
  });

  it("schema messages name the key: bad id, missing key, wrong version, empty title", () => {
    const { title: _title, ...untitled } = node("b");
    const result = validateTreeSchema({ version: 2, root: { ...node("bad id!"), children: [untitled, node("c", { title: "" })] } });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems).toEqual(
      expect.arrayContaining([
        { path: "$.version", message: "must be 1, not 2" },
        { path: "$.root.id", message: expect.stringMatching(/^"bad id!" is not a valid id: an id is 1 to 128 letters/) },
        { path: "$.root.children[0]", message: 'missing key "title"' },
        { path: "$.root.children[1].title", message: "must not be empty" },
      ]),
    );
  });

  it(`a tree nested deeper than MAX_TREE_DEPTH (${MAX_TREE_DEPTH}) levels is refused; exactly ${MAX_TREE_DEPTH} levels is accepted`, () => {
    expect(checkTreeShape(chain(MAX_TREE_DEPTH)).problems).toEqual([]);
    const { tree: accepted, problems } = checkTreeShape(chain(MAX_TREE_DEPTH + 1));
    expect(accepted).toBeUndefined();
    expect(problems).toEqual([
      {
        path: "$.root",
        message: `the tree is nested deeper than ${MAX_TREE_DEPTH} levels (at node "n${MAX_TREE_DEPTH}"); flatten the plan`,
      },
    ]);
  });

  it("a 100,000-level tree is refused without a stack overflow", () => {
    const { problems } = checkTreeShape(chain(100_000));
    expect(problems).toHaveLength(1);
    expect(problems[0]!.message).toContain(`nested deeper than ${MAX_TREE_DEPTH} levels`);
  });

  it("deep nesting outside the nodes (in acceptance) is refused at $ without a stack overflow", () => {
    let deep: unknown = "x";
    for (let i = 0; i < 100_000; i++) deep = [deep];
    const { problems } = checkTreeShape({ version: 1, root: { ...node("root"), acceptance: [deep] } });
    expect(problems).toEqual([{ path: "$", message: `the document is nested deeper than ${MAX_TREE_DEPTH} levels; flatten the plan` }]);
    expect(nestingExceeds([[[1]]], 1)).toBe(true); // the innermost array sits at depth 2
    expect(nestingExceeds([[[1]]], 2)).toBe(false);
  });

  it("derived passes at rest: a parent passed with an open child, or open with all children passed, is reported at its passes", () => {
    const t = tree(
      node("root", {
        passes: true,
        children: [node("p", { children: [node("x", { passes: true })] }), node("q", { order: 1, children: [node("y")] })],
      }),
    );
    expect(checkDerivedPasses(t)).toEqual([
      { path: "$.root.passes", message: "is true although a child has not passed; only the runner sets passes" },
      {
        path: "$.root.children[0].passes",
        message:
          "is false although every child passes (a child was removed by hand?); set it to true and commit: a parent passes when all its children do",
      },
    ]);
    expect(checkDerivedPasses(tree(node("root", { passes: true, children: [node("a", { passes: true })] })))).toEqual([]);
  });
});

describe("seed 001 §4.4 passed-node immutability (RFC 8785 comparison)", () => {
  /** root → [a ✓ → [a1 ✓], b]. */
  const previous = () =>
    tree(node("root", { children: [node("a", { passes: true, children: [node("a1", { passes: true })] }), node("b", { order: 1 })] }));

  it("an unchanged passed node, given with other key and children order, is no problem; open nodes may change", () => {
    const next = previous();
    next.root.children.reverse();
    next.root.children[0]!.title = "b edited";
    next.root.children[0]!.children.push(node("b1"));
    expect(checkPassedImmutable(previous(), next)).toEqual([]);
  });

  it("a changed passed node is reported at its path, naming the changed fields", () => {
    const next = previous();
    next.root.children[0]!.title = "edited";
    expect(checkPassedImmutable(previous(), next)).toEqual([
      { path: "$.root.children[0]", message: 'passed node "a" was changed (title); passed nodes are immutable, add follow-up work as a new node' },
    ]);
  });

  it("a change deep inside a passed subtree is reported once, at the topmost passed node", () => {
    const next = previous();
    next.root.children[0]!.children[0]!.acceptance = ["new"];
    const problems = checkPassedImmutable(previous(), next);
    expect(problems).toHaveLength(1);
    expect(problems[0]!.message).toContain('passed node "a" was changed (children)');
  });

  it("a removed passed node is reported", () => {
    const next = previous();
    next.root.children.shift();
    expect(checkPassedImmutable(previous(), next)).toEqual([
      { path: "$", message: 'passed node "a" was removed; passed nodes are immutable, put it back as it was' },
    ]);
  });

  it("a moved passed node (other parent) is reported at its new path", () => {
    const next = previous();
    const a = next.root.children.shift()!;
    next.root.children[0]!.children.push(a);
    expect(checkPassedImmutable(previous(), next)).toEqual([
      { path: "$.root.children[0].children[0]", message: 'passed node "a" was moved from parent "root" to "b"; passed nodes are immutable' },
    ]);
  });

  // Problems point where the user sees the node: its position in the file, not in sorted order.
  it("the JSON path of a changed passed node points at its position in the file, not in sorted order", () => {
    const next = previous();
    next.root.children.reverse(); // stored as [b, a]: a file is not always sorted
    next.root.children[1]!.goal = "edited";
    expect(checkPassedImmutable(previous(), next)).toEqual([
      { path: "$.root.children[1]", message: 'passed node "a" was changed (goal); passed nodes are immutable, add follow-up work as a new node' },
    ]);
  });
});

describe("CONTRACT §5 configuration: schema messages with the key path, defaults", () => {
  it("unknown keys and wrong types are errors reported with their key path", () => {
    const result = parseConfig(
      '[executor]\nkind = "command"\ncommand = ["bash", "agent.sh"]\nbogus = 1\n\n[limits]\nmax_iterations = "5"\n\n[extra]\n',
    );
    expect(result).toEqual({
      ok: false,
      problems: expect.arrayContaining([
        { path: "$.executor.bogus", message: 'unexpected key "bogus"; remove it (extra keys are not allowed)' },
        { path: "$.limits.max_iterations", message: 'must be an integer, not the string "5"' },
        { path: "$.extra", message: 'unexpected key "extra"; remove it (extra keys are not allowed)' },
      ]),
    });
    expect(!result.ok && result.problems).toHaveLength(3);
  });

  it.each([
    {
      config: { executor: { kind: "gpt" } },
      path: "$.executor.kind",
      message: 'must be one of "command", "codex", "claude", "gemini", "qwen", "opencode", "copilot", "pi", "cline", "demo", not "gpt"',
    },
    { config: { limits: { output_cap_bytes: 10 } }, path: "$.limits.output_cap_bytes", message: "must be at least 1024, not 10" },
    {
      config: { limits: { iteration_timeout_seconds: 1.5 } },
      path: "$.limits.iteration_timeout_seconds",
      message: "must be an integer, not the number 1.5",
    },
    {
      config: { executor: { kind: "codex", config_overrides: ["novalue"] } },
      path: "$.executor.config_overrides[0]",
      message: '"novalue" must look like "key=value"',
    },
    { config: { executor: { kind: "command", command: [] } }, path: "$.executor.command", message: "must have at least 1 item(s)" },
    { config: { executor: { kind: "command", command: [""] } }, path: "$.executor.command[0]", message: "must not be empty" },
    { config: { guard: { command: "just ci" } }, path: "$.guard.command", message: 'must be an array, not the string "just ci"' },
  ])("validateConfigSchema: $path $message", ({ config, path, message }) => {
    expect(validateConfigSchema(config)).toEqual({ ok: false, problems: [{ path, message }] });
  });

  it("invalid TOML is one problem at $ with its line", () => {
    const result = parseConfig('[executor]\nkind = "command\n');
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems).toHaveLength(1);
    expect(result.problems[0]!.path).toBe("$");
    expect(result.problems[0]!.message).toMatch(/^is not valid TOML \(line 2, column \d+: /);
  });

  it("defaults fill every key not given; .runner/state/config.toml is always protected", () => {
    const result = resolveConfig({ executor: { kind: "codex" } });
    expect(result).toEqual({
      ok: true,
      config: {
        executor: { kind: "codex" },
        guard: {
          command: ["just", "ci"],
          protectedPaths: [...ALWAYS_PROTECTED, "justfile", "Justfile", "JUSTFILE", ".justfile"],
          setup: undefined,
          isolation: "in-place",
          testPatterns: [...DEFAULT_TEST_PATTERNS],
        },
        limits: DEFAULT_LIMITS,
        hooks: { onIteration: undefined, onRunEnd: undefined, onStuck: undefined, timeoutSeconds: 30, bell: false },
      },
    });
    expect(ALWAYS_PROTECTED).toContain(".runner/state/config.toml");
    expect(ALWAYS_PROTECTED).toContain(".runner/nodes/*/policy.json");
    expect(DEFAULT_LIMITS).toEqual({
      iterationTimeoutSeconds: 1800,
      maxIterations: 50,
      outputCapBytes: 1_048_576,
      maxRepairAttempts: 3,
      maxStalledIterations: 3,
      maxConsecutiveRunnerErrors: 3,
      retryBackoffSeconds: 30,
      maxLimitWaitSeconds: 21_600,
      maxRunSeconds: undefined,
      maxRunTokens: undefined,
      maxRunCostUsd: undefined,
    });
  });

  it("given limits and guard are used; an empty protected_paths still protects the config", () => {
    const result = parseConfig(
      '[executor]\nkind = "command"\ncommand = ["bash", "agent.sh"]\n[guard]\ncommand = ["npm", "test"]\nprotected_paths = []\n[limits]\niteration_timeout_seconds = 60\nmax_iterations = 7\noutput_cap_bytes = 2048\n',
    );
    expect(result).toMatchObject({
      ok: true,
      config: {
        executor: { kind: "command", command: ["bash", "agent.sh"] },
        guard: { command: ["npm", "test"], protectedPaths: ALWAYS_PROTECTED },
        limits: { iterationTimeoutSeconds: 60, maxIterations: 7, outputCapBytes: 2048, maxRepairAttempts: 3 },
      },
    });
  });

  it("the guard's own script named in its argv is protected by default", () => {
    const result = resolveConfig({ executor: { kind: "demo" }, guard: { command: ["bash", "./ci.sh"] } });
    expect(result.ok && result.config.guard.protectedPaths).toEqual([...ALWAYS_PROTECTED, "justfile", "Justfile", "JUSTFILE", ".justfile", "ci.sh"]);
  });

  it('executor.command is required for kind = "command" (also the default kind)', () => {
    const problem = { path: "$.executor.command", message: expect.stringContaining('is required when kind = "command"') };
    expect(resolveConfig({ executor: { kind: "command" } })).toEqual({ ok: false, problems: [problem] });
    expect(resolveConfig({})).toEqual({ ok: false, problems: [problem] });
  });

  it("keys of another executor kind are refused with their path", () => {
    expect(resolveConfig({ executor: { kind: "codex", command: ["x"], permission_mode: "plan" } })).toEqual({
      ok: false,
      problems: [
        { path: "$.executor.command", message: 'does not apply to kind = "codex"; remove it or change the kind' },
        { path: "$.executor.permission_mode", message: 'does not apply to kind = "codex"; remove it or change the kind' },
      ],
    });
  });

  it("protected_paths entries follow the path rules, each reported at its index", () => {
    const result = resolveConfig({ executor: { kind: "demo" }, guard: { protected_paths: ["justfile", "../x", "/etc/passwd"] } });
    expect(result).toEqual({
      ok: false,
      problems: [
        { path: "$.guard.protected_paths[1]", message: expect.stringContaining("has a .. segment") },
        { path: "$.guard.protected_paths[2]", message: expect.stringContaining("is absolute") },
      ],
    });
  });
});

describe("agent output and node policy schemas", () => {
  it("agent output: status is done, retry or decomposed; summary required; no other keys", () => {
    expect(validateAgentOutputSchema({ status: "done", summary: "ok" })).toEqual({ ok: true, value: { status: "done", summary: "ok" } });
    const result = validateAgentOutputSchema({ status: "finished", extra: 1 });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems).toEqual(
      expect.arrayContaining([
        { path: "$", message: 'missing key "summary"' },
        { path: "$.extra", message: 'unexpected key "extra"; remove it (extra keys are not allowed)' },
        { path: "$.status", message: 'must be one of "done", "retry", "decomposed", not "finished"' },
      ]),
    );
  });

  it("policy: allowed_write_paths is required and holds strings", () => {
    expect(validatePolicySchema({})).toEqual({ ok: false, problems: [{ path: "$", message: 'missing key "allowed_write_paths"' }] });
    expect(validatePolicySchema({ allowed_write_paths: [1] })).toEqual({
      ok: false,
      problems: [{ path: "$.allowed_write_paths[0]", message: "must be a string, not number 1" }],
    });
  });
});

describe("CONTRACT §9 feedback truncation (first 2500, \\n...\\n, last 1000 over 4000 characters)", () => {
  const text = (length: number) => Array.from({ length }, (_, i) => String.fromCharCode(65 + (i % 26))).join("");

  it("4000 characters are kept unchanged", () => {
    const s = text(4000);
    expect(truncateForAgent(s)).toBe(s);
  });

  it("4001 characters become 2500 + 5 + 1000 = 3505", () => {
    const s = text(4001);
    const out = truncateForAgent(s);
    expect(out).toBe(`${s.slice(0, 2500)}\n...\n${s.slice(3001)}`);
    expect(out).toHaveLength(3505);
    expect(out.slice(2500, 2505)).toBe("\n...\n");
  });

  it("never cuts a surrogate pair in half at either cut", () => {
    const s = `${"x".repeat(2499)}😀${"y".repeat(2000)}😀${"z".repeat(999)}`;
    const out = truncateForAgent(s);
    expect(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(out)).toBe(false); // no lone surrogate
    expect(out.startsWith(`${"x".repeat(2499)}\n...\n`)).toBe(true);
    expect(out.endsWith(`\n...\n${"z".repeat(999)}`)).toBe(true);
  });
});

describe("CONTRACT §9 redaction of secret environment values", () => {
  const env = {
    GITHUB_TOKEN: "ghp_abcdef123456",
    my_secret: "s3cr3t-value",
    Api_Key: "kkkk",
    DB_PASSWORD: "hunter22",
    SHORT_TOKEN: "abc",
    PATH: "/usr/bin:/bin",
    HOME: "/home/user",
    UNSET_KEY: undefined,
  };

  it("values of variables whose names contain TOKEN, SECRET, KEY or PASSWORD (any case), 4 characters or more, longest first", () => {
    expect(secretValues(env)).toEqual(["ghp_abcdef123456", "s3cr3t-value", "hunter22", "kkkk"]);
  });

  it("every occurrence is replaced by ***; short values and other variables stay", () => {
    const text = "token ghp_abcdef123456 and again ghp_abcdef123456; pw hunter22; key kkkk; abc at /usr/bin:/bin";
    expect(redactSecrets(text, secretValues(env))).toBe("token *** and again ***; pw ***; key ***; abc at /usr/bin:/bin");
  });

  it("a secret containing another secret is replaced whole", () => {
    const secrets = secretValues({ A_KEY: "abcd", B_KEY: "abcdefgh" });
    expect(redactSecrets("x abcdefgh y abcd", secrets)).toBe("x *** y ***");
  });
});

describe("CONTRACT §9 path rules for allowed_write_paths and protected_paths", () => {
  it.each([
    ["", "an empty path is not allowed"],
    ["/etc/passwd", "is absolute"],
    ["C:/x", "is absolute"],
    ["\\share", "is absolute"],
    ["src\\a.ts", "uses a backslash"],
    ["../x", "has a .. segment"],
    ["src/../../x", "has a .. segment"],
    ["./src/", "has an empty or . segment"],
    ["src//a.ts", "has an empty or . segment"],
    ["~/x", "starts with ~"],
  ])("%j is rejected (%s)", (entry, reason) => {
    expect(pathEntryProblem(entry)).toContain(reason);
  });

  it.each(["src/", "README.md", "a/b/c.txt", ".github/workflows/", "...", "a..b"])("%j is a valid repository-relative entry", (entry) => {
    expect(pathEntryProblem(entry)).toBeUndefined();
  });

  it("an entry ending in / covers the folder's files; any other entry exactly one file", () => {
    expect(pathMatchesEntry("src/a.ts", "src/")).toBe(true);
    expect(pathMatchesEntry("src/deep/b.ts", "src/")).toBe(true);
    expect(pathMatchesEntry("srcx/a.ts", "src/")).toBe(false);
    expect(pathMatchesEntry("src", "src/")).toBe(false);
    expect(pathMatchesEntry("README.md", "README.md")).toBe(true);
    expect(pathMatchesEntry("README.md.bak", "README.md")).toBe(false);
    expect(pathMatchesEntry("docs/README.md", "README.md")).toBe(false);
  });

  it("pathsOutside and pathsInside split the changed paths, each sorted", () => {
    const changed = ["src/z.ts", "justfile", "README.md", "src/a.ts", "docs/x.md"];
    expect(pathsOutside(changed, ["src/", "README.md"])).toEqual(["docs/x.md", "justfile"]);
    expect(pathsInside(changed, ["src/", "README.md"])).toEqual(["README.md", "src/a.ts", "src/z.ts"]);
    expect(pathsOutside(changed, [])).toEqual(["README.md", "docs/x.md", "justfile", "src/a.ts", "src/z.ts"]);
  });
});

describe("CONTRACT §4/§7 run ids and loop commit subjects", () => {
  it("formats the commit subjects exactly", () => {
    expect(formatCommitSubject({ kind: "execute", runId: "r1", iteration: 1, nodeId: "a", guard: "pass" })).toBe(
      "chore(loop): run r1 iter 1 node a execute guard=pass",
    );
    expect(formatCommitSubject({ kind: "decompose", runId: "20260101-120000", iteration: 12, nodeId: "root", guard: "skipped" })).toBe(
      "chore(loop): run 20260101-120000 iter 12 node root decompose guard=skipped",
    );
    expect(formatCommitSubject({ kind: "repair", runId: "r1", iteration: 3 })).toBe("chore(loop): run r1 iter 3 repair guard=skipped");
  });

  it("parses what it formats (round trip)", () => {
    for (const subject of [
      { kind: "execute", runId: "r1", iteration: 1, nodeId: "a", guard: "pass" },
      { kind: "decompose", runId: "x.y_z-1", iteration: 40, nodeId: "A.b-c_d", guard: "skipped" },
      { kind: "execute", runId: "r1", iteration: 2, nodeId: "a", guard: "fail" },
      { kind: "repair", runId: "r1", iteration: 9 },
    ] as const) {
      expect(parseCommitSubject(formatCommitSubject(subject))).toEqual(subject);
    }
  });

  it.each([
    "chore(loop): run r1 iter 0 node a execute guard=pass",
    "chore(loop): run r1 iter 1 node a execute guard=maybe",
    "chore(loop): run r1 iter 1 node a execute guard=pass trailing",
    "chore(loop): run r/1 iter 1 node a execute guard=pass",
    "chore(loop): run r1 iter 1 repair guard=pass",
    "chore(loop): run r1 iter 1 node -a execute guard=pass",
    "feat: something else",
  ])("rejects %j", (line) => {
    expect(parseCommitSubject(line)).toBeUndefined();
  });

  it("run ids match ^[A-Za-z0-9._-]{1,64}$ and come from runner/<id> branches", () => {
    expect(runIdProblem("20260101-120000")).toBeUndefined();
    expect(runIdProblem("a".repeat(64))).toBeUndefined();
    expect(runIdProblem("a".repeat(65))).toContain("is not valid");
    expect(runIdProblem("")).toContain("is not valid");
    expect(runIdProblem("a/b")).toContain("is not valid");
    expect(runIdFromBranch("runner/r1")).toBe("r1");
    expect(runIdFromBranch("runner/a/b")).toBeUndefined();
    expect(runIdFromBranch("main")).toBeUndefined();
    expect(runIdFromBranch(undefined)).toBeUndefined();
  });

  it("loopSubjectPattern matches this run's loop commits only (dots escaped)", () => {
    const pattern = new RegExp(loopSubjectPattern("r.1"));
    expect(pattern.test("chore(loop): run r.1 iter 3 node a execute guard=pass")).toBe(true);
    expect(pattern.test("chore(loop): run r.1 iter 4 repair guard=skipped")).toBe(true);
    expect(pattern.test("chore(loop): run rx1 iter 3 node a execute guard=pass")).toBe(false);
    expect(pattern.test("chore(loop): run r.10 iter 3 node a execute guard=pass")).toBe(false);
  });
});

describe("JSON paths of problems", () => {
  it.each([
    ["", "$"],
    ["/root/children/0/id", "$.root.children[0].id"],
    ["/executor/config_overrides/12", "$.executor.config_overrides[12]"],
    ["/a~1b/c~0d", '$["a/b"]["c~d"]'],
    ["/x/01", '$.x["01"]'],
    ["/has space", '$["has space"]'],
    ["/$ok/_x", "$.$ok._x"],
  ])("pointerToPath(%j) is %s", (pointer, path) => {
    expect(pointerToPath(pointer)).toBe(path);
  });

  it("childPath and formatProblem", () => {
    expect(childPath("$.root", "id")).toBe("$.root.id");
    expect(childPath("$.root", 3)).toBe("$.root[3]");
    expect(childPath("$", "1st")).toBe('$["1st"]');
    expect(formatProblem({ path: "$.root", message: 'missing key "title"' })).toBe('$.root: missing key "title"');
  });
});

describe("generated schema code", () => {
  it("scripts/gen-schemas.mjs --check exits 0: the generated types and validators match schemas/*/v1.schema.json", async () => {
    const result = await execa("node", ["scripts/gen-schemas.mjs", "--check"], { cwd: PROJECT_ROOT, reject: false });
    expect(result.stderr).toBe("");
    expect(result.exitCode).toBe(0);
  });

  it("schemas/agent_output/v1.agent.json is the agent output schema without $schema and $id (Claude refuses them), generated from it", () => {
    const source = JSON.parse(readFileSync(path.join(PROJECT_ROOT, "schemas/agent_output/v1.schema.json"), "utf8")) as Record<string, unknown>;
    const agent = JSON.parse(readFileSync(path.join(PROJECT_ROOT, "schemas/agent_output/v1.agent.json"), "utf8")) as Record<string, unknown>;
    const { $schema: _dialect, $id: _address, ...rest } = source;
    expect(agent).toEqual(rest);
    expect(Object.keys(agent)).not.toContain("$schema");
    expect(Object.keys(agent)).not.toContain("$id");
  });

  it("scripts/gen-schemas.mjs --check names a stale v1.agent.json", async () => {
    // A copy of the script and its inputs inside node_modules (so its imports resolve), the agent schema edited by hand.
    const copy = path.join(PROJECT_ROOT, "node_modules", ".cache", `runner-gen-check-${process.pid}`);
    rmSync(copy, { recursive: true, force: true });
    try {
      for (const dir of ["scripts", "schemas", "src/schemas"]) cpSync(path.join(PROJECT_ROOT, dir), path.join(copy, dir), { recursive: true });
      const fresh = await execa("node", [path.join(copy, "scripts/gen-schemas.mjs"), "--check"], { reject: false });
      expect(fresh.stderr).toBe("");
      expect(fresh.exitCode).toBe(0);
      writeFileSync(path.join(copy, "schemas/agent_output/v1.agent.json"), readFileSync(path.join(copy, "schemas/agent_output/v1.schema.json")));
      const stale = await execa("node", [path.join(copy, "scripts/gen-schemas.mjs"), "--check"], { reject: false });
      expect(stale.exitCode).toBe(1);
      expect(stale.stderr).toContain("schemas/agent_output/v1.agent.json out of date");
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });
});
