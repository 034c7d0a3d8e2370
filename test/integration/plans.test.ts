// Plans as people have them (issue 30; issue 28 items 6–8 for `init --plan`; issue 34 item 5),
// through the built binary in real git repositories with a bash agent and a bash guard: a half-done
// plan of each format imported and run to the end — every leaf passed, `runner audit` clean, every
// leaf the plan marked finished passed by a recorded guard run, one guard run for all of them while
// the guard is green; `runner import` mid-run as a person's edit; an agent that marks work finished
// itself gets nothing; every refusal one short sentence with nothing written.
import { execa } from "execa";
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runRaw, stderrLines } from "../helpers/bad-input.js";
import { git, runner, tempDir, testEnv } from "../helpers/sandbox.js";
import { CONFIG_FILE, scenarioConfig, TREE_FILE } from "../helpers/scenario.js";
import type { TaskNode, TaskTree } from "../../src/core/tree/tree.js";

const FIXTURES = path.resolve("test/fixtures/plans");
const FINISHED_FILE = ".runner/state/finished.json";

// The agent does the selected leaf's work: a file named after it. The guard judges every leaf it is
// given (RUNNER_NODE_IDS): each must have its file. Each guard run is logged outside the repository.
const AGENT_SH = `mkdir -p src
echo "$RUNNER_NODE_ID, iteration $RUNNER_ITERATION" > "src/$RUNNER_NODE_ID.txt"
if [ -n "$AGENT_EXTRA" ]; then sh -c "$AGENT_EXTRA"; fi
printf '{"status":"done","summary":"did %s"}' "$RUNNER_NODE_ID" > "$RUNNER_OUTPUT_FILE"
`;
const GUARD_SH = `echo "$RUNNER_ITERATION|$RUNNER_NODE_ID|$RUNNER_NODE_IDS" >> "$GUARD_LOG"
for id in $RUNNER_NODE_IDS; do
  test -f "src/$id.txt" || { echo "missing src/$id.txt"; exit 1; }
done
`;

interface PlanRun {
  dir: string;
  env: Record<string, string>;
  run(args: string[]): ReturnType<typeof runner>;
  /** The guard's runs: iteration, the node, every node it judged. */
  guardRuns(): { iteration: number; node: string; judged: string[] }[];
  tree(): TaskTree;
  git(args: string[]): Promise<string>;
}

/**
 * A repository whose plan is `plan` (`runner init --plan`), the work of the items in `done`
 * already committed (src/<id>.txt), on the run branch `runner/p1`.
 */
async function planRepo(plan: string, done: readonly string[], initArgs: string[] = [], extraEnv: Record<string, string> = {}): Promise<PlanRun> {
  const dir = tempDir("runner-plans-");
  const logDir = tempDir("runner-plans-log-");
  const env = testEnv({ GUARD_LOG: path.join(logDir, "guard.log"), ...extraEnv });
  await git(dir, ["init", "-q", "-b", "main"], env);
  const init = await runner(dir, ["init", "--plan", plan, "--executor", "command", ...initArgs], { env });
  expect(init.exitCode, init.stderr).toBe(0);
  writeFileSync(path.join(dir, CONFIG_FILE), scenarioConfig({ executor: ["bash", "agent.sh"], guard: ["bash", "guard.sh"] }));
  writeFileSync(path.join(dir, "agent.sh"), AGENT_SH);
  writeFileSync(path.join(dir, "guard.sh"), GUARD_SH);
  mkdirSync(path.join(dir, "src"), { recursive: true });
  for (const id of done) writeFileSync(path.join(dir, "src", `${id}.txt`), "done before the run\n");
  await git(dir, ["add", "-A"], env);
  await git(dir, ["commit", "-q", "-m", "the plan, and the work done so far"], env);
  const started = await runner(dir, ["start", "--run-id", "p1"], { env });
  expect(started.exitCode, started.stderr).toBe(0);
  return {
    dir,
    env,
    run: (args) => runner(dir, args, { env, timeout: 120_000 }),
    guardRuns: () => {
      const file = path.join(logDir, "guard.log");
      if (!existsSync(file)) return [];
      return readFileSync(file, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((line) => {
          const [iteration, node, judged] = line.split("|");
          return { iteration: Number(iteration), node: node!, judged: judged!.split(" ").filter(Boolean) };
        });
    },
    tree: () => JSON.parse(readFileSync(path.join(dir, TREE_FILE), "utf8")) as TaskTree,
    git: (args) => git(dir, args, env),
  };
}

function leaves(tree: TaskTree): TaskNode[] {
  const out: TaskNode[] = [];
  const stack = [tree.root];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node.children.length === 0) out.push(node);
    stack.push(...node.children);
  }
  return out;
}

