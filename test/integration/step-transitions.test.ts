// Seed 002's transition table, attempt saturation, CONTRACT §7's contract violations and runner-owned
// fields, each through the built binary on a real repository with the scripted agent and guard.
import { describe, expect, it } from "vitest";
import { scenario, subject, TREE_FILE } from "../helpers/scenario.js";
import { node, tree } from "../helpers/sandbox.js";

describe.concurrent("runner step state transitions", () => {
  describe.concurrent("seed 002 transition table", () => {
    it("done + guard pass: passes = true, attempts unchanged", async () => {
      const s = await scenario({ tree: tree(node("root", { attempts: 1 })) });
      s.script({ 1: { write: { "out.txt": "ok\n" }, status: "done" } });
      const result = await s.step();
      expect(result.exitCode, result.stderr).toBe(0);
      expect(await s.subjects()).toEqual([subject("t1", 1, "root", "execute", "pass")]);
      expect(s.node("root")).toMatchObject({ passes: true, attempts: 1 });
      expect(s.guardRuns()).toEqual([1]);
    });

    it("done + guard fail: attempts + 1, guard=fail, and the next failure.md holds the guard's output", async () => {
      const s = await scenario();
      s.script({
        1: { write: { "out.txt": "wrong\n" }, status: "done", guard: { exit: 1, print: "GUARD-SAYS-3-TESTS-FAILED" } },
        2: { status: "retry" },
      });
      const first = await s.step();
      expect(first.exitCode, first.stderr).toBe(0);
      expect(await s.subjects()).toEqual([subject("t1", 1, "root", "execute", "fail")]);
      expect(s.node("root")).toMatchObject({ passes: false, attempts: 1 });
      expect(s.meta(1)).toMatchObject({ agent_status: "done", guard_outcome: "fail", attempts_before: 0, attempts_after: 1, passes_after: false });

      expect((await s.step()).exitCode).toBe(0);
      const seen = s.agent(2);
      expect(seen.context["failure.md"]).toContain("GUARD-SAYS-3-TESTS-FAILED");
      expect(seen.stdin).toContain("GUARD-SAYS-3-TESTS-FAILED");
      expect(s.guardRuns()).toEqual([1]);
    });

    it("done on a DECOMPOSE iteration: guard skipped, nothing changes, and failure.md says a pass needs a change outside .runner/", async () => {
      const s = await scenario();
      const before = s.read(TREE_FILE);
      s.script({
        1: { append: { ".runner/state/assumptions.md": "- I assume nothing.\n" }, status: "done", guard: { exit: 0 } },
        2: { status: "retry" },
      });
      const first = await s.step();
      expect(first.exitCode, first.stderr).toBe(0);
      expect(await s.subjects()).toEqual([subject("t1", 1, "root", "decompose", "skipped")]);
      expect(s.guardRuns()).toEqual([]);
      expect(s.read(TREE_FILE)).toBe(before);
      expect(s.meta(1)).toMatchObject({ kind: "decompose", agent_status: "done", guard_outcome: "skipped", attempts_after: 0, passes_after: false });

      expect((await s.step()).exitCode).toBe(0);
      const failure = s.agent(2).context["failure.md"]!;
      expect(failure).toContain("outside .runner/");
      expect(failure).toMatch(/pass needs a change outside \.runner\/ and green guards/);
    });

    it("retry: attempts + 1, guard skipped (not run)", async () => {
      const s = await scenario();
      s.script({ 1: { write: { "half.txt": "half\n" }, status: "retry" } });
      expect((await s.step()).exitCode).toBe(0);
      expect(await s.subjects()).toEqual([subject("t1", 1, "root", "execute", "skipped")]);
      expect(s.node("root")).toMatchObject({ passes: false, attempts: 1 });
      expect(s.guardRuns()).toEqual([]);
      expect(s.read("half.txt")).toBe("half\n");
    });

    it("decomposed: the node's passes and attempts unchanged, the new children open with 0 attempts", async () => {
      const s = await scenario({ tree: tree(node("root", { attempts: 2 })) });
      s.script({
        1: {
          decompose: [
            { id: "z", order: 0, passes: true, attempts: 2 },
            { id: "y", order: 0 },
          ],
          status: "decomposed",
        },
      });
      expect((await s.step()).exitCode).toBe(0);
      expect(await s.subjects()).toEqual([subject("t1", 1, "root", "decompose", "skipped")]);
      const root = s.readTree().root;
      expect(root).toMatchObject({ passes: false, attempts: 2 });
      // New nodes get the runner's defaults; children are sorted by (order, id).
      expect(root.children.map((child) => [child.id, child.passes, child.attempts])).toEqual([
        ["y", false, 0],
        ["z", false, 0],
      ]);
      expect(s.guardRuns()).toEqual([]);
    });
  });

  describe.concurrent("attempt saturation and stuck leaves", () => {
    it("attempts never exceed max_attempts; a stuck leaf is still selected and its prompt asks to decompose it", async () => {
      const s = await scenario({ tree: tree(node("root", { max_attempts: 2 })) });
      s.script({
        1: { status: "retry" },
        2: { write: { "f.txt": "1" }, status: "done", guard: { exit: 1 } },
        3: { status: "retry" },
        4: { write: { "f.txt": "2" }, status: "done", guard: { exit: 1 } },
      });
      const attempts: number[] = [];
      for (let i = 0; i < 4; i++) {
        const result = await s.step();
        expect(result.exitCode, result.stderr).toBe(0);
        attempts.push(s.node("root").attempts);
      }
      expect(attempts).toEqual([1, 2, 2, 2]);
      expect(await s.subjects()).toEqual([
        subject("t1", 1, "root", "decompose", "skipped"),
        subject("t1", 2, "root", "execute", "fail"),
        subject("t1", 3, "root", "decompose", "skipped"),
        subject("t1", 4, "root", "execute", "fail"),
      ]);
      expect(s.meta(3)).toMatchObject({ node_id: "root", attempts_before: 2, attempts_after: 2, max_attempts: 2 });
      expect(s.agent(3).env.RUNNER_NODE_ID).toBe("root");
      const stuckPrompt = s.read(s.iterFile(3, "prompt.md"));
      expect(stuckPrompt).toMatch(/stuck/i);
      expect(stuckPrompt).toMatch(/decompose/i);
      expect(stuckPrompt).toContain("used all 2 attempts");
      expect(s.read(s.iterFile(1, "prompt.md"))).not.toMatch(/is stuck/i);
      expect(s.read(s.iterFile(2, "prompt.md"))).not.toMatch(/is stuck/i);
    });
  });

  describe.concurrent("CONTRACT §7 contract violations count as retry", () => {
    it("decomposed without new children: attempts + 1, guard skipped, the reason in the next failure.md", async () => {
      const s = await scenario();
      s.script({ 1: { status: "decomposed", summary: "I split it (not really)" }, 2: { status: "retry" } });
      expect((await s.step()).exitCode).toBe(0);
      expect(await s.subjects()).toEqual([subject("t1", 1, "root", "decompose", "skipped")]);
      expect(s.node("root")).toMatchObject({ passes: false, attempts: 1, children: [] });
      expect(s.meta(1)).toMatchObject({ agent_status: "retry", guard_outcome: "skipped", attempts_after: 1 });
      expect((await s.step()).exitCode).toBe(0);
      expect(s.agent(2).context["failure.md"]).toMatch(/"decomposed" but added no children/);
    });

    it("done that added children: attempts + 1, guard skipped (not run), the reason in the next failure.md", async () => {
      const s = await scenario({ tree: tree(node("root", { children: [node("a")] })) });
      s.script({
        1: { decompose: [{ id: "a1" }], write: { "a.txt": "a\n" }, status: "done" },
        2: { status: "retry" },
      });
      expect((await s.step()).exitCode).toBe(0);
      expect(await s.subjects()).toEqual([subject("t1", 1, "a", "execute", "skipped")]);
      expect(s.guardRuns()).toEqual([]);
      expect(s.node("a")).toMatchObject({ passes: false, attempts: 1 });
      expect(s.node("a1")).toMatchObject({ passes: false, attempts: 0 });
      expect(s.meta(1)).toMatchObject({ agent_status: "retry", guard_outcome: "skipped", attempts_after: 1 });
      expect((await s.step()).exitCode).toBe(0);
      expect(s.agent(2).env.RUNNER_NODE_ID).toBe("a1");
      expect(s.agent(2).context["failure.md"]).toMatch(/said "done" but added 1 child node/);
    });
  });

  describe.concurrent("runner-owned fields", () => {
    it("agent edits to passes and attempts of open nodes are ignored: the nodes hold the runner's values", async () => {
      const s = await scenario({ tree: tree(node("root", { children: [node("a", { attempts: 2 }), node("b", { order: 1, attempts: 1 })] })) });
      s.script({
        1: {
          set: { a: { passes: true, attempts: 0 }, b: { passes: true, attempts: 3 }, root: { passes: true, attempts: 2 } },
          status: "retry",
        },
      });
      const result = await s.step();
      expect(result.exitCode, result.stderr).toBe(0);
      expect(await s.subjects()).toEqual([subject("t1", 1, "a", "decompose", "skipped")]);
      expect(s.node("a")).toMatchObject({ passes: false, attempts: 3 });
      expect(s.node("b")).toMatchObject({ passes: false, attempts: 1 });
      expect(s.node("root")).toMatchObject({ passes: false, attempts: 0 });
      expect(await s.git(["show", `HEAD:${TREE_FILE}`])).toBe(s.read(TREE_FILE).replace(/\n$/, ""));
      expect((await s.runner(["validate"])).exitCode).toBe(0);
    });
  });
});
