// A person steers the run (issue 20), through the built binary in real repositories: a run stuck on
// a leaf → the person unsticks it, fixes the guard in config, adds a leaf and rewords another →
// `runner run` finishes → `runner audit` is clean and lists the person's edits → log and the report
// show them. Each refusal (passed node, runner-owned field, invalid id, a cycle through move, an edit
// during a run without --wait) writes nothing. The agent cannot forge a person's edit.
import { execa } from "execa";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runRaw, stderrLines } from "../helpers/bad-input.js";
import { node, tempDir, testEnv, tree } from "../helpers/sandbox.js";
import { CONFIG_FILE, scenario, subject, TREE_FILE, type Scenario } from "../helpers/scenario.js";

const PERSON = "Test Author <author@example.com>";

async function waitFor(condition: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** exit 1, one sentence on stderr matching `pattern`, and nothing written or committed. */
async function expectRefused(s: Scenario, args: string[], pattern: RegExp): Promise<void> {
  const head = await s.head();
  const treeText = s.read(TREE_FILE);
  const result = await s.runner(args);
  expect(result.exitCode, result.stdout + result.stderr).toBe(1);
  const lines = stderrLines(result.stderr);
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(pattern);
  expect(await s.head()).toBe(head);
  expect(s.read(TREE_FILE)).toBe(treeText);
  expect((await s.git(["status", "--porcelain"])).trim()).toBe("");
}

describe("a person steers a stuck run to the end", () => {
  it("unstick, fix the guard in config, add a leaf, reword another → run finishes → audit clean, edits listed in audit, log and report", async () => {
    const s = await scenario({
      runId: "night",
      tree: tree(node("root", { children: [node("a", { order: 0, max_attempts: 2 }), node("b", { order: 1, goal: "Old goal" })] })),
    });
    s.script({
      1: { write: { "src/a.txt": "a1\n" }, status: "done", guard: { exit: 1, print: "guard broken" } },
      2: { write: { "src/a.txt": "a2\n" }, status: "done", guard: { exit: 1, print: "guard broken" } },
      3: { write: { "src/a.txt": "a3\n" }, status: "done" },
      4: { write: { "src/b.txt": "b\n" }, status: "done" },
      5: { write: { "docs/usage.md": "usage\n" }, status: "done" },
    });
    const stuck = await s.runner(["run", "--halt-on-stuck"]);
    expect(stuck.exitCode).toBe(3);
    expect(stuck.stdout).toContain("Stopped early: leaf a is stuck (2/2 attempts)");
    expect(stuck.stdout).toContain("`runner unstick a`");
    const shown = await s.runner(["show", "a"]);
    expect(shown.stdout).toContain("runner unstick a");
    expect(shown.stdout).toContain("runner remove a");

    // The morning: four edits, each its own commit.
    const unstick = await s.runner(["unstick", "a", "--attempts", "1"]);
    expect(unstick.exitCode, unstick.stderr).toBe(0);
    expect(unstick.stdout).toContain('max_attempts of "a" from 2 to 3 (attempts spent: 2)');
    const config = await s.runner(["config", "guard.command", "--set", '["node", "guard.mjs", "fixed"]']);
    expect(config.exitCode, config.stderr).toBe(0);
    const added = await s.runner(["add", "root", "--title", "Write the docs", "--goal", "Document usage", "--acceptance", "docs/usage.md exists"]);
    expect(added.exitCode, added.stderr).toBe(0);
    const edited = await s.runner(["edit", "b", "--goal", "New goal"]);
    expect(edited.exitCode, edited.stderr).toBe(0);
    expect(s.node("a")).toMatchObject({ attempts: 2, max_attempts: 3, passes: false });
    expect(s.node("write-the-docs")).toMatchObject({ order: 2, goal: "Document usage", acceptance: ["docs/usage.md exists"], attempts: 0 });
    expect(s.node("b").goal).toBe("New goal");
    expect(s.read(CONFIG_FILE)).toContain('command = [ "node", "guard.mjs", "fixed" ]');
    const message = await s.message();
    expect(message).toContain('Runner-Edit: edit\nRunner-Node: b\nRunner-Person: Test Author <author@example.com>\nRunner-Change: goal of "b"');

    const finished = await s.runner(["run"]);
    expect(finished.exitCode, finished.stdout + finished.stderr).toBe(0);
    expect(await s.subjects()).toEqual([
      subject("night", 1, "a", "execute", "fail"),
      subject("night", 2, "a", "execute", "fail"),
      "chore(runner): run night edit unstick node a",
      "chore(runner): run night edit config guard.command",
      "chore(runner): run night edit add node write-the-docs",
      "chore(runner): run night edit edit node b",
      subject("night", 3, "a", "execute", "pass"),
      subject("night", 4, "b", "execute", "pass"),
      subject("night", 5, "write-the-docs", "execute", "pass"),
    ]);
    expect(s.readTree().root.passes).toBe(true);

    const audit = await s.runner(["audit"]);
    expect(audit.exitCode, audit.stderr).toBe(0);
    expect(audit.stdout).toContain("audit: run night is clean: 5 loop commits and 4 other commits obey the rules.");
    expect(audit.stdout).toContain("a person's edits (4), each checked by the rules:");
    expect(audit.stdout).toMatch(/a person's edit by Test Author <author@example\.com>: chore\(runner\): run night edit unstick node a/);
    const json = JSON.parse((await s.runner(["audit", "--json"])).stdout) as { clean: boolean; person_edits: Record<string, unknown>[] };
    expect(json.clean).toBe(true);
    expect(json.person_edits.map((edit) => [edit.made, edit.verb, edit.target, edit.author, edit.valid])).toEqual([
      ["runner", "unstick", "a", PERSON, true],
      ["runner", "config", "guard.command", PERSON, true],
      ["runner", "add", "write-the-docs", PERSON, true],
      ["runner", "edit", "b", PERSON, true],
    ]);

    const log = JSON.parse((await s.runner(["log", "--json"])).stdout) as { iterations: unknown[]; person_edits: { after_iteration: number }[] };
    expect(log.iterations).toHaveLength(5);
    expect(log.person_edits.map((edit) => edit.after_iteration)).toEqual([2, 2, 2, 2]);
    expect((await s.runner(["log"])).stdout).toContain("a person's edits (4), not iterations:");

    const out = path.join(tempDir("runner-steer-report-"), "report.html");
    const report = await s.runner(["report", "--output", out]);
    expect(report.exitCode, report.stderr).toBe(0);
    const html = readFileSync(out, "utf8");
    expect(html).toContain('<section id="person-edits">');
    expect(html).toContain("chore(runner): run night edit add node write-the-docs");
    expect(html).toContain("This run includes 4 person&#39;s edits");
  }, 120_000);
});

describe.concurrent("a person's edit that breaks a rule is refused in one sentence, nothing written", () => {
  const steerable = () =>
    scenario({
      tree: tree(
        node("root", {
          children: [
            node("a", { order: 0, passes: true }),
            node("b", { order: 1, attempts: 2, children: [node("b1", { order: 0 })] }),
            node("c", { order: 2 }),
          ],
        }),
      ),
    });

  it("a passed node: edit, move, remove, unstick, add under it", async () => {
    const s = await steerable();
    await expectRefused(
      s,
      ["edit", "a", "--title", "Renamed"],
      /^Node "a" has passed, and passed nodes are immutable, so it cannot be edited; add follow-up work/,
    );
    await expectRefused(s, ["remove", "a"], /^Node "a" has passed, and passed nodes are immutable/);
    await expectRefused(s, ["move", "a", "--parent", "c"], /^Node "a" has passed/);
    await expectRefused(s, ["unstick", "a"], /^Node "a" has passed/);
    await expectRefused(
      s,
      ["add", "a", "--title", "More"],
      /^Node "a" has passed, and passed nodes are immutable, so it cannot be given new children/,
    );
  });

  it("runner-owned fields: no option sets them, and a --from-file node carrying them is refused", async () => {
    const s = await steerable();
    await expectRefused(s, ["edit", "c", "--passes"], /^Unknown option --passes for `runner edit`/);
    await expectRefused(s, ["edit", "c", "--attempts", "0"], /^Unknown option --attempts for `runner edit`/);
    const file = path.join(tempDir("runner-steer-"), "nodes.json");
    writeFileSync(file, JSON.stringify([{ title: "Sneaky", passes: true }]));
    await expectRefused(s, ["add", "c", "--from-file", file], /^nodes\.json\[0\]\.passes is the runner's own field/);
    writeFileSync(file, JSON.stringify({ title: "Sneaky", attempts: 3 }));
    await expectRefused(s, ["add", "c", "--from-file", file], /^nodes\.json\.attempts is the runner's own field/);
    // max_attempts below the attempts already spent
    await expectRefused(s, ["edit", "b", "--max-attempts", "1"], /^--max-attempts 1 is below the 2 attempts already spent on "b"/);
  });

  it("an invalid or taken id, an unknown node", async () => {
    const s = await steerable();
    await expectRefused(s, ["add", "c", "--title", "T", "--id", "bad id!"], /^the new node's id "bad id!" is not a valid node id/);
    await expectRefused(s, ["add", "c", "--title", "T", "--id", "b1"], /^the new node's id "b1" is already used in the tree/);
    await expectRefused(s, ["edit", "nope", "--title", "T"], /^There is no node "nope" in the tree; `runner status` lists the node ids\.$/);
  });

  it("a cycle through move", async () => {
    const s = await steerable();
    await expectRefused(
      s,
      ["move", "b", "--parent", "b1"],
      /^Cannot move "b" under "b1", which is inside "b"'s own subtree \(a cycle\); pick a --parent outside it\.$/,
    );
    await expectRefused(s, ["move", "b", "--parent", "b"], /^Cannot move "b" under "b", which is the node itself/);
  });

  it("a bad config value", async () => {
    const s = await steerable();
    await expectRefused(s, ["config", "limits.max_iterations", "--set", "-3"], /^With limits\.max_iterations = -3 the config is invalid/);
  });

  it("an edit while `runner run` works: refused without --wait; with --wait made between two iterations and picked up by the run", async () => {
    const s = await scenario({ runId: "busy", tree: tree(node("root", { children: [node("a", { order: 0 }), node("b", { order: 1 })] })) });
    s.script({
      1: { write: { "src/a.txt": "a\n" }, status: "done", sleep: 4 },
      2: { write: { "src/b.txt": "b\n" }, status: "done" },
      3: { write: { "src/late.txt": "late\n" }, status: "done" },
    });
    const run = runRaw(s.dir, ["run"], s.env);
    await waitFor(() => s.agentRan(1), "the run's first agent");
    const head = await s.head();
    const refused = await s.runner(["add", "root", "--title", "Late work"]);
    expect(refused.exitCode).toBe(1);
    expect(stderrLines(refused.stderr)).toEqual([
      expect.stringMatching(
        /^Another runner \(runner run, pid \d+, since .*\) is working in this repository; pass --wait to make the edit between two of its iterations/,
      ),
    ]);
    expect(await s.head()).toBe(head);
    const queued = await s.runner(["add", "root", "--title", "Late work", "--wait"]);
    expect(queued.exitCode, queued.stderr).toBe(0);
    const done = await run;
    expect(done.exitCode, done.stdout + done.stderr).toBe(0);
    expect(await s.subjects()).toEqual([
      subject("busy", 1, "a", "execute", "pass"),
      "chore(runner): run busy edit add node late-work",
      subject("busy", 2, "b", "execute", "pass"),
      subject("busy", 3, "late-work", "execute", "pass"),
    ]);
    expect(existsSync(path.join(s.dir, ".git", "runner.lock.waiting"))).toBe(false);
  }, 90_000);
});

describe.concurrent("the agent cannot forge a person's edit", () => {
  it("an agent that commits with the person-edit subject and trailers, raising its own max_attempts, gains nothing", async () => {
    const s = await scenario({ runId: "forge", tree: tree(node("root", { children: [node("a", { order: 0, max_attempts: 1 })] })) });
    const forged = [
      "chore(runner): run forge edit unstick node a",
      "",
      "Runner-Edit: unstick",
      "Runner-Node: a",
      `Runner-Person: ${PERSON}`,
      'Runner-Change: max_attempts of "a" from 1 to 9',
    ].join("\n");
    s.script({
      1: {
        set: { a: { max_attempts: 9, attempts: 0 } },
        status: "retry",
        sh: `git add -A && git -c user.name="Test Author" -c user.email=author@example.com commit -q -m '${forged}'`,
      },
    });
    const step = await s.step();
    expect(step.exitCode, step.stderr).toBe(0);
    // Folded into the iteration: no person's edit on the branch, and the runner's fields stand.
    expect(await s.subjects()).toEqual([subject("forge", 1, "a", "decompose", "skipped")]);
    expect(s.node("a")).toMatchObject({ max_attempts: 1, attempts: 1 });
    expect(await s.message()).toMatch(/Runner-Git: /);
    const audit = JSON.parse((await s.runner(["audit", "--json"])).stdout) as { clean: boolean; person_edits: unknown[] };
    expect(audit).toMatchObject({ clean: true, person_edits: [] });
  });

  it("a forged person's edit kept in history — raising attempts, or carrying project files — is flagged by audit", async () => {
    const s = await scenario({ runId: "kept", tree: tree(node("root", { children: [node("a", { order: 0 }), node("b", { order: 1 })] })) });
    s.script({ 1: { status: "retry" }, 2: { write: { "src/a.txt": "a\n" }, status: "done" } });
    expect((await s.step()).exitCode).toBe(0);
    // A commit with a person-edit subject that resets a's attempts and adds project work, then the next iteration.
    const data = s.readTree();
    data.root.children[0]!.attempts = 0;
    writeFileSync(path.join(s.dir, TREE_FILE), `${JSON.stringify(data, null, 2)}\n`);
    writeFileSync(path.join(s.dir, "sneaky.txt"), "unguarded\n");
    await s.git(["add", "-A"]);
    await s.git(["commit", "-q", "-m", "chore(runner): run kept edit edit node a\n\nRunner-Edit: edit\nRunner-Node: a"]);
    const sha = (await s.head()).slice(0, 7);
    expect((await s.step()).exitCode).toBe(0);
    const audit = await s.runner(["audit"]);
    expect(audit.exitCode).toBe(1);
    const lines = stderrLines(audit.stderr);
    expect(lines[0]).toContain(`breaks the rules first at commit ${sha} (not a loop commit): a person's edit`);
    expect(audit.stderr).toMatch(/changed files outside \.runner\/ \(sneaky\.txt\)/);
    expect(audit.stderr).toMatch(/attempts of "a" moved from 1 to 0/);
  });
});

describe("follow-up work after a complete run", () => {
  it("`runner start` on a passed tree says what to do; `runner extend` wraps the passed tree under a new root, and a run does the new work", async () => {
    const s = await scenario({
      runId: "first",
      tree: tree(node("root", { passes: true, children: [node("a", { order: 0, passes: true })] })),
      start: false,
    });
    const refused = await s.runner(["start", "--run-id", "second"]);
    expect(refused.exitCode).toBe(1);
    expect(stderrLines(refused.stderr)).toEqual([expect.stringContaining("add follow-up work with `runner extend --title … --goal …`")]);
    const before = s.readTree().root;
    const extended = await s.runner(["extend", "--title", "Add export", "--goal", "Export the list as CSV"]);
    expect(extended.exitCode, extended.stderr).toBe(0);
    expect(await s.git(["log", "-1", "--format=%s"])).toBe("chore(runner): edit extend node root-2");
    const after = s.readTree().root;
    expect(after).toMatchObject({ id: "root-2", title: "Add export", passes: false });
    expect(after.children.map((child) => child.id)).toEqual(["root", "add-export"]);
    expect(after.children[0]).toEqual(before);
    const started = await s.runner(["start", "--run-id", "second"]);
    expect(started.exitCode, started.stderr).toBe(0);
    s.script({ 1: { write: { "src/export.txt": "csv\n" }, status: "done" } });
    s.baseRef = "main";
    const run = await s.runner(["run"]);
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    expect(s.readTree().root.passes).toBe(true);
    expect((await s.runner(["audit"])).exitCode).toBe(0);
    await expectRefused(s, ["extend", "--title", "X", "--root-id", "root"], /^--root-id "root" is already used in the tree/);
  });
});

describe.concurrent("runner init --plan", () => {
  const fixture = (name: string) => path.resolve("test/fixtures/plans", name);
  async function init(file: string): Promise<{ tree: string; exitCode: number; stderr: string }> {
    const dir = tempDir("runner-plan-");
    await execa("git", ["init", "-q", dir], { env: testEnv(), extendEnv: false });
    const result = await runRaw(dir, ["init", "--plan", file, "--executor", "demo"]);
    const treeFile = path.join(dir, TREE_FILE);
    return { tree: existsSync(treeFile) ? readFileSync(treeFile, "utf8") : "", exitCode: result.exitCode ?? -1, stderr: result.stderr };
  }

  it.each([
    ["plan.md", ["storage", "read-and-write-the-file", "keep-ids-stable", "number-new-items-after-the-highest-id", "commands"]],
    ["prd.json", ["US-001", "US-002"]],
    ["tasks.json", ["task-1", "task-1.1", "task-1.2", "task-2", "task-3"]],
  ])("%s gives the same tree bytes on two runs", async (name, ids) => {
    const [first, second] = await Promise.all([init(fixture(name)), init(fixture(name))]);
    expect(first.exitCode, first.stderr).toBe(0);
    expect(second.tree).toBe(first.tree);
    const text = first.tree;
    for (const id of ids) expect(text).toContain(`"id": "${id}"`);
    expect(text).not.toContain('"passes": true');
  });

  it("maps the Markdown text under an item to its goal and plain bullets to acceptance; task-master dependencies to order", async () => {
    const md = JSON.parse((await init(fixture("plan.md"))).tree) as {
      root: { title: string; goal: string; children: { id: string; children: Record<string, unknown>[] }[] };
    };
    expect(md.root.title).toBe("Todo CLI");
    expect(md.root.children[0]!.children[0]).toMatchObject({
      id: "read-and-write-the-file",
      goal: "Load the list at start, save it after every change.",
      acceptance: ["the file is created when missing", "a broken file is reported, not overwritten"],
    });
    const tasks = JSON.parse((await init(fixture("tasks.json"))).tree) as { root: { children: { id: string; order: number; goal: string }[] } };
    expect(tasks.root.children).toHaveLength(3);
    expect(tasks.root.children.map((child) => [child.id, child.order])).toEqual([
      ["task-1", 0],
      ["task-2", 1],
      ["task-3", 2],
    ]);
    expect(tasks.root.children[2]!.goal).toBe("Mark an item done by its id.\n\nExit 1 with a message when the id is unknown.");
  });

  it("refuses in one sentence what cannot be mapped, writing nothing", async () => {
    const dir = tempDir("runner-plan-bad-");
    const untitled = path.join(dir, "untitled.md");
    writeFileSync(untitled, "# Plan\n\n- [ ] \n");
    const cycle = path.join(dir, "tasks.json");
    writeFileSync(
      cycle,
      JSON.stringify({
        tasks: [
          { id: 1, title: "A", dependencies: [2] },
          { id: 2, title: "B", dependencies: [1] },
        ],
      }),
    );
    for (const [file, pattern] of [
      [untitled, /^untitled\.md: 1 heading or item without text \(line 3\); give each a title or remove it; nothing was written\.$/],
      [cycle, /^tasks\.json: the dependencies of 2 items form a cycle \(task 1, task 2\)/],
    ] as const) {
      const result = await init(file);
      expect(result.exitCode).toBe(1);
      expect(stderrLines(result.stderr)).toEqual([expect.stringMatching(pattern)]);
      expect(result.tree).toBe("");
    }
  });
});
