// Prompt templates (issue 4, seed 004 "prompts in the repository"): built in, overridable per
// repository in .runner/prompts/ (leaf.md, repair.md); the stuck-leaf prompt asks for decomposition.
import { describe, expect, it } from "vitest";
import { node, tree } from "../helpers/sandbox.js";
import { scenario } from "../helpers/scenario.js";

describe("prompt templates", () => {
  it("a repository's .runner/prompts/leaf.md replaces the built-in leaf template, placeholders filled", async () => {
    const s = await scenario({
      tree: tree(node("root", { children: [node("a", { title: "Do A", order: 1 })] })),
      files: {
        ".runner/prompts/leaf.md":
          "CUSTOM LEAF for {{node_id}} ({{node_title}}), path {{node_path}}, {{attempts}}/{{max_attempts}}; answer in {{output_file}}\n",
      },
    });
    s.script({ 1: { write: { "a.txt": "x" }, status: "done" } });
    const result = await s.step();
    expect(result.exitCode, result.stderr).toBe(0);
    const prompt = s.read(s.iterFile(1, "prompt.md"));
    expect(prompt).toBe(`CUSTOM LEAF for a (Do A), path root › a, 0/3; answer in ${s.dir}/${s.iterFile(1, "output.json")}\n`);
  });

  it("without an override the built-in template carries the contract, the goal and the node", async () => {
    const s = await scenario({ tree: tree(node("root", { children: [node("a", { order: 1 })] })) });
    s.script({ 1: { write: { "a.txt": "x" }, status: "done" } });
    expect((await s.step()).exitCode).toBe(0);
    const prompt = s.read(s.iterFile(1, "prompt.md"));
    expect(prompt).toContain("# Runner contract");
    expect(prompt).toContain("# Your task: node `a`");
    expect(prompt).toContain("passes` and `attempts` are runner-owned");
    expect(prompt).not.toContain("{{");
  });

  it("the stuck-leaf prompt asks the agent to decompose the leaf", async () => {
    const s = await scenario({ tree: tree(node("root", { children: [node("a", { order: 1, attempts: 2, max_attempts: 2 })] })) });
    s.script({ 1: { decompose: [{ id: "a1" }], status: "decomposed" } });
    expect((await s.step()).exitCode).toBe(0);
    const prompt = s.read(s.iterFile(1, "prompt.md"));
    expect(prompt).toMatch(/This leaf is stuck: it has used all 2 attempts/);
    expect(prompt).toMatch(/Decompose it/);
  });

  it("a repository's .runner/prompts/repair.md replaces the repair template", async () => {
    const s = await scenario({
      tree: tree(node("root", { children: [node("a", { order: 1 })] })),
      files: { ".runner/prompts/repair.md": "CUSTOM REPAIR\n{{problems}}\n" },
    });
    s.script({ 1: { treeText: "{ not json", status: "retry" }, 2: { treeText: s.read(".runner/state/tree.json"), status: "done" } });
    expect((await s.step()).exitCode).toBe(0);
    const repair = await s.step();
    expect(repair.exitCode, repair.stderr).toBe(0);
    const prompt = s.read(s.iterFile(2, "prompt.md"));
    expect(prompt.startsWith("CUSTOM REPAIR\n- $: is not valid JSON")).toBe(true);
  });

  it("runner validate reports a template placeholder the template kind does not know", async () => {
    const s = await scenario({ files: { ".runner/prompts/leaf.md": "{{node_id}} {{nod_title}}\n" } });
    const result = await s.runner(["validate"]);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain(".runner/prompts/leaf.md $: uses unknown placeholder {{nod_title}}");
  });
});
