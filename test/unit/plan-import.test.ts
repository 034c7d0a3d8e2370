// The plan importer (issue 30; issue 28 items 6–8 for `init --plan`; issue 34 item 5), pure: every
// shape of plan people have — spec-kit's and Kiro's tasks.md, plain half-done checklists, every
// task-master and ralph shape — read from the example files in test/fixtures/plans/ (written for
// these tests), and every refusal one sentence naming each offending item.
import { readFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { checkTreeShape, MAX_TREE_DEPTH } from "../../src/core/tree/invariants.js";
import { idFromTitle, PlanEditError } from "../../src/core/edit/plan-edit.js";
import { importPlan, type ImportOptions } from "../../src/core/plan/plan-import.js";
import type { TaskNode, TaskTree } from "../../src/core/tree/tree.js";

const FIXTURES = path.resolve("test/fixtures/plans");
const fixture = (name: string) => readFileSync(path.join(FIXTURES, name), "utf8");

function load(name: string, options: Partial<ImportOptions> = {}, content: Uint8Array | string = fixture(name)) {
  return importPlan(path.basename(name), content, { maxAttempts: 3, ...options });
}

/** The refusal's sentence (the importer's own words, before the CLI adds "; nothing was written."). */
function refusal(make: () => unknown): string {
  try {
    make();
  } catch (error) {
    if (error instanceof PlanEditError) return error.message;
    throw error;
  }
  throw new Error("not refused");
}

function byId(tree: TaskTree): Map<string, TaskNode> {
  const map = new Map<string, TaskNode>();
  const stack = [tree.root];
  while (stack.length > 0) {
    const node = stack.pop()!;
    map.set(node.id, node);
    stack.push(...node.children);
  }
  return map;
}

const childIds = (node: TaskNode | undefined) => (node?.children ?? []).map((child) => child.id);
const leaves = (tree: TaskTree) => [...byId(tree).values()].filter((node) => node.children.length === 0).map((node) => node.id);

type Loaded = ReturnType<typeof load>;

describe("spec-kit tasks.md", () => {
  let plan: Loaded;
  let nodes: Map<string, TaskNode>;
  beforeAll(() => {
    plan = load("speckit-tasks.md");
    nodes = byId(plan.tree);
  });

  it("takes the spec's title as the root, not a `# comment` inside a code block", () => {
    expect(plan.tree.root.title).toBe("Tasks: Bookmark Export");
    expect(plan.tree.root.goal).toContain("# Launch the tests of User Story 1 together:");
  });

  it("makes phases of the sections with items and context of the sections without", () => {
    expect(childIds(plan.tree.root)).toEqual([
      "phase-1-setup-shared-infrastructure",
      "phase-2-foundational-blocking-prerequisites",
      "phase-3-user-story-1-export-as-json-priority-p1",
      "phase-4-user-story-2-export-as-html-priority-p2",
    ]);
    const sections = [
      "## Format: `[ID] [P?] [Story] Description`",
      "## Path Conventions",
      "### Phase Dependencies",
      "## Parallel Example: User Story 1",
      "## Notes",
    ];
    for (const section of sections) expect(plan.tree.root.goal).toContain(section);
    // (in the order the file has them)
    const at = sections.map((section) => plan.tree.root.goal.indexOf(section));
    expect(at).toEqual([...at].sort((a, b) => a - b));
    expect(leaves(plan.tree).sort()).toEqual(["T001", "T002", "T003", "T004", "T005", "T006", "T007", "T008"]);
  });

  it("keeps T ids as node ids and the [P] / [US1] markers in the title", () => {
    expect(nodes.get("T002")!.title).toBe("[P] Configure the linter in .eslintrc.json");
    expect(nodes.get("T005")!.title).toBe("[P] [US1] Contract test for the JSON shape in tests/export-json.test.ts");
    expect(childIds(nodes.get("phase-3-user-story-1-export-as-json-priority-p1"))).toEqual([
      "tests-for-user-story-1",
      "implementation-for-user-story-1",
    ]);
  });

  it("makes each **Checkpoint** an acceptance criterion of its phase, not the goal of the item above", () => {
    expect(nodes.get("phase-2-foundational-blocking-prerequisites")!.acceptance).toEqual(["Bookmarks can be read — user stories can start"]);
    expect(nodes.get("phase-3-user-story-1-export-as-json-priority-p1")!.acceptance).toEqual(["User Story 1 works on its own"]);
    expect(nodes.get("T004")!.goal).toBe("");
    expect(nodes.get("T007")!.goal).toBe("");
    expect(nodes.get("phase-3-user-story-1-export-as-json-priority-p1")!.goal).toContain("**Independent Test**");
  });

  it("lists the checked items as finished, to be judged by the guard first", () => {
    expect(plan.finished).toEqual(["T001", "T002", "T003"]);
    expect(plan.tree.root.passes).toBe(false);
  });

  it("with --skip-done leaves them out, a phase with nothing left becoming context", () => {
    const skipped = load("speckit-tasks.md", { skipDone: true });
    expect(skipped.finished).toEqual([]);
    expect(skipped.done.map((item) => item.id)).toEqual(["T001", "T002", "T003"]);
    expect(childIds(skipped.tree.root)).toEqual([
      "phase-2-foundational-blocking-prerequisites",
      "phase-3-user-story-1-export-as-json-priority-p1",
      "phase-4-user-story-2-export-as-html-priority-p2",
    ]);
    expect(skipped.tree.root.goal).toContain("## Phase 1: Setup (Shared Infrastructure)");
  });
});

describe("Kiro tasks.md", () => {
  let plan: Loaded;
  let nodes: Map<string, TaskNode>;
  beforeAll(() => {
    plan = load("kiro-tasks.md");
    nodes = byId(plan.tree);
  });

  it("nests N.M under N. whatever its indentation, with the outline number as id", () => {
    expect(plan.tree.root.title).toBe("Implementation Plan");
    expect(childIds(plan.tree.root)).toEqual(["task-1", "task-2", "task-3", "task-12"]);
    expect(childIds(nodes.get("task-2"))).toEqual(["task-2.1", "task-2.2"]);
    expect(childIds(nodes.get("task-3"))).toEqual(["task-3.1", "task-3.2"]);
    expect(childIds(nodes.get("task-12"))).toEqual(["task-12.1"]);
    expect(nodes.get("task-12")!.title).toBe("Document the command line");
  });

  it("reads [-] as an open item and keeps _Requirements: …_ as context", () => {
    expect(nodes.get("task-2.2")!.title).toBe("Write the parser");
    expect(nodes.get("task-2.1")!.acceptance).toEqual(["Split the input into words and punctuation"]);
    expect(nodes.get("task-2.1")!.goal).toBe("_Requirements: 2.1, 2.2_");
    expect(nodes.get("task-12")!.acceptance).toEqual(["Every flag in the README"]);
    expect(nodes.get("task-12")!.goal).toBe("_Requirements: 4.1_");
    expect(nodes.get("task-3.2")!.goal).toContain("Optional in the plan");
    expect(plan.finished).toEqual(["task-1", "task-2.1"]);
  });
});

describe("a plain half-done checklist", () => {
  it("imports [x] and [X] as finished leaves, an open item with a finished child staying open", () => {
    const plan = load("half-done.md");
    expect(plan.finished).toEqual(["call-the-forecast-api", "print-the-temperature", "wind-speed"]);
    expect(leaves(plan.tree)).toHaveLength(5);
  });

  it("with --skip-done leaves them out and lists them", () => {
    const plan = load("half-done.md", { skipDone: true });
    expect(plan.done.map((item) => item.title)).toEqual(["Call the forecast API", "Print the temperature", "Wind speed"]);
    expect(leaves(plan.tree).sort()).toEqual(["cache-answers-for-ten-minutes", "wind-direction"]);
  });

  it("refuses a plan with everything finished under --skip-done, and imports it without", () => {
    const text = "# Done\n\n- [x] One\n- [x] Two\n";
    expect(refusal(() => load("all.md", { skipDone: true }, text))).toMatch(
      /^all\.md: every one of its 2 items is finished; import it without --skip-done/,
    );
    expect(load("all.md", {}, text).finished).toEqual(["one", "two"]);
  });
});

describe("task-master tasks.json", () => {
  it("reads a tagged file with an empty second tag, string ids, subtasks without status, done and completed", () => {
    const plan = load("tasks-tagged.json");
    const nodes = byId(plan.tree);
    expect(plan.tag).toBe("master");
    expect(childIds(plan.tree.root)).toEqual(["task-1", "task-2", "task-3", "task-4", "task-6"]);
    expect(childIds(nodes.get("task-2"))).toEqual(["task-2.1", "task-2.2"]);
    expect(plan.finished).toEqual(["task-1.1", "task-1.2", "task-2.1", "task-3"]);
    expect(nodes.get("task-2")!.goal).toBe("Keep notes in a file.\n\nOne JSON file per notebook.");
    expect(nodes.has("task-5")).toBe(false); // cancelled
  });

  it("with --skip-done drops the finished tasks and every dependency on them", () => {
    const plan = load("tasks-tagged.json", { skipDone: true });
    expect(childIds(plan.tree.root)).toEqual(["task-2", "task-4", "task-6"]);
    expect(childIds(byId(plan.tree).get("task-2"))).toEqual(["task-2.2"]);
    expect(plan.done.map((item) => item.id)).toEqual(["task-1", "task-2.1", "task-3"]);
  });

  it.each([
    ["tasks-tag-array.json", ["task-1", "task-2"], ["task-1"]],
    ["tasks-top-array.json", ["task-1", "task-2", "task-3"], ["task-1"]],
    ["tasks-versioned.json", ["task-1", "task-2"], ["task-1"]],
  ])("reads %s", (name, ids, finished) => {
    const plan = load(name);
    expect(childIds(plan.tree.root)).toEqual(ids);
    expect(plan.finished).toEqual(finished);
  });

  it("takes --tag, else the current tag, else master; several full tags and no choice is one sentence", () => {
    expect(refusal(() => load("tasks-two-tags.json"))).toBe(
      'tasks-two-tags.json has 2 tags with tasks ("backend", "frontend"); choose one with --tag NAME',
    );
    expect(load("tasks-two-tags.json", { tag: "frontend" }).tree.root.children[0]!.title).toBe("Show the server's health");
    expect(refusal(() => load("tasks-two-tags.json", { tag: "nope" }))).toMatch(/has no tag "nope"; its tags are "backend", "frontend"/);
    // An empty tag first is never chosen over a full one.
    const emptyFirst = JSON.stringify({ next: { tasks: [] }, work: { tasks: [{ id: 1, title: "Real work" }] } });
    expect(load("tasks.json", {}, emptyFirst).tag).toBe("work");
    expect(refusal(() => load("tasks.json", { tag: "next" }, emptyFirst))).toBe('tasks.json: the tag "next" has no tasks; give another --tag');
    const project = "taskmaster/.taskmaster/tasks/tasks.json";
    expect(load(project, { currentTag: "ui" }).tag).toBe("ui");
    expect(load(project).tag).toBe("master");
  });

  it('resolves "N.M" to task N\'s subtask M, and refuses in one sentence every dependency that names no task', () => {
    expect(refusal(() => load("tasks-bad-deps.json"))).toBe(
      'tasks-bad-deps.json: 3 dependencies name no task (task 2 on 9, task 2.1 on 1.4, task 3 on 12); fix or remove them (another task\'s subtask is "<task>.<subtask>")',
    );
  });

  it("names every task it cannot read, and every task on a cycle", () => {
    const bad = JSON.stringify({ tasks: [{ id: 1 }, { id: 2, title: "B" }, { id: 3, title: "" }, "x"] });
    expect(refusal(() => load("tasks.json", {}, bad))).toBe(
      "tasks.json: 3 tasks cannot be read (2 with no title, 1 with not an object: task 1, task 3, tasks[3]); fix them in the file",
    );
    const cycle = JSON.stringify({
      tasks: [
        { id: 1, title: "A", dependencies: [3] },
        { id: 2, title: "B", dependencies: [1] },
        { id: 3, title: "C", dependencies: [2] },
      ],
    });
    expect(refusal(() => load("tasks.json", {}, cycle))).toMatch(/^tasks\.json: the dependencies of 3 items form a cycle \(task 1, task 2, task 3\)/);
  });
});

describe("ralph prd.json", () => {
  it("orders stories by dependsOn, then priority, and marks passes: true finished", () => {
    const plan = load("prd-half-done.json");
    expect(plan.tree.root.title).toBe("Recipe Box");
    expect(childIds(plan.tree.root)).toEqual(["US-001", "US-002", "US-003", "US-004"]);
    expect(plan.finished).toEqual(["US-001", "US-002"]);
    expect(byId(plan.tree).get("US-003")!.goal).toBe("As a cook I can scale a recipe to N servings.\n\nNotes: Round to two decimals.");
  });

  it("reads `stories` and `dependencies` as well", () => {
    const plan = load("prd-stories.json");
    expect(childIds(plan.tree.root)).toEqual(["S1", "S2"]);
    expect(plan.finished).toEqual(["S1"]);
  });
});

describe("what is not a plan", () => {
  it("refuses JSON of neither format naming what its top level holds", () => {
    expect(refusal(() => load("not-a-plan.json"))).toMatch(
      /^not-a-plan\.json is JSON of neither plan format \(ralph's "userStories", task-master's "tasks" or tags\): its top level is an object with the keys "name", "version", "scripts", "dependencies", "keywords"; convert/,
    );
    expect(refusal(() => load("list.json", {}, "[1, 2, 3]"))).toMatch(/its top level is an array of 3 items \(number\)/);
  });

  it("refuses bytes that are not UTF-8 text, and text with control characters, in one sentence", () => {
    const random = Uint8Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 256);
    expect(refusal(() => load("rand.md", {}, random))).toBe(
      "rand.md is not text (it is not valid UTF-8); give a Markdown or JSON plan saved as UTF-8 text",
    );
    const nul = new TextEncoder().encode("# Plan\n\n- [ ] One\u0000two\n- [ ] Three\u0007\n- [ ] Fine\n");
    expect(refusal(() => load("nul.md", {}, nul))).toBe(
      "nul.md: is not text: 2 lines hold control characters (line 3, line 4); give a Markdown or JSON plan saved as UTF-8 text",
    );
  });

  it("refuses a checklist nested past the tree's limit in one short sentence, before anything recurses", () => {
    for (const depth of [1_000, 6_000]) {
      const text = Array.from({ length: depth }, (_, i) => `${"  ".repeat(i)}- [ ] level ${i}`).join("\n");
      const message = refusal(() => load("deep.md", {}, text));
      expect(message).toBe(`deep.md: line ${MAX_TREE_DEPTH} nests deeper than the tree's limit of ${MAX_TREE_DEPTH} levels; flatten the plan`);
    }
  });

  it("refuses task-master subtasks nested 20,000 deep in one short sentence", () => {
    // (written as text: JSON.stringify itself recurses)
    const text = `{"tasks": [${'{"id": 1, "title": "level", "subtasks": ['.repeat(20_000)}{"id": 1, "title": "leaf"}${"]}".repeat(20_000)}]}`;
    const message = refusal(() => load("tasks.json", {}, text));
    expect(message).toMatch(/^tasks\.json: task 1\.1\.1[.1]*… nests deeper than the tree's limit of 256 levels; flatten the plan$/);
    expect(message.length).toBeLessThan(160);
  });
});

describe("ids from titles", () => {
  it("are found in linear time: each title's next suffix is remembered", () => {
    let lookups = 0;
    const taken = new (class extends Set<string> {
      override has(value: string): boolean {
        lookups++;
        return super.has(value);
      }
    })();
    const next = new Map<string, number>();
    for (let i = 0; i < 3_000; i++) taken.add(idFromTitle("task", taken, next));
    expect(taken.has("task-3000")).toBe(true);
    expect(lookups).toBeLessThan(3 * 3_000);
  });

  it("15,000 items all titled the same import with distinct ids", () => {
    const plan = load("same.md", {}, `# Same\n\n${"- [ ] task\n".repeat(15_000)}`);
    expect(plan.tree.root.children).toHaveLength(15_000);
    expect(new Set(plan.tree.root.children.map((child) => child.id)).size).toBe(15_000);
  });
});

describe("titles", () => {
  it("may not hold control characters or U+FFFD: a tree with binary garbage in a title is invalid", () => {
    for (const title of ["bad\u0000title", "line\nbreak", "broken \uFFFD byte", "lone \uD800 half"]) {
      const tree = {
        version: 1,
        root: { id: "root", order: 0, title, goal: "", acceptance: [], passes: false, attempts: 0, max_attempts: 3, children: [] },
      };
      expect(checkTreeShape(tree).problems.map((problem) => problem.path)).toEqual(["$.root.title"]);
    }
    const fine = {
      version: 1,
      root: { id: "root", order: 0, title: "Émoji 😀 and 中文", goal: "", acceptance: [], passes: false, attempts: 0, max_attempts: 3, children: [] },
    };
    expect(checkTreeShape(fine).problems).toEqual([]);
  });
});