/** The loop commits of run p1 that passed `id` by a re-check with a green guard: as its own node, or as one judged with it. */
async function recheckPasses(repo: PlanRun, id: string): Promise<string[]> {
  const log = await repo.git(["log", "--format=%H%x1f%s%x1f%b%x1e", "main..HEAD"]);
  return log
    .split("\x1e")
    .map((entry) => entry.trim())
    .filter(Boolean)
    .filter((entry) => {
      const [, subject = "", body = ""] = entry.split("\x1f");
      if (!/ recheck guard=pass$/.test(subject)) return false;
      const rechecked = /^Runner-Rechecked: (.*)$/m.exec(body)?.[1]?.split(", ") ?? [];
      return subject.includes(` node ${id} recheck`) || rechecked.includes(id);
    });
}

describe.concurrent("a half-done plan of each format, imported and run to the end", () => {
  it.each([
    ["spec-kit tasks.md", "speckit-tasks.md", ["T001", "T002", "T003"]],
    ["Kiro tasks.md", "kiro-tasks.md", ["task-1", "task-2.1"]],
    ["task-master tasks.json", "tasks-tagged.json", ["task-1.1", "task-1.2", "task-2.1", "task-3"]],
    ["ralph prd.json", "prd-half-done.json", ["US-001", "US-002"]],
  ])("%s: every leaf passes, audit is clean, the finished ones by one recorded guard run", async (_, file, finished) => {
    const repo = await planRepo(path.join(FIXTURES, file), finished);
    expect(JSON.parse(readFileSync(path.join(repo.dir, FINISHED_FILE), "utf8")).finished).toEqual(finished);
    const run = await repo.run(["run"]);
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    const tree = repo.tree();
    expect(tree.root.passes).toBe(true);
    expect(leaves(tree).filter((leaf) => !leaf.passes)).toEqual([]);
    const audit = await repo.run(["audit"]);
    expect(audit.exitCode, audit.stdout + audit.stderr).toBe(0);
    // Every finished leaf passed by a green re-check the history records, and the guard run that judged it was given it.
    for (const id of finished) expect(await recheckPasses(repo, id), id).toHaveLength(1);
    const runs = repo.guardRuns();
    const judging = runs.filter((guardRun) => finished.some((id) => guardRun.judged.includes(id)));
    expect(judging).toHaveLength(1);
    expect(judging[0]!.judged).toEqual(finished);
    // The others, one guard run each, after their agent's work.
    expect(runs).toHaveLength(1 + leaves(tree).length - finished.length);
  });
});

