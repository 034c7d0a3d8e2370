// Many runs in one clone (issue 22 §1): `runner start --worktree` puts each run in a linked worktree
// of its own; three runs there proceed at the same time through the built binary with a scripted
// agent, each with its own lock, journal, logs and loop commits; killing one run's runner leaves the
// other two untouched (and the killed one continues later). `runner runs` lists them and `runner
// cleanup` cleans up without losing a commit.
import { execa } from "execa";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { git, PROJECT_ROOT, RUNNER_BIN, runner, runnerOnPath, tempDir, testEnv } from "../helpers/sandbox.js";
import { isAlive, oneSentence, scenario, subject, type AgentAction } from "../helpers/scenario.js";

async function waitFor(condition: () => boolean, what: string, timeoutMs = 90_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A run's script: decompose the root into x and y, then write a file of its own for each. */
function runScript(run: string, second: Partial<AgentAction> = {}, offset = 0): Record<number, AgentAction> {
  return {
    1: {
      decompose: [
        { id: "x", order: 0 },
        { id: "y", order: 1 },
      ],
      status: "decomposed",
      summary: `split ${run}`,
    },
    [2 + offset]: { write: { [`src/${run}-x.txt`]: `${run} x\n` }, status: "done", ...second },
    [3 + offset]: { write: { [`src/${run}-y.txt`]: `${run} y\n` }, status: "done" },
  };
}

function scriptDir(run: string, script: Record<number, AgentAction>): string {
  const dir = tempDir(`runner-script-${run}-`);
  writeFileSync(path.join(dir, "script.json"), JSON.stringify(script));
  return dir;
}

describe("worktree runs", () => {
  it("three runs in one clone at once: each complete with its own commits and files, audit clean; killing one leaves the others untouched", async () => {
    const s = await scenario({ start: false });
    const gate = path.join(tempDir("runner-gate-"), "open");
    const waitGate = `i=0; while [ ! -e '${gate}' ] && [ $i -lt 900 ]; do sleep 0.1; i=$((i+1)); done`;
    const dirs = {
      a: scriptDir("a", runScript("a", { sh: waitGate })),
      b: scriptDir("b", runScript("b", { sh: waitGate })),
      // c's runner is killed while its agent sleeps in iteration 2; iteration 2 is then recorded as interrupted.
      c: { ...runScript("c", {}, 1), 2: { sh: 'echo $PPID > "$SCENARIO_DIR/agent-2.pid"', sleep: 120, status: "done" } } as Record<
        number,
        AgentAction
      >,
    };
    const scripts = { a: dirs.a, b: dirs.b, c: scriptDir("c", dirs.c) };
    const worktree = (run: string) => path.join(path.dirname(s.dir), `${path.basename(s.dir)}-${run}`);

    for (const run of ["a", "b", "c"] as const) {
      const started = await s.runner(["start", "--worktree", "--run-id", run]);
      expect(started.stderr).toBe("");
      expect(started.exitCode).toBe(0);
      expect(started.stdout).toBe(
        `started run ${run} on branch runner/${run} in the worktree ${worktree(run)}; continue there:\n  cd ${worktree(run)} && runner run`,
      );
      expect((await git(worktree(run), ["branch", "--show-current"], s.gitEnv)).trim()).toBe(`runner/${run}`);
    }
    // This checkout is where it was.
    expect((await s.git(["branch", "--show-current"])).trim()).toBe("main");

    const spawnRun = (run: "a" | "b" | "c") =>
      execa("node", [RUNNER_BIN, "run"], {
        cwd: worktree(run),
        env: { ...s.env, SCENARIO_DIR: scripts[run] },
        extendEnv: false,
        reject: false,
        timeout: 170_000,
      });
    const runs = { a: spawnRun("a"), b: spawnRun("b"), c: spawnRun("c") };
    const agentRan = (run: "a" | "b" | "c", n: number) => existsSync(path.join(scripts[run], `agent-${n}.json`));
    await waitFor(() => agentRan("a", 2) && agentRan("b", 2) && existsSync(path.join(scripts.c, "agent-2.pid")), "all three runs in iteration 2");
    const cAgent = Number(readFileSync(path.join(scripts.c, "agent-2.pid"), "utf8"));
    expect(isAlive(cAgent)).toBe(true);

    // All three at work at once, each in its own worktree.
    const listed = await runner(s.dir, ["runs", "--json"], { env: s.env });
    expect(listed.exitCode, listed.stderr).toBe(0);
    const working = (JSON.parse(listed.stdout) as { runs: { run_id: string; state: string; worktree: string }[] }).runs;
    expect(working.map((r) => [r.run_id, r.state, r.worktree])).toEqual(["a", "b", "c"].map((run) => [run, "working", worktree(run)]));

    // A run at work is not removed under its runner's feet.
    const busy = await runner(s.dir, ["cleanup", "a"], { env: s.env });
    expect(busy.exitCode).toBe(1);
    expect(oneSentence(busy.stderr)).toMatch(
      new RegExp(
        `^A runner \\(\`runner run\`, pid ${runs.a.pid}\\) is working on run a in ${worktree("a")}; stop it \\(Ctrl-C there\\) or wait for it, then try again\\.$`,
      ),
    );

    runs.c.kill("SIGKILL");
    const killed = await runs.c;
    expect(killed.signal).toBe("SIGKILL");
    // The other runs' agents wait at the gate, untouched.
    expect(agentRan("a", 3) || agentRan("b", 3), "a and b were still in iteration 2").toBe(false);
    writeFileSync(gate, "");
    const [a, b] = await Promise.all([runs.a, runs.b]);
    expect(a.exitCode, a.stderr).toBe(0);
    expect(b.exitCode, b.stderr).toBe(0);

    for (const run of ["a", "b"] as const) {
      const log = (await git(worktree(run), ["log", "--format=%s", "--reverse", "main..HEAD"], s.gitEnv)).split("\n").filter(Boolean);
      expect(log).toEqual([
        subject(run, 1, "root", "decompose", "skipped"),
        subject(run, 2, "x", "execute", "pass"),
        subject(run, 3, "y", "execute", "pass"),
      ]);
    }
    // The killed run: its first iteration only, nothing of the others.
    expect((await git(worktree("c"), ["log", "--format=%s", "main..HEAD"], s.gitEnv)).trim()).toBe(subject("c", 1, "root", "decompose", "skipped"));
    const afterKill = JSON.parse((await runner(s.dir, ["runs", "--json"], { env: s.env })).stdout) as { runs: { run_id: string; state: string }[] };
    expect(afterKill.runs.map((r) => r.state)).toEqual(["complete", "complete", "stopped"]);

    // The killed run continues where it stopped: the interrupted iteration recorded, then the rest.
    const resumed = await runner(worktree("c"), ["run"], { env: { ...s.env, SCENARIO_DIR: scripts.c }, timeout: 120_000 });
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    // The killed run's agent is gone: with its runner where the kernel ends it (PR_SET_PDEATHSIG, a cgroup), else by the next runner of that run.
    expect(isAlive(cAgent)).toBe(false);
    const cLog = (await git(worktree("c"), ["log", "--format=%s", "--reverse", "main..HEAD"], s.gitEnv)).split("\n").filter(Boolean);
    expect(cLog[0]).toBe(subject("c", 1, "root", "decompose", "skipped"));
    expect(cLog[1]).toMatch(/^chore\(loop\): run c iter 2 node x interrupted guard=skipped$/);
    expect(cLog.slice(2)).toEqual([subject("c", 3, "x", "execute", "pass"), subject("c", 4, "y", "execute", "pass")]);

    for (const run of ["a", "b", "c"]) {
      const audit = await runner(worktree(run), ["audit"], { env: s.env });
      expect(audit.exitCode, `${run}: ${audit.stdout}${audit.stderr}`).toBe(0);
      // Each run's files, branch and logs are its own.
      const files = (await git(worktree(run), ["ls-tree", "-r", "--name-only", "HEAD", "src/"], s.gitEnv)).split("\n").filter(Boolean);
      expect(files).toEqual([`src/${run}-x.txt`, `src/${run}-y.txt`]);
      expect(readdirSync(path.join(worktree(run), "src")).sort()).toEqual([`${run}-x.txt`, `${run}-y.txt`]);
      expect(readdirSync(path.join(worktree(run), ".runner", "iterations"))).toEqual([run]);
      expect((await git(worktree(run), ["status", "--porcelain"], s.gitEnv)).trim()).toBe("");
    }
    // The main checkout: untouched.
    expect(s.exists("src")).toBe(false);
    expect(await s.porcelain()).toBe("");

    // Usage: each run's from the meta.json its own worktree keeps (an agent that reports usage: here written in).
    for (const n of ["0002", "0003"]) {
      const file = path.join(worktree("a"), ".runner", "iterations", "a", n, "meta.json");
      const meta = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
      writeFileSync(file, JSON.stringify({ ...meta, usage: { input_tokens: 1000, output_tokens: 50, cost_usd: 0.01 } }));
    }
    const withUsage = JSON.parse((await runner(s.dir, ["runs", "--json"], { env: s.env })).stdout) as { runs: { run_id: string; usage: unknown }[] };
    expect(withUsage.runs.map((r) => [r.run_id, r.usage])).toEqual([
      ["a", { input_tokens: 2000, cached_input_tokens: 0, output_tokens: 100, reasoning_tokens: null, cost_usd: 0.02 }],
      ["b", null],
      ["c", null],
    ]);

    const text = await runner(s.dir, ["runs"], { env: s.env });
    expect(text.stdout).toMatch(
      new RegExp(`^a +complete +2/2 leaves, iteration 3 \\(execute y\\); tokens 2,000 in, 100 out; cost \\$0\\.0200 — ${worktree("a")}$`, "m"),
    );
    expect(text.stdout).toMatch(new RegExp(`^c +complete +2/2 leaves, iteration 4 \\(execute y\\) — ${worktree("c")}$`, "m"));
  }, 240_000);
});

describe("runner start --worktree, runner cleanup", () => {
  it("refuses a folder that exists, a folder without --worktree, and .runner/ that is not committed; leaves nothing behind", async () => {
    const s = await scenario({ start: false });
    const taken = path.join(tempDir("runner-taken-"), "here");
    mkdirSync(taken);
    const exists = await s.runner(["start", "--worktree", taken, "--run-id", "w1"]);
    expect(exists.exitCode).toBe(1);
    expect(oneSentence(exists.stderr)).toBe(`${taken} already exists; give another folder (\`runner start --worktree PATH\`) or remove it.`);
    const noFlag = await s.runner(["start", "../elsewhere"]);
    expect(noFlag.exitCode).toBe(1);
    expect(oneSentence(noFlag.stderr)).toMatch(/only taken with --worktree/);
    expect((await s.git(["branch", "--list", "runner/*"])).trim()).toBe("");
    expect((await s.git(["worktree", "list"])).trim().split("\n")).toHaveLength(1);

    // On a commit without .runner/: nothing to run there.
    await s.git(["checkout", "-q", "--orphan", "bare-start"]);
    await s.git(["rm", "-rq", "--cached", "."]);
    await s.git(["commit", "-q", "--allow-empty", "-m", "nothing"]);
    const notCommitted = await s.runner(["start", "--worktree", "--run-id", "w2"]);
    expect(notCommitted.exitCode).toBe(1);
    expect(oneSentence(notCommitted.stderr)).toMatch(/^\.runner\/ is not committed at HEAD, and a worktree holds only committed files; commit it/);
    expect((await s.git(["branch", "--list", "runner/*"])).trim()).toBe("");
  });

  it("cleanup: the worktree goes; the branch only when another branch holds its commits, else with --force; uncommitted work is never lost silently", async () => {
    const s = await scenario({ start: false });
    s.script({ 1: { write: { "src/done.txt": "done\n" }, status: "done" } });
    const wt = path.join(tempDir("runner-wt-"), "w1");
    expect((await s.runner(["start", "--worktree", wt, "--run-id", "w1"])).exitCode).toBe(0);
    const step = await runner(wt, ["step"], { env: s.env });
    expect(step.exitCode, step.stderr).toBe(0);

    const inside = await runner(wt, ["cleanup", "w1"], { env: s.env });
    expect(inside.exitCode).toBe(1);
    expect(oneSentence(inside.stderr)).toBe(
      `You are in run w1's worktree, which this would remove; run it from another checkout: \`cd ${s.dir} && runner cleanup w1\`.`,
    );

    writeFileSync(path.join(wt, "scratch.txt"), "work in progress\n");
    const dirty = await s.runner(["cleanup", "w1"]);
    expect(dirty.exitCode).toBe(1);
    expect(oneSentence(dirty.stderr)).toBe(
      `${wt} has 1 uncommitted change (scratch.txt) that removing it would lose; commit them there, or pass --force to drop them.`,
    );
    expect(existsSync(path.join(wt, "scratch.txt"))).toBe(true);
    await git(wt, ["clean", "-fq", "scratch.txt"], s.gitEnv);

    const kept = await s.runner(["cleanup", "w1"]);
    expect(kept.exitCode, kept.stderr).toBe(0);
    expect(kept.stdout).toBe(
      `removed the worktree ${wt}\nkept the branch runner/w1: its last commit is on no other branch; push or merge it (e.g. \`git push origin runner/w1\`), or \`runner cleanup w1 --force\` deletes it.`,
    );
    expect(existsSync(wt)).toBe(false);
    expect((await s.git(["branch", "--list", "runner/w1"])).trim()).toBe("runner/w1");

    // Merged into main: now it goes without --force.
    await s.git(["merge", "-q", "--ff-only", "runner/w1"]);
    const removed = await s.runner(["cleanup", "w1"]);
    expect(removed.exitCode, removed.stderr).toBe(0);
    expect(removed.stdout).toMatch(/^deleted the branch runner\/w1 \(was [0-9a-f]{12}; its commits are on main\)$/);

    // A branch on no other branch goes only with --force.
    // (main holds w1's passed tree now: a new goal starts the next run)
    const startW2 = await s.runner(["start", "--worktree", "--run-id", "w2", "--goal", "More work"]);
    expect(startW2.exitCode, startW2.stderr).toBe(0);
    const w2 = path.join(path.dirname(s.dir), `${path.basename(s.dir)}-w2`);
    await git(w2, ["commit", "-q", "--allow-empty", "-m", "by hand"], s.gitEnv);
    const forced = await s.runner(["cleanup", "w2", "--force"]);
    expect(forced.exitCode, forced.stderr).toBe(0);
    expect(forced.stdout).toMatch(/deleted the branch runner\/w2 \(was [0-9a-f]{12}; --force: its commits are on no other branch\)$/);
    expect((await s.git(["branch", "--list", "runner/*"])).trim()).toBe("");

    await s.git(["checkout", "-q", "-b", "runner/here"]);
    const here = await s.runner(["cleanup", "here"]);
    expect(here.exitCode).toBe(1);
    expect(oneSentence(here.stderr)).toMatch(
      /^Run here is checked out in the main working tree \(.*\), not in a worktree of its own; check out another branch there first/,
    );
    await s.git(["checkout", "-q", "main"]);

    const unknown = await s.runner(["cleanup", "nope"]);
    expect(unknown.exitCode).toBe(1);
    expect(oneSentence(unknown.stderr)).toBe("There is no run nope (no branch runner/nope); `runner runs` lists the runs.");
  });

  it("an agent in a linked worktree that changes the repository's shared git config or hooks: put back, and the iteration fails as in the main checkout", async () => {
    const s = await scenario({ start: false });
    const marker = path.join(tempDir("runner-marker-"), "ran");
    s.script({
      1: {
        write: { "src/a.txt": "ok\n" },
        status: "done",
        sh: [
          `common=$(git rev-parse --git-common-dir)`,
          `printf '#!/bin/sh\\necho ran >> ${marker}\\n' > "$common/hooks/post-commit" && chmod +x "$common/hooks/post-commit"`,
          `git config core.hooksPath .evil-hooks`,
        ].join("\n"),
      },
    });
    const wt = path.join(tempDir("runner-wt-"), "w1");
    expect((await s.runner(["start", "--worktree", wt, "--run-id", "w1"])).exitCode).toBe(0);
    const step = await runner(wt, ["step"], { env: s.env });
    expect(step.exitCode, step.stderr).toBe(0);
    expect(await s.git(["config", "--get", "core.hooksPath"]).catch(() => "")).toBe("");
    expect(existsSync(path.join(s.dir, ".git", "hooks", "post-commit"))).toBe(false);
    expect(await git(wt, ["log", "-1", "--format=%s"], s.gitEnv)).toBe(subject("w1", 1, "root", "execute", "fail"));
    expect(await git(wt, ["log", "-1", "--format=%B"], s.gitEnv)).toMatch(/\.git\/config/);
    // The user's own git afterwards runs none of it.
    await git(s.dir, ["commit", "-q", "--allow-empty", "-m", "by hand"], s.gitEnv);
    expect(existsSync(marker)).toBe(false);
  });
});

describe('the README\'s "Running many goals" steps', () => {
  it("run as written in a project of the user's own (the demo agent standing in): two goals in two worktrees, side by side, then runs and cleanup", async () => {
    const readme = readFileSync(path.join(PROJECT_ROOT, "README.md"), "utf8");
    const block = readme.slice(readme.indexOf("<!-- many-goals:begin"), readme.indexOf("<!-- many-goals:end -->"));
    const lines = (/```sh\n([\s\S]*?)```/.exec(block)?.[1] ?? "").split("\n").filter((line) => line.trim() !== "");
    expect(lines[0]).toMatch(/^cd my-project\b/);
    const parent = tempDir("runner-many-");
    const project = path.join(parent, "my-project");
    mkdirSync(project);
    const env = testEnv({ PATH: `${runnerOnPath()}:${process.env.PATH ?? ""}` });
    writeFileSync(path.join(project, "justfile"), "ci:\n    true\n");
    await git(project, ["init", "-q", "-b", "main"], env);
    expect((await runner(project, ["init", "--goal", "The project", "--executor", "demo"], { env })).exitCode).toBe(0);
    await git(project, ["add", "-A"], env);
    await git(project, ["commit", "-q", "-m", "my project"], env);

    const sh = (line: string) => execa("sh", ["-c", line], { cwd: project, env, extendEnv: false, reject: false, timeout: 150_000 });
    const rest = lines.slice(1).map((line) => line.replace(/\s+#.*$/, ""));
    const runLines = rest.filter((line) => / && runner run$/.test(line));
    expect(runLines).toHaveLength(2);
    for (const line of rest.filter((l) => l.startsWith("runner start"))) {
      const result = await sh(line);
      expect(result.exitCode, `${line}\n${String(result.stderr)}`).toBe(0);
    }
    // The two runs side by side.
    const runs = await Promise.all(runLines.map(sh));
    for (const result of runs) expect(result.exitCode, String(result.stderr)).toBe(0);
    const listed = await sh(rest.find((l) => l.startsWith("runner runs"))!);
    expect(String(listed.stdout)).toMatch(new RegExp(`^api +complete .* — ${path.join(parent, "my-project-api")}$`, "m"));
    expect(String(listed.stdout)).toMatch(new RegExp(`^docs +complete .* — ${path.join(parent, "my-project-docs")}$`, "m"));
    for (const [run, goal] of [
      ["docs", "Document every command"],
      ["api", "Add the /health endpoint"],
    ] as const) {
      const first = (await git(project, ["log", "--format=%s", "--reverse", `main..runner/${run}`], env)).split("\n")[0];
      expect(first).toBe(`runner goal: ${goal}`);
      const audit = await runner(path.join(parent, `my-project-${run}`), ["audit"], { env });
      expect(audit.exitCode, audit.stdout + audit.stderr).toBe(0);
    }
    const removed = await sh(rest.find((l) => l.startsWith("runner cleanup"))!);
    expect(removed.exitCode, String(removed.stderr)).toBe(0);
    expect(String(removed.stdout)).toMatch(/^removed the worktree .*my-project-docs\nkept the branch runner\/docs: /);
    expect(existsSync(path.join(parent, "my-project-docs"))).toBe(false);
  }, 240_000);
});
