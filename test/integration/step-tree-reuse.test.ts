// A step reads the agent's tree from the file the agent left, whatever the agent did with git (an
// agent that commits its own work: the commit is folded into the iteration). And tree.before.json
// is the tree file as the step loaded it.
import { writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { scenario, subject, TREE_FILE } from "../helpers/scenario.js";
import { node, runner, tree } from "../helpers/sandbox.js";

/** An agent that splits its leaf into two children and commits that itself, then answers "decomposed". */
const COMMITTING_AGENT = String.raw`
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
const file = ".runner/state/tree.json";
const tree = JSON.parse(readFileSync(file, "utf8"));
const stack = [tree.root];
while (stack.length > 0) {
  const n = stack.pop();
  if (n.id === process.env.RUNNER_NODE_ID) {
    for (const [order, id] of ["x1", "x2"].entries()) {
      n.children.push({ id, order, title: id, goal: "", acceptance: [], passes: false, attempts: 0, max_attempts: 3, children: [] });
    }
  }
  stack.push(...n.children);
}
writeFileSync(file, JSON.stringify(tree));
execFileSync("git", ["add", "-A"]);
execFileSync("git", ["commit", "-q", "-m", "the agent commits its own work"]);
writeFileSync(process.env.RUNNER_OUTPUT_FILE, JSON.stringify({ status: "decomposed", summary: "split it" }));
`;

describe.concurrent("the agent's tree after the agent", () => {
  it("an agent that commits its own tree change: the step reads the tree the agent left, and its commit is folded into the loop commit", async () => {
    const s = await scenario({
      tree: tree(node("root", { children: [node("a"), node("b", { order: 1 })] })),
      executor: ["node", "committing-agent.mjs"],
      files: { "committing-agent.mjs": COMMITTING_AGENT },
    });
    const result = await s.step();
    expect(result.exitCode, result.stderr).toBe(0);
    expect(s.node("a").children.map((child) => child.id)).toEqual(["x1", "x2"]);
    expect(await s.subjects()).toEqual([subject("t1", 1, "a", "decompose", "skipped")]);
    expect(s.meta(1)).toMatchObject({
      agent_status: "decomposed",
      tree_problems: [],
      agent_git: { agentCommits: [{ subject: "the agent commits its own work" }] },
    });
  });

  it("the tree before is the tree file as loaded, byte for byte; the tree after is the file the step wrote (both read back from git)", async () => {
    const s = await scenario({ tree: tree(node("root", { children: [node("a"), node("b", { order: 1 })] })) });
    // A valid tree that is not in canonical form (one line, children out of order), committed by hand.
    const handWritten = JSON.stringify({ version: 1, root: { ...node("root"), children: [node("b", { order: 1 }), node("a")] } });
    s.script({ 1: { write: { "out.txt": "ok\n" }, status: "done" } });
    await s.git(["checkout", "-q", "main"]);
    writeFileSync(`${s.dir}/${TREE_FILE}`, handWritten);
    await s.git(["commit", "-q", "-am", "hand-written tree"]);
    await s.git(["checkout", "-q", "runner/t1"]);
    await s.git(["merge", "-q", "--ff-only", "main"]);
    const result = await s.step();
    expect(result.exitCode, result.stderr).toBe(0);
    const snapshot = async (side: string) =>
      (await runner(s.dir, ["log", "--iteration", "1", "--tree", side], { env: s.env, exactOutput: true })).stdout;
    expect(await snapshot("before")).toBe(handWritten);
    expect(await snapshot("after")).toBe(s.read(TREE_FILE));
    expect(s.node("a")).toMatchObject({ passes: true });
  });
});
