// No door for the agent (issue 28): what a hostile agent (a bash script run by the `command`
// executor, with the user's rights) or a careless person can do to a run through the new doors —
// the steering commands, the lock and its hand-over, side-by-side runs, history before the first
// iteration, deep or huge input — and what the runner does about it. Each case runs the built binary
// in real git repositories.
import { execa } from "execa";
import { existsSync, lstatSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { serializeTree } from "../../src/core/tree/canonical.js";
import { git, node, RUNNER_BIN, runner, tree } from "../helpers/sandbox.js";
import { expectLoopHistory } from "../helpers/hostile.js";
import { oneSentence, scenario, subject } from "../helpers/scenario.js";

/** A shell line that runs the built runner with `args` and records its exit code and stderr in SCENARIO_DIR/<name>.{exit,err}. */
function recordRunner(name: string, args: string[]): string {
  const quoted = args.map((arg) => `'${arg.replace(/'/g, "'\\''")}'`).join(" ");
  return `node '${RUNNER_BIN}' ${quoted} 2> "$SCENARIO_DIR/${name}.err"; echo $? > "$SCENARIO_DIR/${name}.exit"`;
}

function recorded(scriptDir: string, name: string): { exit: number; stderr: string } {
  return {
    exit: Number(readFileSync(path.join(scriptDir, `${name}.exit`), "utf8").trim()),
    stderr: readFileSync(path.join(scriptDir, `${name}.err`), "utf8"),
  };
}

async function waitFor(condition: () => boolean, what: string, timeoutMs = 90_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("an agent cannot steer a run", () => {
  it("the agent of one worktree run cannot change another run's config through the CLI; that run's next failing work does not pass", async () => {
    const s = await scenario({ start: false });
    const worktree = (run: string) => path.join(path.dirname(s.dir), `${path.basename(s.dir)}-${run}`);
    for (const run of ["w1", "w2"]) expect((await s.runner(["start", "--worktree", "--run-id", run])).exitCode).toBe(0);
    const w2 = worktree("w2");
    s.script({
      1: {
        sh: [
          recordRunner("config", ["-C", w2, "config", "guard.command", "--set", '["true"]']),
          recordRunner("edit", ["-C", w2, "edit", "root", "--title", "Steered by an agent"]),
          recordRunner("own", ["edit", "root", "--title", "My own run, steered"]),
        ].join("; "),
        status: "retry",
      },
    });
    const w1 = await runner(worktree("w1"), ["step"], { env: s.env });
    expect(w1.exitCode, w1.stderr).toBe(0);
    for (const name of ["config", "edit", "own"]) {
      const result = recorded(s.scriptDir, name);
      expect(result.exit, `${name}: ${result.stderr}`).toBe(1);
      expect(oneSentence(result.stderr), name).toMatch(
        /is a person's command, and this process runs inside a runner's agent containment \(.+\); an agent cannot steer a run/,
      );
    }
    // w2 is as it was: no commit, its guard unchanged.
    expect((await git(w2, ["log", "--format=%s", "main..HEAD"], s.gitEnv)).trim()).toBe("");
    expect(readFileSync(path.join(w2, ".runner/state/config.toml"), "utf8")).toContain('command = ["node", "guard.mjs"]');
  });

  it("a guard process (which runs what the agent wrote) is refused as well", async () => {
    const s = await scenario({
      guard: ["sh", "-c", `${recordRunner("guard-edit", ["edit", "root", "--title", "From the guard"])}; exit 1`],
    });
    s.script({ 1: { write: { "src/a.txt": "x\n" }, status: "done" } });
    const step = await s.step();
    expect(step.exitCode, step.stderr).toBe(0);
    const result = recorded(s.scriptDir, "guard-edit");
    expect(result.exit).toBe(1);
    expect(oneSentence(result.stderr)).toMatch(/runs inside a runner's agent containment/);
  });

  it("a person outside any containment still steers", async () => {
    const s = await scenario();
    const edited = await s.runner(["edit", "root", "--title", "A person's title"]);
    expect(edited.exitCode, edited.stderr).toBe(0);
  });
});

describe("one runner per checkout, whatever files the agent deletes or writes", () => {
  const twoLeaves = {
    1: {
      decompose: [
        { id: "x", order: 0 },
        { id: "y", order: 1 },
      ],
      status: "decomposed" as const,
    },
    2: { write: { "src/x.txt": "x\n" }, status: "done" as const },
    3: { write: { "src/y.txt": "y\n" }, status: "done" as const },
  };

  it("a waiting file the agent plants (another host, a live process that is not waiting) is ignored and removed; the run does not stall", async () => {
    const s = await scenario();
    // A live process of this user that does not wait for the lock: the test's own.
    const ownStart = readFileSync(`/proc/${process.pid}/stat`, "utf8").split(") ")[1]!.split(" ")[19]!;
    const plant = (record: object) => `printf '%s' '${JSON.stringify(record)}' > .git/runner.lock.waiting`;
    s.script({
      1: { ...twoLeaves[1], sh: plant({ pid: 4242, start: "1", host: "elsewhere.example", command: "runner edit", since: "2026-11-26T00:00:00Z" }) },
      2: {
        ...twoLeaves[2],
        sh: plant({ pid: process.pid, start: ownStart, host: hostname(), command: "runner edit", since: "2026-11-26T00:00:00Z" }),
      },
      3: twoLeaves[3],
    });
    const run = await runner(s.dir, ["run"], { env: s.env, timeout: 90_000 });
    expect(run.exitCode, run.stderr).toBe(0);
    const ignored = run.stdout.split("\n").filter((line) => line.startsWith("Ignored and removed"));
    expect(ignored).toEqual([
      expect.stringMatching(
        /runner\.lock\.waiting: it names a process on another host \(elsewhere\.example\); no person's edit waits for the lock\.$/,
      ),
      expect.stringMatching(
        new RegExp(
          `runner\\.lock\\.waiting: its process ${process.pid} does not hold it open \\(it is not waiting\\); no person's edit waits for the lock\\.$`,
        ),
      ),
    ]);
    expect(existsSync(path.join(s.dir, ".git", "runner.lock.waiting"))).toBe(false);
    expect((await s.runner(["audit"])).exitCode).toBe(0);
  });

  it("the agent deletes the lock file: a person's edit and a second step are still refused while the run works; nothing is dropped, audit is clean", async () => {
    const s = await scenario();
    const removed = path.join(s.scriptDir, "removed");
    const go = path.join(s.scriptDir, "go");
    s.script({
      ...twoLeaves,
      2: { ...twoLeaves[2], sh: `rm -f .git/runner.lock; touch '${removed}'; while [ ! -e '${go}' ]; do sleep 0.1; done` },
    });
    const run = execa("node", [RUNNER_BIN, "run"], { cwd: s.dir, env: s.env, extendEnv: false, reject: false, timeout: 120_000 });
    await waitFor(() => existsSync(removed), "the agent to delete the lock file");
    expect(existsSync(path.join(s.dir, ".git", "runner.lock"))).toBe(false);
    const edit = await s.runner(["edit", "y", "--title", "A person's title"]);
    expect(edit.exitCode).toBe(1);
    expect(oneSentence(edit.stderr)).toMatch(
      new RegExp(`^Another runner \\(runner run, pid ${run.pid}, since .+\\) is working in this repository; pass --wait`),
    );
    const step = await s.step();
    expect(step.exitCode).toBe(1);
    expect(oneSentence(step.stderr)).toMatch(new RegExp(`^Another runner \\(runner run, pid ${run.pid}, since .+\\) is working in this repository`));
    const status = await s.runner(["status"]);
    expect(status.stdout).toMatch(new RegExp(`in progress: \`runner run\`, pid ${run.pid}`));
    writeFileSync(go, "");
    const ended = await run;
    expect(ended.exitCode, String(ended.stderr)).toBe(0);
    await expectLoopHistory(s, 3);
    expect((await s.runner(["audit"])).exitCode).toBe(0);
  });
});

describe("every commit true to its own words", () => {
  it("a config edit amended by hand to change another key is not the edit the runner made: audit flags it", async () => {
    const s = await scenario({ start: "runner" });
    const edit = await s.runner(["config", "limits.max_iterations", "--set", "50"]);
    expect(edit.exitCode, edit.stderr).toBe(0);
    const config = s.read(".runner/state/config.toml").replace('command = ["node", "guard.mjs"]', 'command = ["true"]');
    writeFileSync(path.join(s.dir, ".runner/state/config.toml"), config);
    await s.git(["commit", "-q", "--amend", "-C", "HEAD", "--", ".runner/state/config.toml"]);
    const audit = await s.runner(["audit"]);
    expect(audit.exitCode).toBe(1);
    expect(audit.stderr).toMatch(
      /a person's edit \("chore\(runner\): run t1 edit config limits\.max_iterations"\) breaks the rules: it is not the edit the runner made: the commit also changed what its trailers do not say \(guard\.command = \["true"\]\); check it by hand/,
    );
    // The edit as the runner made it is clean.
    const clean = await scenario({ start: "runner" });
    expect((await clean.runner(["config", "limits.max_iterations", "--set", "50"])).exitCode).toBe(0);
    expect((await clean.runner(["audit"])).exitCode).toBe(0);
  });

  it("a plan edit amended to change another node is flagged; its words name what it did not say", async () => {
    const s = await scenario({ start: "runner", tree: tree(node("root", { children: [node("a", { order: 0 }), node("b", { order: 1 })] })) });
    expect((await s.runner(["edit", "a", "--title", "A new title"])).exitCode).toBe(0);
    const t = s.readTree();
    t.root.children[1]!.goal = "Quietly changed";
    writeFileSync(path.join(s.dir, ".runner/state/tree.json"), serializeTree(t));
    await s.git(["commit", "-q", "--amend", "-C", "HEAD", "--", ".runner/state/tree.json"]);
    const audit = await s.runner(["audit"]);
    expect(audit.exitCode).toBe(1);
    expect(audit.stderr).toMatch(/the commit also changed what its trailers do not say \(goal of "b"\)/);
  });

  it("a hand commit after `runner start` and before iteration 1 that passes a leaf is flagged, with and without iterations after it", async () => {
    const s = await scenario({ start: "runner", tree: tree(node("root", { children: [node("a", { order: 0 }), node("b", { order: 1 })] })) });
    const t = s.readTree();
    t.root.children[0]!.passes = true;
    writeFileSync(path.join(s.dir, ".runner/state/tree.json"), serializeTree(t));
    await s.git(["commit", "-q", "-am", "a is done"]);
    const before = await s.runner(["audit"]);
    expect(before.exitCode).toBe(1);
    expect(before.stderr).toMatch(
      /a person's edit by hand \("a is done"\) breaks the rules: passes of "a" changed from false to true without a green guard/,
    );
    s.script({ 1: { write: { "src/b.txt": "b\n" }, status: "done" } });
    expect((await s.step()).exitCode).toBe(0);
    expect(await s.message()).toMatch(new RegExp(`\\nRunner-Start: ${(await s.git(["rev-parse", "main"])).trim()}\\n`));
    const after = await s.runner(["audit"]);
    expect(after.exitCode).toBe(1);
    expect(after.stderr).toMatch(/passes of "a" changed from false to true without a green guard/);
  });

  it("a person's edit before iteration 1 is judged and listed; the run stays clean", async () => {
    const s = await scenario({ start: "runner" });
    expect((await s.runner(["edit", "root", "--goal", "A better goal"])).exitCode).toBe(0);
    s.script({ 1: { write: { "src/a.txt": "a\n" }, status: "done" } });
    expect((await s.step()).exitCode).toBe(0);
    const audit = await s.runner(["audit"]);
    expect(audit.exitCode, audit.stderr).toBe(0);
    expect(audit.stdout).toMatch(/1 loop commit and 1 other commit obey the rules/);
    expect(audit.stdout).toMatch(/a person's edit by Test Author <author@example\.com>: chore\(runner\): run t1 edit edit node root/);
  });
});

describe("small betrayals of audit (issue 34, items 1 and 2)", () => {
  it("a reorder among the same siblings is a valid person's edit; a move that changes nothing is refused", async () => {
    const s = await scenario({ start: "runner", tree: tree(node("root", { children: [node("a", { order: 0 }), node("b", { order: 1 })] })) });
    const reorder = await s.runner(["move", "b", "--parent", "root", "--order", "-1"]);
    expect(reorder.exitCode, reorder.stderr).toBe(0);
    expect(reorder.stdout).toMatch(/^order of "b" from 1 to -1\.\n/);
    expect(s.node("b").order).toBe(-1);
    const nothing = await s.runner(["move", "a", "--parent", "root"]);
    expect(nothing.exitCode).toBe(1);
    expect(oneSentence(nothing.stderr)).toBe(
      'Nothing to change: "a" is already under "root"; give --order with a new place among its siblings, or --parent another node.',
    );
    const same = await s.runner(["move", "a", "--parent", "root", "--order", "0"]);
    expect(same.exitCode).toBe(1);
    s.script({ 1: { write: { "src/b.txt": "b\n" }, status: "done" } });
    const step = await s.step();
    expect(step.exitCode, step.stderr).toBe(0);
    expect(await s.subjects()).toEqual(["chore(runner): run t1 edit move node b", subject("t1", 1, "b", "execute", "pass")]);
    const audit = await s.runner(["audit"]);
    expect(audit.exitCode, audit.stderr).toBe(0);
  });

  it("an unknown run id is an error for every command that reads a run", async () => {
    const s = await scenario();
    for (const args of [["audit"], ["status"], ["log"], ["report"], ["show", "root"]]) {
      const result = await s.runner([...args, "--run-id", "nope"]);
      expect(result.exitCode, args.join(" ")).toBe(1);
      expect(oneSentence(result.stderr), args.join(" ")).toBe(
        "There is no run nope here: no runner/nope branch (local or fetched), and HEAD's history has none of its loop commits; `runner runs` lists the runs.",
      );
    }
  });
});

describe("deep input in bounded time", () => {
  it("`runner add --from-file` of a node nested 30,000 deep is refused in one short sentence; a tree file as deep too", async () => {
    const s = await scenario();
    let deep = '{"title": "leaf"}';
    for (let i = 0; i < 30_000; i++) deep = `{"title": "n${i}", "children": [${deep}]}`;
    writeFileSync(path.join(s.scriptDir, "deep.json"), deep);
    const add = await s.runner(["add", "root", "--from-file", path.join(s.scriptDir, "deep.json")]);
    expect(add.exitCode).toBe(1);
    expect(oneSentence(add.stderr)).toBe("deep.json nests nodes deeper than 256 levels, more than a tree may hold; flatten it.");
    // The same depth in the tree file itself: every command that reads it says so in one sentence.
    let node =
      '{"id": "x", "order": 0, "title": "x", "goal": "", "acceptance": [], "passes": false, "attempts": 0, "max_attempts": 3, "children": []}';
    for (let i = 0; i < 30_000; i++)
      node = `{"id": "n${i}", "order": 0, "title": "t", "goal": "", "acceptance": [], "passes": false, "attempts": 0, "max_attempts": 3, "children": [${node}]}`;
    writeFileSync(path.join(s.dir, ".runner/state/tree.json"), `{"version": 1, "root": ${node}}\n`);
    for (const args of [["validate"], ["status"], ["next"], ["step"]]) {
      const result = await s.runner(args);
      expect(result.exitCode, args.join(" ")).toBe(1);
      expect(result.stderr, args.join(" ")).not.toMatch(/Maximum call stack/);
      expect(result.stderr.length, args.join(" ")).toBeLessThan(400);
    }
  });
});

describe("worktrees deleted by hand (issue 28, item 9)", () => {
  it("`runner runs` marks the run; `runner cleanup` forgets the worktree and deletes the branch by the rule", async () => {
    const s = await scenario({ start: false });
    const folder = path.join(path.dirname(s.dir), `${path.basename(s.dir)}-w1`);
    expect((await s.runner(["start", "--worktree", "--run-id", "w1"])).exitCode).toBe(0);
    rmSync(folder, { recursive: true, force: true });
    const runs = await s.runner(["runs", "--json"]);
    expect(runs.exitCode, runs.stderr).toBe(0);
    expect(JSON.parse(runs.stdout).runs).toEqual([expect.objectContaining({ run_id: "w1", worktree: null, worktree_missing: folder })]);
    expect((await s.runner(["runs"])).stdout).toContain(`its worktree ${folder} was deleted by hand (\`runner cleanup w1\` forgets it)`);

    // The run whose worktree is gone: its branch holds no commit of its own (it is main's tip), so it goes.
    const cleanup = await s.runner(["cleanup", "w1", "--force"]);
    expect(cleanup.exitCode, cleanup.stderr).toBe(0);
    expect((await s.git(["branch", "--list", "runner/w1"])).trim()).toBe("");
  });

  it("`start --worktree` into a folder deleted by hand that git still has registered works (the registration is forgotten first)", async () => {
    const s = await scenario({ start: false });
    const folder = path.join(path.dirname(s.dir), `${path.basename(s.dir)}-w1`);
    expect((await s.runner(["start", "--worktree", "--run-id", "w1"])).exitCode).toBe(0);
    rmSync(folder, { recursive: true, force: true });
    // Into the same folder, while git still has it registered: works (the stale registration forgotten first).
    const again = await s.runner(["start", "--worktree", folder, "--run-id", "w3"]);
    expect(again.exitCode, again.stderr).toBe(0);
    expect((await git(folder, ["branch", "--show-current"], s.gitEnv)).trim()).toBe("runner/w3");
  });

  it("`start --worktree` that git refuses leaves no branch behind and says why in one sentence of ours", async () => {
    const s = await scenario({ start: false });
    // A folder git cannot make: its parent is a file.
    writeFileSync(path.join(s.scriptDir, "a-file"), "");
    const bad = await s.runner(["start", "--worktree", path.join(s.scriptDir, "a-file", "sub"), "--run-id", "w4"]);
    expect(bad.exitCode).toBe(1);
    expect(oneSentence(bad.stderr)).toMatch(
      /^Could not make the worktree .+ \(git says: .+\); pick another folder \(`runner start --worktree PATH`\) — nothing was created\.$/,
    );
    expect((await s.git(["branch", "--list", "runner/w4"])).trim()).toBe("");
  });
});

describe("the run's own logs, whatever the agent plants there", () => {
  it("a FIFO planted as events.jsonl (with a reader holding it, and without) does not block the run", async () => {
    const s = await scenario();
    const events = `.runner/iterations/${s.runId}/events.jsonl`;
    s.script({
      1: {
        decompose: [
          { id: "x", order: 0 },
          { id: "y", order: 1 },
        ],
        status: "decomposed",
        sh: `rm -f ${events}; mkfifo ${events}`,
      },
      // A reader that outlives nothing (containment ends it), holding the FIFO open while the agent works.
      2: { write: { "src/x.txt": "x\n" }, status: "done", sh: `rm -f ${events}; mkfifo ${events}; (cat ${events} > /dev/null &)` },
      3: { write: { "src/y.txt": "y\n" }, status: "done" },
    });
    const run = await runner(s.dir, ["run"], { env: s.env, timeout: 90_000 });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(lstatSync(path.join(s.dir, events)).isFile()).toBe(true);
  });

  it("runner report reads the iteration logs through no FIFO and no link the agent left in their place", async () => {
    const s = await scenario();
    s.script({
      1: { decompose: [{ id: "x", order: 0 }], status: "decomposed" },
      2: { write: { "src/x.txt": "x\n" }, status: "done" },
    });
    expect((await runner(s.dir, ["run"], { env: s.env })).exitCode).toBe(0);
    const first = path.join(s.dir, ".runner", "iterations", s.runId, "0001");
    const second = path.join(s.dir, ".runner", "iterations", s.runId, "0002");
    rmSync(path.join(first, "guard.log"), { force: true });
    await execa("mkfifo", [path.join(first, "guard.log")]);
    const secret = path.join(s.dir, "..", `${s.runId}-secret.txt`);
    writeFileSync(secret, "not the runner's\n");
    rmSync(path.join(second, "executor.log"), { force: true });
    symlinkSync(secret, path.join(second, "executor.log"));
    const report = await runner(s.dir, ["report"], { env: s.env, timeout: 30_000 });
    expect(report.exitCode, report.stderr).toBe(0);
    expect(readFileSync(report.stdout.trim(), "utf8")).not.toContain("not the runner's");
  });
});
