// Unattended runs (issue 13): a re-check of a leaf whose work is already on the branch, and the
// fixes of `run`'s ending (a completed root is done, a refusal is said once on stderr, Ctrl-C is
// named as such) and of `start` on another run's branch.
import { describe, expect, it } from "vitest";
import { DONE_WHEN_SCRIPT, oneSentence, scenario, subject } from "../helpers/scenario.js";
import { node, tree } from "../helpers/sandbox.js";

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
    expect(oneSentence(result.stderr)).toMatch(/^Iteration 1: re-checked node a, guard=fail; a stays open, attempts 0\/3 \(commit [0-9a-f]{7}\) — The guard `node guard.mjs` exited with code 2\.$/);
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
    const s = await scenario({ runId: "rc-3", tree: tree(node("root", { children: [node("a", { order: 0, passes: true }), node("p", { order: 1, children: [node("c")] })] })) });
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
    expect(result.stdout).toMatch(/^Iteration 1: node root decompose, agent said retry, guard=skipped; .* — runner error: the agent did not finish/m);
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
    expect(oneSentence(refused.stderr)).toMatch(/^You are on runner\/old, the branch of run old; a new run would start from its work: pass --from runner\/old to mean it, or check out the branch to start from \(e\.g\. `git checkout main`\)\.$/);
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
