// `.git` packed as a run grows (issue 33, src/adapters/git/maintenance.ts): `runner run` packs the loose
// objects between iterations and when the run ends — with git's own automatic maintenance off in
// the repository's config, which nothing of the runner's honours or needs — and a runner killed
// while git packs leaves the repository whole: every commit readable, the run audited clean, and
// the next `runner run` going on from there.
import { describe, expect, it } from "vitest";
import { runRaw } from "../helpers/bad-input.js";
import { node, tree } from "../helpers/sandbox.js";
import { scenario, type AgentAction, type Scenario } from "../helpers/scenario.js";

const LEAVES = ["a", "b", "c", "d", "e"];
const PLAN = tree(node("root", { children: LEAVES.map((id, order) => node(id, { order })) }));
const PASS = (i: number): AgentAction => ({
  write: { [`src/file${i}.txt`]: `work ${i}\n` },
  status: "done",
  summary: `wrote file ${i}`,
  guard: { exit: 0 },
});

/** `git count-objects -v` as numbers: loose objects, packs. */
async function objects(s: Scenario): Promise<{ loose: number; packs: number }> {
  const out = await s.git(["count-objects", "-v"]);
  const field = (name: string) => Number(new RegExp(`^${name}: (\\d+)$`, "m").exec(out)![1]);
  return { loose: field("count"), packs: field("packs") };
}

async function packedRun(env: Record<string, string>): Promise<Scenario> {
  const s = await scenario({ tree: PLAN, env: { RUNNER_TEST_HOOKS: "1", ...env } });
  // (git's automatic maintenance off, as a user may have it: the runner packs by its own rule)
  await s.git(["config", "gc.auto", "0"]);
  await s.git(["config", "maintenance.auto", "false"]);
  s.script(Object.fromEntries(LEAVES.map((_, i) => [i + 1, PASS(i + 1)])));
  return s;
}

describe("runner run keeps .git packed", () => {
  it("packs what is loose every few iterations and when the run ends, with git's auto-gc off", async () => {
    const s = await packedRun({ RUNNER_TEST_MAINTAIN_EVERY: "2" });
    const before = await objects(s);
    expect(before.packs).toBe(0);
    const run = await s.runner(["run", "--max-iterations", "3"]);
    expect(run.stderr).toBe("");
    expect(run.exitCode).toBe(3);
    const after = await objects(s);
    expect(after.loose).toBe(0);
    expect(after.packs).toBeGreaterThanOrEqual(1);
    expect(await s.subjects()).toHaveLength(3);
    expect((await s.git(["fsck", "--full", "--no-progress"])).trim()).toBe("");
  });

  it("a runner killed while git packs loses nothing: the repository is whole, the run audited clean, and the next run goes on", async () => {
    const s = await packedRun({ RUNNER_TEST_MAINTAIN_EVERY: "1", RUNNER_TEST_KILL_AT: "maintenance" });
    const killed = await runRaw(s.dir, ["run"], s.env);
    expect(killed.signal, killed.stderr).toBe("SIGKILL");
    // Killed after its first iteration's commit, while git packed: the commit is there, readable, the work tree clean.
    expect(await s.subjects()).toEqual([expect.stringContaining("iter 1 node a execute guard=pass")]);
    expect((await s.git(["fsck", "--full", "--no-progress"])).trim()).toBe("");
    expect((await s.git(["status", "--porcelain"])).trim()).toBe("");
    // The next run, without the hook, goes on to the end.
    s.env = { ...s.env, RUNNER_TEST_KILL_AT: "" };
    const next = await s.runner(["run"]);
    expect(next.stderr).toBe("");
    expect(next.exitCode).toBe(0);
    expect(await s.subjects()).toHaveLength(LEAVES.length);
    const audit = await s.runner(["audit"]);
    expect(audit.stdout).toContain(`audit: run ${s.runId} is clean`);
    expect(audit.exitCode).toBe(0);
    expect((await s.git(["fsck", "--full", "--no-progress"])).trim()).toBe("");
    expect((await objects(s)).loose).toBe(0);
  });
});
