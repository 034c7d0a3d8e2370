// Unattended runs (issue 13): a re-check of a leaf whose work is already on the branch, and the
// fixes of `run`'s ending (a completed root is done, a refusal is said once on stderr, Ctrl-C is
// named as such) and of `start` on another run's branch.
import { describe, expect, it } from "vitest";
import { DONE_WHEN_SCRIPT, oneSentence, scenario, subject } from "../helpers/scenario.js";
import { node, runEvents, tree } from "../helpers/sandbox.js";

const TWO_LEAVES = tree(node("root", { children: [node("a", { order: 0 }), node("b", { order: 1 })] }));

describe("runner recheck", () => {
  it("passes an open leaf whose work is already on the branch on a green guard, without an agent, in an audited commit", async () => {
    const s = await scenario({ runId: "rc-1", tree: TWO_LEAVES });
    s.script({ 1: { guard: { print: "all green" } } });
    // The work of a, done by a person on the run branch before the loop began.
    await s.git(["commit", "-q", "--allow-empty", "-m", "a by hand"]);
    const result = await s.runner(["recheck", "a"]);
    expect(result.stderr).toBe("");
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toMatch(/^Iteration 1: re-checked node a, guard=pass; a passed \(commit [0-9a-f]{7}\)\.$/m);
    expect(await s.subjects()).toEqual(["a by hand", subject("rc-1", 1, "a", "recheck", "pass")]);
    expect(s.node("a")).toMatchObject({ passes: true, attempts: 0 });
    expect(s.node("b")).toMatchObject({ passes: false, attempts: 0 });
    expect(s.agentRan(1)).toBe(false);
    expect(s.guardRuns()).toEqual([1]);
    expect(await s.message()).not.toMatch(/Runner-Status/);
    expect(s.meta(1)).toMatchObject({ kind: "recheck", step_kind: "recheck", agent_status: null, guard_outcome: "pass", passes_after: true });
    expect(await s.git(["status", "--porcelain"])).toBe("");

    const audit = await s.runner(["audit"]);
    expect(audit.stdout + audit.stderr).not.toMatch(/violation/i);
    expect(audit.exitCode).toBe(0);
    // The next step goes on with b; its history names the re-check.
    s.script({ 2: { write: { "src/b.txt": "b\n" }, status: "done" } });
    const next = await s.step();
    expect(next.exitCode, next.stderr).toBe(0);
    expect(s.readTree().root.passes).toBe(true);
  });

  it("a red guard leaves the leaf open, counts no attempt, is committed, says so on stderr (exit 1) and reaches the next iteration", async () => {
    const s = await scenario({ runId: "rc-2", tree: TWO_LEAVES });
    s.script({ 1: { guard: { exit: 2, print: "test x failed" } }, 2: { status: "retry", summary: "looked" } });
    const result = await s.runner(["recheck"]);
    expect(result.exitCode).toBe(1);
    expect(oneSentence(result.stderr)).toMatch(
      /^Iteration 1: re-checked node a, guard=fail; a stays open, attempts 0\/3 \(commit [0-9a-f]{7}\) — The guard `node guard.mjs` exited with code 2\.$/,
    );
    expect(result.stdout).toBe("");
    expect(await s.subjects()).toEqual([subject("rc-2", 1, "a", "recheck", "fail")]);
    expect(s.node("a")).toMatchObject({ passes: false, attempts: 0 });
    const step = await s.step();
    expect(step.exitCode, step.stderr).toBe(0);
    expect(s.agent(2).context["failure.md"]).toContain("test x failed");
    expect(s.agent(2).context["history.md"]).toContain("iteration 1 (a person had the guard re-check it, guard=fail)");
    const audit = await s.runner(["audit"]);
    expect(audit.exitCode, audit.stdout).toBe(0);
  });

  it("refuses, with one sentence and nothing written, a node that is not an open leaf, an unknown node, and a dirty working tree", async () => {
    const s = await scenario({
      runId: "rc-3",
      tree: tree(node("root", { children: [node("a", { order: 0, passes: true }), node("p", { order: 1, children: [node("c")] })] })),
    });
    const head = await s.head();
    for (const [id, message] of [
      ["a", /^Node a already passes; nothing to re-check\.$/],
      ["p", /^Node p has children, so it passes when they all do; re-check one of its open leaves instead/],
      ["nope", /^Node "nope" is not in the task tree; `runner status` lists the nodes/],
    ] as const) {
      const result = await s.runner(["recheck", id]);
      expect(result.exitCode, id).toBe(1);
      expect(oneSentence(result.stderr)).toMatch(message);
      expect(result.stdout).toBe("");
    }
    await s.git(["commit", "-q", "--allow-empty", "-m", "noop"]);
    const dirtyHead = await s.head();
    s.script({});
    const { writeFileSync } = await import("node:fs");
    writeFileSync(`${s.dir}/scratch.txt`, "x\n");
    const dirty = await s.runner(["recheck", "c"]);
    expect(dirty.exitCode).toBe(1);
    expect(oneSentence(dirty.stderr)).toMatch(/not clean/);
    expect(await s.head()).toBe(dirtyHead);
    expect(head).not.toBe(dirtyHead);
    expect(s.guardRuns()).toEqual([]);
    expect((await s.porcelain()).trim()).toBe("?? scratch.txt");
  });
});