describe.concurrent("the guard judges finished work first", () => {
  it("40 finished items cost one guard run, not 40", async () => {
    const dir = tempDir("runner-plans-forty-");
    const plan = path.join(dir, "PLAN.md");
    const done = Array.from({ length: 40 }, (_, i) => `done-${i + 1}`);
    writeFileSync(plan, `# Forty done\n\n${done.map((id) => `- [x] ${id}\n`).join("")}- [ ] open-1\n- [ ] open-2\n`);
    const repo = await planRepo(plan, done);
    const run = await repo.run(["run"]);
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toMatch(
      /Iteration 1: re-checked node done-1, guard=pass; done-1 passed with 39 more plan-finished leaves \(done-2, done-3, done-4 and 36 more\)/,
    );
    const runs = repo.guardRuns();
    expect(runs.map((guardRun) => guardRun.judged.length)).toEqual([40, 1, 1]);
    expect((await repo.run(["audit"])).exitCode).toBe(0);
    // Each of them names the guard run that judged it.
    expect((await repo.run(["show", "done-27"])).stdout).toMatch(/iteration 1: recheck, agent -, guard pass/);
  });

  it("a red guard spends only the selected leaf's judgement: the agent does it, the rest still pass on one green run", async () => {
    const dir = tempDir("runner-plans-red-");
    const plan = path.join(dir, "PLAN.md");
    writeFileSync(plan, "# Half\n\n- [x] first\n- [x] second\n- [x] third\n- [ ] fourth\n");
    // The work of "first" is not there after all: the guard is red until the agent does it.
    const repo = await planRepo(plan, ["second", "third"]);
    const run = await repo.run(["run"]);
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    const subjects = (await repo.git(["log", "--reverse", "--format=%s", "main..HEAD"])).split("\n");
    expect(subjects).toEqual([
      "chore(loop): run p1 iter 1 node first recheck guard=fail",
      "chore(loop): run p1 iter 2 node first execute guard=pass",
      "chore(loop): run p1 iter 3 node second recheck guard=pass",
      "chore(loop): run p1 iter 4 node fourth execute guard=pass",
    ]);
    expect(repo.guardRuns().map((guardRun) => guardRun.judged)).toEqual([["first", "second", "third"], ["first"], ["second", "third"], ["fourth"]]);
    expect((await repo.run(["audit"])).exitCode).toBe(0);
  });

  it("an agent that marks work finished itself gets nothing: its change is taken back and fails its iteration", async () => {
    const dir = tempDir("runner-plans-forge-");
    const plan = path.join(dir, "PLAN.md");
    writeFileSync(plan, "# Forge\n\n- [x] real\n- [ ] honest\n- [ ] skipped\n");
    const forged = JSON.stringify({ version: 1, finished: ["real", "skipped"] });
    const mark = path.join(tempDir("runner-plans-mark-"), "forged");
    const repo = await planRepo(plan, ["real"], [], {
      // In its first session the agent also lists "skipped" as finished (and writes no work for it).
      FORGE_MARK: mark,
      AGENT_EXTRA: `[ "$RUNNER_NODE_ID" = honest ] && [ ! -f "$FORGE_MARK" ] && touch "$FORGE_MARK" && printf '%s' '${forged}' > ${FINISHED_FILE}; true`,
    });
    const run = await repo.run(["run"]);
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    const subjects = (await repo.git(["log", "--reverse", "--format=%s", "main..HEAD"])).split("\n");
    expect(subjects).toEqual([
      "chore(loop): run p1 iter 1 node real recheck guard=pass",
      "chore(loop): run p1 iter 2 node honest execute guard=fail",
      "chore(loop): run p1 iter 3 node honest execute guard=pass",
      "chore(loop): run p1 iter 4 node skipped execute guard=pass",
    ]);
    expect(await repo.git(["log", "-1", "--format=%b", "HEAD~2"])).toContain(FINISHED_FILE);
    expect(JSON.parse(readFileSync(path.join(repo.dir, FINISHED_FILE), "utf8")).finished).toEqual(["real"]);
    expect((await repo.run(["audit"])).exitCode).toBe(0);
  });
});

