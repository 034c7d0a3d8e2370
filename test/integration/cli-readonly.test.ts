// The read-only commands of CONTRACT §4 (init, validate, next, status) through the built binary, on
// files in temp folders and in real git repositories.
import { existsSync, mkdirSync, readFileSync, realpathSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { serializeTree } from "../../src/core/tree/canonical.js";
import type { TaskNode, TaskTree } from "../../src/core/tree/tree.js";
import { PROJECT_ROOT, git, node, readText, runner, tempDir, tree, writeFiles } from "../helpers/sandbox.js";
import { oneSentence } from "../helpers/scenario.js";

const TREE = ".runner/state/tree.json";
const CONFIG = ".runner/state/config.toml";
const COMMAND_CONFIG = '[executor]\nkind = "command"\ncommand = ["bash", "agent.sh"]\n';

/** A project with `.runner/` written directly (no `runner init`), holding `root`. */
function project(root: TaskNode, extra: Record<string, string> = {}): string {
  const dir = tempDir();
  writeFiles(dir, { [TREE]: serializeTree(tree(root)), [CONFIG]: COMMAND_CONFIG, ".runner/GOAL.md": "# Goal\n", ...extra });
  return dir;
}

/** root → [a ✓ (1/3), b → [b2 (order 1), b1 (order 1, 1/3)], c]: the next leaf is b1. */
function planned(): TaskNode {
  return node("root", {
    children: [
      node("c", { order: 2 }),
      node("b", { order: 1, children: [node("b2", { order: 1 }), node("b1", { order: 1, attempts: 1 })] }),
      node("a", { order: 0, passes: true, attempts: 1 }),
    ],
  });
}

/** A temp folder that is a git repository's top (where `runner init` belongs). */
async function repoDir(): Promise<string> {
  const dir = tempDir();
  await git(dir, ["init", "-q"]);
  return dir;
}

describe.concurrent("runner init", () => {
  it("refuses outside a git repository, and in a subfolder of one, naming the top folder; nothing written", async () => {
    const plain = tempDir();
    const outside = await runner(plain, ["init"]);
    expect(outside.exitCode).toBe(1);
    expect(oneSentence(outside.stderr)).toMatch(/is not in a git repository; run `git init` there first/);
    expect(existsSync(path.join(plain, ".runner"))).toBe(false);
    const top = await repoDir();
    mkdirSync(path.join(top, "sub"));
    const inside = await runner(path.join(top, "sub"), ["init"]);
    expect(inside.exitCode).toBe(1);
    expect(oneSentence(inside.stderr)).toMatch(
      new RegExp(
        `inside the git repository whose top folder is ${realpathSync(top).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}; run \`runner init\` there`,
      ),
    );
    expect(existsSync(path.join(top, "sub", ".runner"))).toBe(false);
  });

  it("creates the files of CONTRACT §2: GOAL.md, canonical tree.json, pinned schema.json, config.toml, assumptions.md, questions.md, and the .gitignore lines", async () => {
    const dir = await repoDir();
    const result = await runner(dir, ["init", "--goal", "Build a CLI"]);
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toBe("");
    for (const file of [".runner/GOAL.md", TREE, ".runner/state/schema.json", CONFIG, ".runner/state/assumptions.md", ".runner/state/questions.md"]) {
      expect(existsSync(path.join(dir, file)), file).toBe(true);
      expect(result.stdout).toContain(file);
    }
    expect(readText(dir, ".runner/GOAL.md")).toContain("Build a CLI");
    const text = readText(dir, TREE);
    const written = JSON.parse(text) as TaskTree;
    expect(serializeTree(written)).toBe(text);
    expect(written).toEqual(tree(node("root", { title: "Build a CLI", goal: "Build a CLI", max_attempts: 3 })));
    expect(readText(dir, ".runner/state/schema.json")).toBe(readFileSync(path.join(PROJECT_ROOT, "schemas", "task_tree", "v1.schema.json"), "utf8"));
    const ignored = readText(dir, ".runner/.gitignore").split("\n");
    expect(ignored).toContain("context/");
    expect(ignored).toContain("iterations/");
    // What init writes is valid.
    const validate = await runner(dir, ["validate"]);
    expect(validate.exitCode).toBe(0);
  });

  it("--max-attempts sets the root's max_attempts", async () => {
    const dir = await repoDir();
    expect((await runner(dir, ["init", "--max-attempts", "5"])).exitCode).toBe(0);
    expect((JSON.parse(readText(dir, TREE)) as TaskTree).root.max_attempts).toBe(5);
  });

  it("refuses a second time with exit 1 and one sentence on stderr, leaving the files as they were", async () => {
    const dir = await repoDir();
    expect((await runner(dir, ["init"])).exitCode).toBe(0);
    writeFiles(dir, { ".runner/GOAL.md": "# Goal\n\nmine\n" });
    const second = await runner(dir, ["init", "--goal", "other"]);
    expect(second.exitCode).toBe(1);
    expect(second.stdout).toBe("");
    expect(oneSentence(second.stderr)).toContain("already exists");
    expect(readText(dir, ".runner/GOAL.md")).toBe("# Goal\n\nmine\n");
  });

  it("--max-attempts 0 is refused with exit 1 and creates nothing", async () => {
    const dir = tempDir();
    const result = await runner(dir, ["init", "--max-attempts", "0"]);
    expect(result.exitCode).toBe(1);
    expect(oneSentence(result.stderr)).toContain("--max-attempts");
    expect(existsSync(path.join(dir, ".runner"))).toBe(false);
  });
});

describe.concurrent("runner validate", () => {
  it("a valid tree and config: exit 0", async () => {
    const dir = project(planned());
    const result = await runner(dir, ["validate"]);
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toBe("");
    expect(result.stdout).toContain("valid:");
    expect(result.stdout).toContain("6 nodes, 1 passed");
  });

  const broken = () =>
    JSON.stringify({
      version: 1,
      root: {
        ...node("root"),
        extra: 1,
        children: [{ ...node("a"), order: "1" }, node("b", { order: 1, children: [node("a", { attempts: 5, max_attempts: 3 })] })],
      },
    });

  it("duplicate id, wrong type, extra key and attempts > max_attempts: exit 1, all four reported with the file name and JSON path", async () => {
    const dir = project(node("root"), { [TREE]: broken() });
    const result = await runner(dir, ["validate"]);
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("4 problems in .runner/state/tree.json");
    expect(result.stderr).toContain(`${TREE} $.root.children[1].children[0].id: duplicate id "a"`);
    expect(result.stderr).toContain(`${TREE} $.root.children[0].order: must be an integer, not the string "1"`);
    expect(result.stderr).toContain(`${TREE} $.root.extra: unexpected key "extra"`);
    expect(result.stderr).toContain(`${TREE} $.root.children[1].children[0].attempts: attempts 5 is more than max_attempts 3`);
  });

  it("--json prints exactly one JSON document on stdout with every problem", async () => {
    const dir = project(node("root"), { [TREE]: broken() });
    const result = await runner(dir, ["validate", "--json"]);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toBe("");
    const report = JSON.parse(result.stdout) as { valid: boolean; problems: { file: string; path: string; message: string }[] };
    expect(report.valid).toBe(false);
    expect(report.problems.map((p) => `${p.file} ${p.path}`).sort()).toEqual(
      [
        `${TREE} $.root.children[0].order`,
        `${TREE} $.root.children[1].children[0].attempts`,
        `${TREE} $.root.children[1].children[0].id`,
        `${TREE} $.root.extra`,
      ].sort(),
    );
    const valid = await runner(project(planned()), ["validate", "--json"]);
    expect(valid.exitCode).toBe(0);
    expect(JSON.parse(valid.stdout)).toEqual({ valid: true, problems: [] });
  });

  it("invalid JSON is reported at $ with the file name", async () => {
    const dir = project(node("root"), { [TREE]: '{"version": 1, "root": ' });
    const result = await runner(dir, ["validate"]);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain(`${TREE} $: is not valid JSON`);
  });

  it("a parent whose passes disagrees with its children is reported at its passes", async () => {
    const dir = project(node("root", { passes: true, children: [node("a")] }));
    const result = await runner(dir, ["validate"]);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain(`${TREE} $.root.passes: is true although a child has not passed`);
  });

  it("a bad config: an unknown key and a wrong type, each with its key path", async () => {
    const dir = project(planned(), { [CONFIG]: `${COMMAND_CONFIG}bogus = 1\n\n[limits]\nmax_iterations = "5"\n` });
    const result = await runner(dir, ["validate"]);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain(`${CONFIG} $.executor.bogus: unexpected key "bogus"`);
    expect(result.stderr).toContain(`${CONFIG} $.limits.max_iterations: must be an integer, not the string "5"`);
    expect(result.stderr).not.toContain(TREE);
  });

  it("a bad policy .runner/nodes/a/policy.json: an absolute path and a .. entry are rejected, each at its index", async () => {
    const dir = project(planned(), {
      ".runner/nodes/a/policy.json": JSON.stringify({ allowed_write_paths: ["src/", "/etc/passwd", "../outside/"] }),
    });
    const result = await runner(dir, ["validate"]);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain('.runner/nodes/a/policy.json $.allowed_write_paths[1]: "/etc/passwd" is absolute');
    expect(result.stderr).toContain('.runner/nodes/a/policy.json $.allowed_write_paths[2]: "../outside/" has a .. segment');
    expect(result.stderr).not.toContain("allowed_write_paths[0]");
  });

  it("a good policy is counted as valid", async () => {
    const dir = project(planned(), { ".runner/nodes/a/policy.json": JSON.stringify({ allowed_write_paths: ["src/", "README.md"] }) });
    const result = await runner(dir, ["validate"]);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain("1 node policy");
  });
});

describe.concurrent("runner next", () => {
  it("prints the leftmost open leaf with its path from the root", async () => {
    const result = await runner(project(planned()), ["next"]);
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toBe("");
    expect(result.stdout).toBe("next: b1 — Title of b1 (attempts 1/3)\npath: root › b › b1");
  });

  it("--json: one JSON document on stdout, stderr empty", async () => {
    const result = await runner(project(planned()), ["next", "--json"]);
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toBe("");
    expect(JSON.parse(result.stdout)).toEqual({
      complete: false,
      node: { id: "b1", title: "Title of b1", goal: "Goal of b1", acceptance: [], attempts: 1, max_attempts: 3 },
      path: ["root", "b", "b1"],
      stuck: false,
    });
  });

  it("a stuck leaf is still the next one, marked stuck", async () => {
    const dir = project(node("root", { children: [node("a", { attempts: 2, max_attempts: 2 })] }));
    const text = await runner(dir, ["next"]);
    expect(text.stdout).toContain("stuck: a has used all its attempts");
    expect(JSON.parse((await runner(dir, ["next", "--json"])).stdout)).toMatchObject({ node: { id: "a" }, stuck: true });
  });

  it('"complete" once the root passes', async () => {
    const dir = project(node("root", { passes: true, children: [node("a", { passes: true })] }));
    const text = await runner(dir, ["next"]);
    expect(text.exitCode).toBe(0);
    expect(text.stdout).toContain("complete");
    const json = await runner(dir, ["next", "--json"]);
    expect(json.stderr).toBe("");
    expect(JSON.parse(json.stdout)).toEqual({ complete: true, node: null, path: [] });
  });

  it("an invalid tree: exit 1, one sentence naming the file and pointing to runner validate", async () => {
    const dir = project(node("root"), { [TREE]: "not json" });
    const result = await runner(dir, ["next"]);
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toBe("");
    const sentence = oneSentence(result.stderr);
    expect(sentence).toContain(TREE);
    expect(sentence).toContain("runner validate");
  });

  it("works from a subfolder and with -C", async () => {
    const dir = project(planned(), { "src/deep/file.txt": "x" });
    expect((await runner(path.join(dir, "src", "deep"), ["next"])).stdout).toContain("next: b1");
    expect((await runner(tempDir(), ["next", "-C", dir])).stdout).toContain("next: b1");
  });
});

describe.concurrent("runner status", () => {
  it("shows ✓ for passed nodes, attempts like 1/3, and ← next on the next leaf only", async () => {
    const result = await runner(project(planned()), ["status"]);
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toBe("");
    const lines = result.stdout.trimEnd().split("\n");
    const line = (id: string) => {
      const found = lines.filter((l) => new RegExp(`[✓○!] ${id}  `).test(l));
      expect(found, id).toHaveLength(1);
      return found[0]!;
    };
    expect(line("a")).toMatch(/✓ a {2}Title of a +1\/3 {2}passed$/);
    expect(line("b1")).toMatch(/○ b1 {2}Title of b1 +1\/3 {2}open {2}← next$/);
    expect(line("b2")).toMatch(/○ b2 {2}Title of b2 +0\/3 {2}open$/);
    expect(lines.filter((l) => /[✓○!] \S+ {2}/.test(l) && l.includes("← next"))).toHaveLength(1);
    // Children in (order, id) order: a, b (b1, b2), c.
    expect(lines.map((l) => /[✓○!] (\S+) {2}/.exec(l)?.[1]).filter(Boolean)).toEqual(["root", "a", "b", "b1", "b2", "c"]);
    expect(result.stdout).toContain("1 of 6 nodes passed; next: b1");
    expect(lines[0]).toContain("no run");
  });

  it("--json: one document with the next leaf, counts and the tree", async () => {
    const result = await runner(project(planned()), ["status", "--json"]);
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toBe("");
    const status = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(status).toMatchObject({
      run_id: null,
      iterations: 0,
      complete: false,
      next: { id: "b1", path: ["root", "b", "b1"], stuck: false },
      nodes: { total: 6, passed: 1 },
      tree: { id: "root", passes: false, attempts: 0, max_attempts: 3 },
    });
    const children = (status.tree as { children: { id: string; passes: boolean }[] }).children;
    expect(children.map((child) => [child.id, child.passes])).toEqual([
      ["a", true],
      ["b", false],
      ["c", false],
    ]);
  });
});

describe.concurrent("refusals: one sentence on stderr, exit 1", () => {
  it.each([["status"], ["next"], ["validate"], ["status", "--json"]])("a missing .runner/ (runner %s) names `runner init`", async (...args) => {
    const result = await runner(tempDir(), args);
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toBe("");
    expect(oneSentence(result.stderr)).toContain("runner init");
  });

  it("an unknown command", async () => {
    const result = await runner(tempDir(), ["frobnicate"]);
    expect(result.exitCode).toBe(1);
    expect(oneSentence(result.stderr)).toContain("frobnicate");
  });

  it("an unknown option", async () => {
    const result = await runner(project(planned()), ["status", "--bogus"]);
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toBe("");
    expect(oneSentence(result.stderr)).toContain("bogus");
  });
});

describe.concurrent("inside a real git repository", () => {
  const SUBJECT = "chore(loop): run r1 iter 1 node a execute guard=pass";

  /** A repository on branch runner/r1 whose last commit is loop iteration 1 of run r1. */
  async function repoOnRun(): Promise<string> {
    const dir = project(node("root", { children: [node("a", { passes: true, attempts: 1 }), node("b", { order: 1 })] }));
    await git(dir, ["init", "-q"]);
    await git(dir, ["checkout", "-q", "-b", "runner/r1"]);
    await git(dir, ["add", "-A"]);
    await git(dir, ["commit", "-q", "-m", SUBJECT]);
    return dir;
  }

  it("status reports the run id r1 (from the runner/r1 branch) and 1 iteration", async () => {
    const dir = await repoOnRun();
    const text = await runner(dir, ["status"]);
    expect(text.exitCode).toBe(0);
    expect(text.stdout.split("\n")[0]).toBe("run r1 (branch runner/r1): 1 iteration committed, 0 failed");
    const json = await runner(dir, ["status", "--json"]);
    expect(json.stderr).toBe("");
    expect(JSON.parse(json.stdout)).toMatchObject({ run_id: "r1", branch: "runner/r1", iterations: 1, next: { id: "b" } });
  });

  it("the iteration count includes only this run's loop commits", async () => {
    const dir = await repoOnRun();
    await git(dir, ["commit", "-q", "--allow-empty", "-m", "chore(loop): run r2 iter 1 node b execute guard=fail"]);
    await git(dir, ["commit", "-q", "--allow-empty", "-m", "docs: a human commit"]);
    await git(dir, ["commit", "-q", "--allow-empty", "-m", "chore(loop): run r1 iter 2 repair guard=skipped"]);
    expect(JSON.parse((await runner(dir, ["status", "--json"])).stdout)).toMatchObject({ run_id: "r1", iterations: 2 });
  });

  it("validate reports a passed node changed in the working tree relative to HEAD", async () => {
    const dir = await repoOnRun();
    const edited = JSON.parse(readText(dir, TREE)) as TaskTree;
    edited.root.children[0]!.title = "rewritten by hand";
    writeFiles(dir, { [TREE]: serializeTree(edited) });
    const result = await runner(dir, ["validate"]);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain(`${TREE} $.root.children[0]: passed node "a" was changed (title)`);
  });

  it("validate reports a passed node removed from the working tree", async () => {
    const dir = await repoOnRun();
    const edited = JSON.parse(readText(dir, TREE)) as TaskTree;
    edited.root.children.shift();
    writeFiles(dir, { [TREE]: serializeTree(edited) });
    const result = await runner(dir, ["validate"]);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain(`${TREE} $: passed node "a" was removed`);
  });

  it("validate accepts edits to open nodes", async () => {
    const dir = await repoOnRun();
    const edited = JSON.parse(readText(dir, TREE)) as TaskTree;
    edited.root.children[1]!.children.push(node("b1"));
    writeFiles(dir, { [TREE]: serializeTree(edited) });
    const result = await runner(dir, ["validate"]);
    expect(result.stderr).toBe("");
    expect(result.exitCode).toBe(0);
  });
});
