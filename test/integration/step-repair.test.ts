// Seed 001 §5.1 REPAIR TREE through the built binary: an invalid tree after the agent is committed as
// the agent left it, the next step is a repair step (no leaf, its own prompt and subject), and
// repeated failed repairs stop the loop with a way out.
import { describe, expect, it } from "vitest";
import { oneSentence, repairSubject, scenario, subject, TREE_FILE } from "../helpers/scenario.js";
import { node, tree } from "../helpers/sandbox.js";

describe.concurrent("REPAIR TREE", () => {
  it("a passed node edited by the agent: committed as left, then a repair step restores it and the tree is valid again", async () => {
    const s = await scenario({ tree: tree(node("root", { children: [node("a", { passes: true, attempts: 1 }), node("b", { order: 1 })] })) });
    const valid = s.read(TREE_FILE);
    s.script({
      1: { set: { a: { title: "Rewritten by the agent" } }, status: "retry" },
      2: { treeText: valid, status: "done", summary: "restored a" },
    });
    const first = await s.step();
    expect(first.exitCode, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/invalid/);
    expect(await s.subjects()).toEqual([subject("t1", 1, "b", "decompose", "skipped")]);
    // Committed as the agent left it.
    const committed = JSON.parse(await s.git(["show", `HEAD:${TREE_FILE}`])) as { root: { children: { id: string; title: string }[] } };
    expect(committed.root.children.find((child) => child.id === "a")?.title).toBe("Rewritten by the agent");
    expect(await s.git(["status", "--porcelain"])).toBe("");
    // `runner validate` judges the tree as the next step will: against the tree the runner last
    // accepted, not against HEAD's (which is the agent's own edit).
    const check = await s.runner(["validate", "--json"]);
    expect(check.exitCode).toBe(1);
    const report = JSON.parse(check.stdout) as { valid: boolean; problems: { file: string; path: string; message: string }[] };
    expect(report.valid).toBe(false);
    expect(report.problems).toEqual([
      expect.objectContaining({ file: TREE_FILE, message: expect.stringMatching(/passed node "a" was changed \(title\).*last accepted/) as unknown }),
    ]);

    const second = await s.step();
    expect(second.exitCode, second.stderr).toBe(0);
    expect(await s.subjects()).toEqual([subject("t1", 1, "b", "decompose", "skipped"), repairSubject("t1", 2)]);
    const seen = s.agent(2);
    expect(seen.env.RUNNER_STEP_KIND).toBe("repair");
    expect(seen.env.RUNNER_NODE_ID).toBe("");
    expect(seen.env.RUNNER_ITERATION).toBe("2");
    expect(seen.stdin).toContain("REPAIR TREE");
    expect(seen.stdin).toMatch(/passed node "a" was changed \(title\)/);
    expect(s.meta(2)).toMatchObject({ kind: "repair", node_id: null, guard_outcome: "skipped" });
    expect(s.meta(2).path).toContain("repairTree");
    expect(s.meta(2).path).not.toContain("selectLeaf");
    expect((await s.runner(["validate"])).exitCode).toBe(0);
    expect(s.node("a")).toMatchObject({ title: "Title of a", passes: true, attempts: 1 });
    expect(await s.git(["status", "--porcelain"])).toBe("");
  });

  it("the selected leaf removed by the agent: committed as left, and the next step is a repair step", async () => {
    const s = await scenario({ tree: tree(node("root", { children: [node("a"), node("b", { order: 1 })] })) });
    const valid = s.read(TREE_FILE);
    const withoutA = `${JSON.stringify(tree(node("root", { children: [node("b", { order: 1 })] })), null, 2)}\n`;
    s.script({ 1: { treeText: withoutA, status: "retry" }, 2: { treeText: valid, status: "done" } });
    expect((await s.step()).exitCode).toBe(0);
    expect(await s.git(["show", `HEAD:${TREE_FILE}`])).toBe(withoutA.trimEnd());
    const second = await s.step();
    expect(second.exitCode, second.stderr).toBe(0);
    expect(await s.subjects()).toEqual([subject("t1", 1, "a", "decompose", "skipped"), repairSubject("t1", 2)]);
    expect(s.agent(2).stdin).toMatch(/selected node "a" was removed/);
    expect(s.read(TREE_FILE)).toBe(valid);
  });

  it("a tree that is not JSON: committed as left, repaired, valid again", async () => {
    const s = await scenario();
    const valid = s.read(TREE_FILE);
    s.script({
      1: { treeText: "{ this is not json", status: "retry" },
      2: { treeText: valid, status: "done" },
    });
    expect((await s.step()).exitCode).toBe(0);
    expect(await s.git(["show", `HEAD:${TREE_FILE}`])).toBe("{ this is not json");
    const second = await s.step();
    expect(second.exitCode, second.stderr).toBe(0);
    expect(await s.subjects()).toEqual([subject("t1", 1, "root", "decompose", "skipped"), repairSubject("t1", 2)]);
    expect(s.agent(2).env.RUNNER_STEP_KIND).toBe("repair");
    expect(s.agent(2).stdin).toMatch(/not valid JSON/);
    expect((await s.runner(["validate"])).exitCode).toBe(0);
    expect(s.read(TREE_FILE)).toBe(valid);
  });

  it("repeated failed repairs (max_repair_attempts 3) stop with exit 1 and how to restore the last valid tree", async () => {
    const s = await scenario();
    s.script({
      1: { treeText: "[broken", status: "retry" },
      2: { treeText: "[still broken", status: "done" },
      3: { status: "done" },
      4: { treeText: '{"version": 1}', status: "done" },
    });
    for (let i = 1; i <= 4; i++) {
      const result = await s.step();
      expect(result.exitCode, `step ${i}: ${result.stderr}`).toBe(0);
    }
    expect(await s.subjects()).toEqual([
      subject("t1", 1, "root", "decompose", "skipped"),
      repairSubject("t1", 2),
      repairSubject("t1", 3),
      repairSubject("t1", 4),
    ]);
    const head = await s.head();
    const stopped = await s.step();
    expect(stopped.exitCode).toBe(1);
    const sentence = oneSentence(stopped.stderr);
    expect(sentence).toContain("git checkout");
    expect(sentence).toContain(TREE_FILE);
    expect(sentence).toMatch(/3 repair steps/);
    expect(await s.head()).toBe(head);
    expect(s.agentRan(5)).toBe(false);
    expect(await s.git(["status", "--porcelain"])).toBe("");
  });
});