describe.concurrent("runner import: a plan added to a run under way, as a person's edit", () => {
  it("adds the nodes under the root, its finished leaves judged first; audit lists the edit as valid", async () => {
    const repo = await planRepo(path.join(FIXTURES, "plan.md"), []);
    expect((await repo.run(["step"])).exitCode).toBe(0);
    for (const id of ["US-001", "US-002"]) writeFileSync(path.join(repo.dir, "src", `${id}.txt`), "done by hand\n");
    const imported = await repo.run(["import", path.join(FIXTURES, "prd-half-done.json")]);
    expect(imported.exitCode, imported.stderr).toBe(0);
    expect(imported.stdout).toContain(
      'imported "recipe-box" under "root" from prd-half-done.json (5 nodes); 2 finished leaves for the guard to judge first.',
    );
    expect(await repo.git(["log", "-1", "--format=%s"])).toBe("chore(runner): run p1 edit import node recipe-box");
    expect(await repo.git(["show", "--stat", "--format=", "HEAD"])).toMatch(/finished\.json.*\n.*tree\.json/);
    // The hand-made work goes in as a person's fix would: committed before the run goes on (after the last loop commit).
    await repo.git(["add", "src"]);
    await repo.git(["commit", "-q", "-m", "the recipe stories, done by hand"]);
    const run = await repo.run(["run"]);
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    expect(await recheckPasses(repo, "US-002")).toHaveLength(1);
    const audit = await repo.run(["audit", "--json"]);
    const report = JSON.parse(audit.stdout) as { violations: { message: string }[]; person_edits: { verb: string; problems: string[] }[] };
    expect(report.person_edits.filter((edit) => edit.verb === "import")).toEqual([expect.objectContaining({ verb: "import", problems: [] })]);
    // (the hand commit of project work between loop commits is flagged, as any such commit is)
    expect(report.violations.map((violation) => violation.message)).toEqual([
      expect.stringMatching(/a commit between loop commits that the runner did not make/),
    ]);
  });

  it("--skip-done lists what it left out in GOAL.md; --under names an open node; a refusal writes nothing", async () => {
    const repo = await planRepo(path.join(FIXTURES, "plan.md"), []);
    const head = await repo.git(["rev-parse", "HEAD"]);
    for (const [args, pattern] of [
      [["import", path.join(FIXTURES, "not-a-plan.json")], /^not-a-plan\.json is JSON of neither plan format/],
      [["import", path.join(FIXTURES, "plan.md"), "--under", "nope"], /^There is no node "nope" in the tree/],
      [["import", path.join(FIXTURES, "tasks-two-tags.json")], /has 2 tags with tasks \("backend", "frontend"\); choose one with --tag NAME/],
      [
        ["import", "no-such-plan.md"],
        /^no-such-plan\.md cannot be read; give the path of a Markdown plan, ralph's prd\.json or task-master's tasks\.json\.$/,
      ],
    ] as const) {
      const result = await repo.run([...args]);
      expect(result.exitCode, result.stdout).toBe(1);
      expect(stderrLines(result.stderr)).toEqual([expect.stringMatching(pattern)]);
    }
    expect(await repo.git(["rev-parse", "HEAD"])).toBe(head);
    const imported = await repo.run(["import", path.join(FIXTURES, "half-done.md"), "--under", "commands", "--skip-done"]);
    expect(imported.exitCode, imported.stderr).toBe(0);
    const goal = readFileSync(path.join(repo.dir, ".runner/GOAL.md"), "utf8");
    expect(goal).toContain("## Already done");
    expect(goal).toContain("- Print the temperature");
    expect(existsSync(path.join(repo.dir, FINISHED_FILE))).toBe(false);
    expect((await repo.run(["audit"])).exitCode).toBe(0);
  });
});