describe("run's ending", () => {
  it("--max-iterations whose last iteration completes the root: done, exit 0, not 'stopped early'", async () => {
    const s = await scenario({ runId: "end-1" });
    s.script({ 1: { write: { "src/root.txt": "r\n" }, status: "done" } });
    const result = await s.runner(["run", "--max-iterations", "1"]);
    expect(result.stderr).toBe("");
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain("Done: the root passes (run end-1).");
    expect(result.stdout).not.toMatch(/Stopped early|work left/);
  });

  it("a refusal is one sentence on stderr and nothing on stdout", async () => {
    const s = await scenario({ runId: "end-2", start: false });
    const result = await s.runner(["run"]);
    expect(result.exitCode).toBe(1);
    expect(oneSentence(result.stderr)).toMatch(/main/);
    expect(result.stdout).toBe("");
  });

  it("a runner error that stops the run: the iteration's line on stdout, the reason once, on stderr", async () => {
    const s = await scenario({ runId: "end-3", timeoutSeconds: 1 });
    s.script({ 1: { status: "done", sleep: 5 } });
    const result = await s.runner(["run"]);
    expect(result.exitCode).toBe(1);
    expect(oneSentence(result.stderr)).toMatch(/did not finish within the iteration budget of 1 s/);
    expect(result.stdout).not.toContain("ended in a runner error");
    expect(result.stdout).toMatch(/^Iteration 1: node root, runner error \(timeout\), guard=skipped; .* — the agent did not finish/m);
  });
});

describe("runner start", () => {
  it("on another run's branch: refuses without --from, and with --from branches from it and says so", async () => {
    const s = await scenario({ runId: "old" });
    s.script(DONE_WHEN_SCRIPT);
    await s.step();
    const head = await s.head();
    const refused = await s.runner(["start", "--run-id", "new"]);
    expect(refused.exitCode).toBe(1);
    expect(oneSentence(refused.stderr)).toMatch(
      /^You are on runner\/old, the branch of run old; a new run would start from its work: pass --from runner\/old to mean it, or check out the branch to start from \(e\.g\. `git checkout main`\)\.$/,
    );
    expect((await s.git(["branch", "--show-current"])).trim()).toBe("runner/old");
    expect(await s.git(["branch", "--list", "runner/new"])).toBe("");

    const fromMain = await s.runner(["start", "--run-id", "fresh", "--from", "main"]);
    expect(fromMain.stderr).toBe("");
    expect(fromMain.exitCode).toBe(0);
    expect((await s.git(["rev-parse", "HEAD"])).trim()).toBe((await s.git(["rev-parse", "main"])).trim());
    expect((await s.git(["branch", "--show-current"])).trim()).toBe("runner/fresh");

    await s.git(["checkout", "-q", "runner/old"]);
    const fromOld = await s.runner(["start", "--run-id", "new", "--from", "runner/old"]);
    expect(fromOld.exitCode, fromOld.stderr).toBe(0);
    expect(fromOld.stdout).toContain("from runner/old");
    expect(await s.head()).toBe(head);
    expect((await s.git(["branch", "--show-current"])).trim()).toBe("runner/new");

    const unknown = await s.runner(["start", "--run-id", "x", "--from", "no-such-ref"]);
    expect(unknown.exitCode).toBe(1);
    expect(oneSentence(unknown.stderr)).toMatch(/--from no-such-ref names no commit/);
  });
});

