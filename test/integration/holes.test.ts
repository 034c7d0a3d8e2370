// Things a night throws that no agent did on purpose, and what a new user met (issue 19): replay
// finding `just` as the step does, a person's removal of a stuck leaf, and the smaller items.
import { describe, expect, it } from "vitest";
import { serializeTree } from "../../src/core/canonical.js";
import { node, tree, writeFiles } from "../helpers/sandbox.js";
import { oneSentence, scenario, TREE_FILE } from "../helpers/scenario.js";

/** A PATH with node, git and sh but no `just` (/usr/bin holds node here; the test checks there is no just). */
function pathWithoutJust(): string {
  return ["/usr/local/bin", "/usr/bin", "/bin"].join(":");
}

describe.concurrent("issue 19: replay, a person's removal, smaller items", () => {
  it("`runner audit --replay` finds the runner's own `just` as the step does: an honest run replays clean with no `just` on PATH", async () => {
    const s = await scenario({
      tree: tree(node("root", { children: [node("a")] })),
      guard: ["just", "ci"],
      files: { justfile: "ci:\n    test -f src/a.txt\n" },
    });
    s.script({ 1: { write: { "src/a.txt": "a\n" }, status: "done" } });
    const step = await s.step();
    expect(step.exitCode, step.stderr).toBe(0);
    expect(await s.subjects()).toEqual(["chore(loop): run t1 iter 1 node a execute guard=pass"]);
    s.env = { ...s.env, PATH: pathWithoutJust() };
    const which = await s.runner(["audit", "--replay"]);
    expect(which.exitCode, `${which.stdout}${which.stderr}`).toBe(0);
  });

  it("a person removes a stuck leaf whose siblings all passed and commits: the next step refuses in one sentence that says what to do, never an internal error", async () => {
    const s = await scenario({
      tree: tree(
        node("root", {
          children: [node("a", { order: 0, passes: true, attempts: 1 }), node("b", { order: 1, attempts: 3, max_attempts: 3 })],
        }),
      ),
    });
    // The person's edit: b removed, nothing else.
    writeFiles(s.dir, { [TREE_FILE]: serializeTree(tree(node("root", { children: [node("a", { order: 0, passes: true, attempts: 1 })] }))) });
    await s.git(["commit", "-qam", "remove the stuck leaf b"]);
    const step = await s.step();
    expect(step.stderr).not.toMatch(/Internal error|bug/i);
    expect(step.exitCode, step.stderr).toBe(1);
    expect(oneSentence(step.stderr)).toMatch(/\$\.root\.passes.*set it to true.*commit/);
    const status = await s.runner(["status"]);
    expect(status.stderr).toMatch(/set it to true/);
  });
});