describe.concurrent("runner init --plan", () => {
  async function init(plan: string, args: string[] = []): Promise<{ dir: string; exitCode: number | null; stdout: string; stderr: string }> {
    const dir = tempDir("runner-plans-init-");
    await execa("git", ["init", "-q", dir], { env: testEnv(), extendEnv: false });
    const result = await runRaw(dir, ["init", "--plan", plan, "--executor", "demo", ...args]);
    return { dir, exitCode: result.exitCode, stdout: result.stdout, stderr: result.stderr };
  }
  const nothingWritten = (dir: string) => expect(readdirSync(dir).filter((name) => name !== ".git")).toEqual([]);

  it.each(["speckit-tasks.md", "kiro-tasks.md", "half-done.md", "tasks-tagged.json", "tasks-top-array.json", "prd-stories.json"])(
    "%s gives the same bytes on two runs",
    async (file) => {
      const [first, second] = await Promise.all([init(path.join(FIXTURES, file)), init(path.join(FIXTURES, file))]);
      expect(first.exitCode, first.stderr).toBe(0);
      for (const written of [TREE_FILE, FINISHED_FILE, ".runner/GOAL.md"])
        expect(readFileSync(path.join(second.dir, written), "utf8"), written).toBe(readFileSync(path.join(first.dir, written), "utf8"));
    },
  );

  it("a plan that cannot be read is one sentence, and nothing is written", async () => {
    const missing = await init("no-such-plan.md");
    expect(missing.exitCode).toBe(1);
    expect(stderrLines(missing.stderr)).toEqual([
      "--plan no-such-plan.md cannot be read; give the path of a Markdown plan, ralph's prd.json or task-master's tasks.json.",
    ]);
    nothingWritten(missing.dir);
  });

  it("reads task-master's current tag beside the tasks file; --skip-done lists the finished items in GOAL.md", async () => {
    const tagged = await init(path.join(FIXTURES, "taskmaster/.taskmaster/tasks/tasks.json"));
    expect(tagged.exitCode, tagged.stderr).toBe(0);
    expect(tagged.stdout).toContain("(tag ui)");
    const skipped = await init(path.join(FIXTURES, "tasks-tagged.json"), ["--skip-done"]);
    expect(skipped.exitCode, skipped.stderr).toBe(0);
    expect(skipped.stdout).toContain("left out 3 finished items (--skip-done)");
    expect(readFileSync(path.join(skipped.dir, ".runner/GOAL.md"), "utf8")).toContain(
      "## Already done\n\nThe plan marks these finished; `--skip-done` left them out of the task tree (no guard judged them):\n\n- task-1: Project setup\n- task-2.1: Schema\n- task-3: Export command\n",
    );
    expect(existsSync(path.join(skipped.dir, FINISHED_FILE))).toBe(false);
  });

  it("refuses in one short sentence, writing nothing: deep nesting, binary data, JSON of neither format, a tree over the size limit", async () => {
    const dir = tempDir("runner-plans-bad-");
    const write = (name: string, content: string | Uint8Array) => {
      writeFileSync(path.join(dir, name), content);
      return path.join(dir, name);
    };
    const checklist = (depth: number) => Array.from({ length: depth }, (_, i) => `${"  ".repeat(i)}- [ ] level ${i}`).join("\n");
    const deepTasks = `{"tasks": [${'{"id": 1, "title": "t", "subtasks": ['.repeat(20_000)}{"id": 1, "title": "leaf"}${"]}".repeat(20_000)}]}`;
    // 21 items with 2 MB of text each: a 42 MB plan whose tree would be over the 40 MiB every command reads.
    const big = `# Big\n\n${Array.from({ length: 21 }, (_, i) => `- [ ] item ${i}\n  ${"x".repeat(2 * 1024 * 1024)}\n`).join("")}`;
    const cases: [string, RegExp][] = [
      [
        write("deep.md", checklist(6_000)),
        /^deep\.md: line 256 nests deeper than the tree's limit of 256 levels; flatten the plan; nothing was written\.$/,
      ],
      [write("thousand.md", checklist(1_000)), /^thousand\.md: line 256 nests deeper than the tree's limit of 256 levels/],
      [write("tasks.json", deepTasks), /^tasks\.json: task 1\.1\.1.*… nests deeper than the tree's limit of 256 levels/],
      [
        write(
          "rand.md",
          Uint8Array.from({ length: 65_536 }, (_, i) => (i * 7919 + 13) % 256),
        ),
        /^rand\.md is not text \(it is not valid UTF-8\)/,
      ],
      [path.join(FIXTURES, "not-a-plan.json"), /its top level is an object with the keys "name", "version", "scripts", "dependencies", "keywords"/],
      [write("big.md", big), /^big\.md gives a task tree of 42\.\d MiB, over the 40 MiB every command reads; split the plan/],
    ];
    for (const [file, pattern] of cases) {
      const result = await init(file);
      expect(result.exitCode, `${file}: ${result.stderr}`).toBe(1);
      const lines = stderrLines(result.stderr);
      expect(lines, file).toEqual([expect.stringMatching(pattern)]);
      expect(lines[0]!.length, file).toBeLessThan(300);
      nothingWritten(result.dir);
    }
  });
});

describe("runner validate", () => {
  it("does not call a tree with binary garbage in a title valid", async () => {
    const dir = tempDir("runner-plans-validate-");
    await execa("git", ["init", "-q", dir], { env: testEnv(), extendEnv: false });
    expect((await runner(dir, ["init", "--goal", "Something", "--executor", "demo"])).exitCode).toBe(0);
    const file = path.join(dir, TREE_FILE);
    const tree = JSON.parse(readFileSync(file, "utf8")) as TaskTree;
    tree.root.title = "\u0000\u0001garbage\uFFFD";
    writeFileSync(file, `${JSON.stringify(tree, null, 2)}\n`);
    const result = await runner(dir, ["validate"]);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain("$.root.title: holds a control character or U+FFFD (binary data?); a title is one line of text");
  });
});