describe("run goes on through transient runner errors", () => {
  it("an agent whose output fails twice, then succeeds, is carried through with a backoff; no person needed", async () => {
    const s = await scenario({ runId: "tr-1", tree: TWO_LEAVES, limits: "retry_backoff_seconds = 0.2" });
    s.script({
      1: { write: { "src/a.txt": "half\n" }, rawOutput: "this is not JSON" },
      2: { write: { "src/a.txt": "still half\n" }, exit: 1, printErr: "error: the model API answered 503 (overloaded)" },
      3: { write: { "src/a.txt": "a\n" }, status: "done" },
      4: { write: { "src/b.txt": "b\n" }, status: "done" },
    });
    const result = await s.runner(["run", "--json"]);
    expect(result.stderr).toBe("");
    expect(result.exitCode).toBe(0);
    const events = runEvents(result.stdout);
    const waits = events.filter((event) => event.type === "wait");
    expect(waits.map((event) => [event.cause, event.seconds])).toEqual([
      ["retry", 0.2],
      ["retry", 0.4],
    ]);
    expect(String(waits[0]!.message)).toMatch(
      /^Retrying in 200 ms after a runner error \(1 of at most 3 in a row\): the output file .* is not valid JSON/,
    );
    expect(String(waits[1]!.message)).toMatch(
      /\(2 of at most 3 in a row\): node exited with code 1: error: the model API answered 503 \(overloaded\)/,
    );
    expect(await s.subjects()).toEqual([
      subject("tr-1", 1, "a", "execute", "skipped"),
      subject("tr-1", 2, "a", "execute", "skipped"),
      subject("tr-1", 3, "a", "execute", "pass"),
      subject("tr-1", 4, "b", "execute", "pass"),
    ]);
    expect(s.meta(2).runner_error?.kind).toBe("agent_failed");
    expect(s.node("a")).toMatchObject({ passes: true, attempts: 0 });
    const summary = events.at(-1)!;
    expect(summary).toMatchObject({ type: "summary", exit_code: 0, iterations: 4 });
    expect(summary.wait_ms as number).toBeGreaterThanOrEqual(550);
  });

  it("three runner errors in a row stop the run with one sentence naming them (exit 1)", async () => {
    const s = await scenario({ runId: "tr-2", tree: TWO_LEAVES, limits: "retry_backoff_seconds = 0" });
    s.script({
      1: { rawOutput: "nope" },
      2: { exit: 3, printErr: "crashed" },
      3: { rawOutput: "{}" },
      4: { write: { "src/a.txt": "a\n" }, status: "done" },
    });
    const result = await s.runner(["run"]);
    expect(result.exitCode).toBe(1);
    expect(oneSentence(result.stderr)).toMatch(
      /^Stopped: 3 runner errors in a row \(iteration 1: the output file .*output\.json is not valid JSON .*; iteration 2: node exited with code 3: crashed; iteration 3: the output file .* does not match the agent output schema: .*\); fix the cause and run `runner run` again\.$/,
    );
    expect(await s.subjects()).toHaveLength(3);
    expect(s.agentRan(4)).toBe(false);
    expect(await s.git(["status", "--porcelain"])).toBe("");
  });

  it("a runner error no retry cures (the model API refuses the agent's key) stops at once; the count restarts after a good iteration", async () => {
    const s = await scenario({ runId: "tr-3", tree: TWO_LEAVES, limits: "retry_backoff_seconds = 0\nmax_consecutive_runner_errors = 2" });
    s.script({
      1: { rawOutput: "nope" },
      2: { write: { "src/a.txt": "a\n" }, status: "done" },
      3: { rawOutput: "nope" },
      4: { write: { "src/b.txt": "b\n" }, status: "done" },
    });
    const result = await s.runner(["run"]);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(await s.subjects()).toHaveLength(4);

    const t = await scenario({ runId: "tr-4", limits: "retry_backoff_seconds = 0" });
    t.script({ 1: { exit: 1, printErr: "error: 401 Unauthorized: invalid API key" }, 2: { status: "done", write: { "src/x.txt": "x\n" } } });
    const stopped = await t.runner(["run"]);
    expect(stopped.exitCode).toBe(1);
    expect(oneSentence(stopped.stderr)).toMatch(
      /^Iteration 1 ended in a runner error: node exited with code 1: error: 401 Unauthorized: invalid API key\. .*; fix the cause and run `runner step` again\.$/,
    );
    expect(await t.subjects()).toHaveLength(1);
    expect(t.agentRan(2)).toBe(false);
  });
});

