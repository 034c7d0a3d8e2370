// `runner step` refuses to start an iteration where it must not (seed 000 "Workspace + git policy",
// CONTRACT §4/§5): exit 1, one sentence on stderr, and nothing changed — same HEAD, same status
// (ignored files included, so no log folder appeared), the agent never ran.
import { describe, expect, it } from "vitest";
import { CONFIG_FILE, oneSentence, scenario, scenarioConfig, type Scenario } from "../helpers/scenario.js";
import { writeFiles } from "../helpers/sandbox.js";

async function expectRefusal(s: Scenario, pattern: RegExp): Promise<string> {
  s.script({ 1: { write: { "work.txt": "x" }, status: "done" } });
  const head = await s.head();
  const status = await s.porcelain();
  const result = await s.step();
  expect(result.exitCode, result.stderr).toBe(1);
  expect(result.stdout).toBe("");
  const sentence = oneSentence(result.stderr);
  expect(sentence).toMatch(pattern);
  expect(sentence).not.toMatch(/\n\s+at /);
  expect(await s.head()).toBe(head);
  expect(await s.porcelain()).toBe(status);
  expect(s.exists(".runner/iterations")).toBe(false);
  expect(s.exists(".runner/context")).toBe(false);
  expect(s.agentRan(1)).toBe(false);
  return sentence;
}

describe.concurrent("runner step refuses, changing nothing", () => {
  it("on main", async () => {
    const s = await scenario({ start: false });
    const sentence = await expectRefusal(s, /\bmain\b/);
    expect(sentence).toContain("runner start");
  });

  it("on master", async () => {
    const s = await scenario({ start: false, initialBranch: "master" });
    const sentence = await expectRefusal(s, /\bmaster\b/);
    expect(sentence).toContain("runner start");
  });

  it("with a modified tracked file", async () => {
    const s = await scenario({ start: "runner" });
    writeFiles(s.dir, { "agent.mjs": `${s.read("agent.mjs")}\n// edited by hand\n` });
    const sentence = await expectRefusal(s, /not clean/);
    expect(sentence).toContain("agent.mjs");
  });

  it("with an untracked file", async () => {
    const s = await scenario();
    writeFiles(s.dir, { "notes/todo.txt": "later\n" });
    const sentence = await expectRefusal(s, /not clean/);
    expect(sentence).toContain("notes/todo.txt");
  });

  it("on a detached HEAD", async () => {
    const s = await scenario();
    await s.git(["checkout", "-q", "--detach"]);
    await expectRefusal(s, /detached/i);
  });

  it("with an unknown key in the config (named with its key path)", async () => {
    const s = await scenario();
    writeFiles(s.dir, { [CONFIG_FILE]: `${scenarioConfig()}surprise_key = 7\n` });
    await s.git(["commit", "-q", "-am", "config with an unknown key"]);
    const sentence = await expectRefusal(s, /config\.toml/);
    expect(sentence).toContain("surprise_key");
  });
});