describe("no silent spin", () => {
  it("a leaf whose work is already done stops the run after max_stalled_iterations iterations without progress, naming the leaf, the reason and runner recheck", async () => {
    const s = await scenario({ runId: "sp-1", tree: TWO_LEAVES, limits: "max_stalled_iterations = 2" });
    const nothing = { status: "done" as const, summary: "the work is already there" };
    s.script({ 1: nothing, 2: nothing, 3: nothing });
    const result = await s.runner(["run"]);
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toBe("");
    expect(result.stdout).toContain(
      "Stopped early: leaf a made no progress in 2 iterations in a row (the agent said done but changed nothing outside .runner/, so the guard did not run); if its work is already on the branch, run `runner recheck a` (a green guard passes it); otherwise change its goal, or split it into children in .runner/state/tree.json, and commit.",
    );
    expect(await s.subjects()).toHaveLength(2);
    expect(s.agentRan(3)).toBe(false);
    const recheck = await s.runner(["recheck", "a"]);
    expect(recheck.exitCode, recheck.stderr).toBe(0);
    expect(s.node("a").passes).toBe(true);
  });

  it("a stuck leaf whose agent keeps saying retry: attempts saturate, then the run stops instead of spinning to max_iterations", async () => {
    const s = await scenario({ runId: "sp-2", tree: tree(node("root", { children: [node("a", { max_attempts: 2 })] })) });
    const retry = { status: "retry" as const, summary: "cannot" };
    s.script({ 1: retry, 2: retry, 3: retry, 4: retry, 5: retry, 6: retry });
    const result = await s.runner(["run", "--json"]);
    expect(result.exitCode).toBe(3);
    const events = runEvents(result.stdout);
    // attempts 1, 2 (stuck: a notice), then three iterations that change nothing.
    expect(events.filter((event) => event.type === "iteration")).toHaveLength(5);
    expect(events.filter((event) => event.type === "stuck").map((event) => event.cause)).toEqual(["attempts", "no-progress"]);
    expect(String(events.at(-1)!.reason)).toMatch(
      /^Stopped early: leaf a made no progress in 3 iterations in a row \(the agent said retry with the leaf's attempts already at max_attempts, and did not decompose it\)/,
    );
  });
});

describe("preflight: found before anything is spent", () => {
  /** PATH without any node_modules/.bin: the runner must bring its own `just`. */
  const bare = (env: Record<string, string>) => ({
    ...env,
    PATH: (env.PATH ?? "")
      .split(":")
      .filter((dir) => !dir.includes("node_modules"))
      .join(":"),
  });

  it("a missing guard recipe refuses before any agent session; with the recipe there and the work already committed, run stops for lack of progress and runner recheck passes the leaf in an audited commit", async () => {
    const s = await scenario({ runId: "pf-1", tree: TWO_LEAVES, guard: ["just", "ci"], files: { justfile: "test:\n\techo testing\n" } });
    s.env = bare(s.env);
    const nothing = { status: "done" as const, summary: "a is already done" };
    s.script({ 1: nothing, 2: nothing, 3: nothing, 4: nothing });
    const before = await s.porcelain();
    const head = await s.head();
    const refused = await s.runner(["run"]);
    expect(refused.exitCode).toBe(1);
    expect(oneSentence(refused.stderr)).toBe(
      "The guard is `just ci` but justfile has no `ci` recipe; add one that runs the project's checks (or set [guard] command in .runner/state/config.toml), commit it, and try again (`runner doctor` checks the whole setup).",
    );
    expect(refused.stdout).toBe("");
    expect(s.agentRan(1)).toBe(false);
    expect(await s.head()).toBe(head);
    expect(await s.porcelain()).toBe(before);

    // The person adds the recipe, and the work of a, by hand.
    const { writeFileSync, mkdirSync } = await import("node:fs");
    writeFileSync(`${s.dir}/justfile`, "test:\n\techo testing\n\nci: test\n\ttest -f src/a.txt\n");
    mkdirSync(`${s.dir}/src`);
    writeFileSync(`${s.dir}/src/a.txt`, "a\n");
    await s.git(["add", "-A"]);
    await s.git(["commit", "-q", "-m", "ci recipe, and a by hand"]);
    const stalled = await s.runner(["run"]);
    expect(stalled.exitCode).toBe(3);
    expect(stalled.stdout).toContain(
      "Stopped early: leaf a made no progress in 3 iterations in a row (the agent said done but changed nothing outside .runner/, so the guard did not run); if its work is already on the branch, run `runner recheck a`",
    );
    expect(await s.subjects()).toHaveLength(4);
    expect(s.agentRan(4)).toBe(false);

    const recheck = await s.runner(["recheck", "a"]);
    expect(recheck.stderr).toBe("");
    expect(recheck.exitCode).toBe(0);
    expect((await s.subjects()).at(-1)).toBe(subject("pf-1", 4, "a", "recheck", "pass"));
    expect(s.node("a")).toMatchObject({ passes: true, attempts: 0 });
    expect(s.read(s.iterFile(4, "guard.log"))).toContain("test -f src/a.txt");
    const audit = await s.runner(["audit"]);
    expect(audit.exitCode, audit.stdout + audit.stderr).toBe(0);
  });

  it("an agent program that is not installed (kind = codex without codex): start, step and run refuse in one sentence; recheck, which runs no agent, does not; doctor lists every check", async () => {
    const s = await scenario({ runId: "pf-2", tree: TWO_LEAVES, start: false, guard: ["just", "ci"], files: { justfile: "ci:\n\ttrue\n" } });
    s.env = bare(s.env);
    const { writeFileSync } = await import("node:fs");
    writeFileSync(
      `${s.dir}/.runner/state/config.toml`,
      s.read(".runner/state/config.toml").replace(/kind = "command"\ncommand = .*\n/, 'kind = "codex"\n'),
    );
    await s.git(["commit", "-q", "-am", "codex"]);
    const sentence =
      /^The agent's program "codex" \(\[executor\] kind = "codex"\) is not on PATH; install the Codex CLI \(`npm install -g @openai\/codex`\) or choose another \[executor\] kind in \.runner\/state\/config\.toml \(`runner doctor` checks the whole setup\)\.$/;
    const start = await s.runner(["start", "--run-id", "pf-2"]);
    expect(start.exitCode).toBe(1);
    expect(oneSentence(start.stderr)).toMatch(sentence);
    expect((await s.git(["branch", "--list", "runner/pf-2"])).trim()).toBe("");
    await s.git(["checkout", "-q", "-b", "runner/pf-2"]);
    for (const command of [["step"], ["run"]]) {
      const result = await s.runner(command);
      expect(result.exitCode, command[0]).toBe(1);
      expect(oneSentence(result.stderr)).toMatch(sentence);
      expect(await s.subjects()).toEqual([]);
    }
    const recheck = await s.runner(["recheck", "a"]);
    expect(recheck.exitCode, recheck.stderr).toBe(0);

    const doctor = await s.runner(["doctor"]);
    expect(doctor.exitCode).toBe(1);
    expect(doctor.stdout).toMatch(/^✓ repository: .* on runner\/pf-2 \(run pf-2\)$/m);
    expect(doctor.stdout).toMatch(/^✓ git identity: Test Author <author@example\.com>$/m);
    expect(doctor.stdout).toMatch(/^✓ config: \.runner\/state\/config\.toml$/m);
    expect(doctor.stdout).toMatch(/^✓ task tree: 3 nodes; next leaf b$/m);
    expect(doctor.stdout).toMatch(/^✗ agent's program: codex \(ENOENT\)$/m);
    expect(doctor.stdout).toMatch(/^✓ guard's program: .*node_modules\/rust-just-[a-z0-9-]+\/bin\/just$/m);
    expect(doctor.stdout).toMatch(/^✓ guard's recipe: justfile: ci$/m);
    expect(doctor.stdout).toMatch(/^✓ containment: /m);
    expect(oneSentence(doctor.stderr)).toMatch(/^The agent's program "codex"/);
    const json = JSON.parse((await s.runner(["doctor", "--json"])).stdout) as { ok: boolean; checks: { name: string; ok: boolean }[] };
    expect(json.ok).toBe(false);
    expect(json.checks.filter((check) => !check.ok).map((check) => check.name)).toEqual(["agent's program"]);
  });

  it("a script whose #! interpreter is missing is named as such, not as 'not found'", async () => {
    const s = await scenario({ runId: "pf-3", executor: ["./agent.sh"], files: { "agent.sh": "#!/nonexistent/interpreter\necho hi\n" } });
    const { chmodSync } = await import("node:fs");
    chmodSync(`${s.dir}/agent.sh`, 0o755);
    await s.git(["commit", "-q", "-am", "executable"]);
    const result = await s.step();
    expect(result.exitCode).toBe(1);
    expect(oneSentence(result.stderr)).toBe(
      'The agent\'s program "./agent.sh" ([executor] command) names an interpreter that does not exist (/nonexistent/interpreter, in its #! line); fix that line or install the interpreter (`runner doctor` checks the whole setup).',
    );
  });
});
