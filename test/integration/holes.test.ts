// Things a night throws that no agent did on purpose, and what a new user met (issue 19): replay
// finding `just` as the step does, a person's removal of a stuck leaf, and the smaller items.
import { execa } from "execa";
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { serializeTree } from "../../src/core/tree/canonical.js";
import { node, RUNNER_BIN, tree, writeFiles } from "../helpers/sandbox.js";
import { CONFIG_FILE, oneSentence, scenario, scenarioConfig, TREE_FILE } from "../helpers/scenario.js";

/** Bytes of every file under `dir`. */
function folderBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    total += entry.isDirectory() ? folderBytes(file) : statSync(file).size;
  }
  return total;
}

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

  it("`runner status | <a reader that stops at once>` (also show, log, doctor) ends quietly: no EPIPE stack trace", async () => {
    const s = await scenario({ tree: tree(node("root", { children: Array.from({ length: 400 }, (_, i) => node(`n${i}`, { order: i })) })) });
    s.script({ 1: { write: { "src/a.txt": "a\n" }, status: "done" } });
    expect((await s.step()).exitCode).toBe(0);
    for (const args of ["status", "show n0", "log", "doctor"]) {
      const piped = await execa("sh", ["-c", `node ${JSON.stringify(RUNNER_BIN)} ${args} | true`], {
        cwd: s.dir,
        env: s.env,
        extendEnv: false,
        reject: false,
      });
      expect(piped.stderr, args).not.toMatch(/EPIPE|at .*\(|Error/);
    }
  });

  it("the report's review commands run the runner itself (`runner audit`), never `npx runner`, an unrelated npm package", async () => {
    const s = await scenario({ tree: tree(node("root", { children: [node("a")] })) });
    s.script({ 1: { write: { "src/a.txt": "a\n" }, status: "done" } });
    expect((await s.step()).exitCode).toBe(0);
    const report = await s.runner(["report"]);
    expect(report.exitCode, report.stderr).toBe(0);
    const html = readFileSync(path.join(s.dir, ".runner/iterations/t1/report.html"), "utf8");
    expect(html).not.toContain("npx runner");
    expect(html).toContain("runner audit");
  });

  it("doctor and step: ✗ when the command executor's script (`bash agent.sh`) does not exist", async () => {
    const s = await scenario({ executor: ["bash", "agent.sh"] });
    const doctor = await s.runner(["doctor"]);
    expect(doctor.exitCode).toBe(1);
    expect(doctor.stdout).toMatch(/^✗ agent's program: agent\.sh \(missing\)$/m);
    const step = await s.step();
    expect(step.exitCode).toBe(1);
    expect(oneSentence(step.stderr)).toMatch(/^The agent's script "agent\.sh" .* does not exist in the repository/);
    expect(await s.subjects()).toEqual([]);
  });

  it("a large output.json is kept once: meta.json holds the summary bounded, not a second copy", async () => {
    const s = await scenario();
    const bytes = 8 * 1024 * 1024;
    s.script({
      1: {
        write: { "src/a.txt": "a\n" },
        sh: `node -e 'process.stdout.write(JSON.stringify({status:"done",summary:"x".repeat(${bytes})}))' > "$RUNNER_OUTPUT_FILE"`,
      },
    });
    const step = await s.step();
    expect(step.exitCode, step.stderr).toBe(0);
    const folder = path.join(s.dir, s.iterFile(1, ""));
    expect(statSync(path.join(folder, "output.json")).size).toBeGreaterThan(bytes);
    expect(folderBytes(folder)).toBeLessThan(bytes * 1.2);
    expect(s.meta(1).summary).toHaveLength(2000);
  });

  it("`runner run` stopping for no progress says so once", async () => {
    const s = await scenario({ tree: tree(node("root", { children: [node("a")] })), limits: "max_stalled_iterations = 2" });
    const nothing = { status: "done" as const, summary: "already there" };
    s.script({ 1: nothing, 2: nothing, 3: nothing });
    const run = await s.runner(["run"]);
    expect(run.exitCode).toBe(3);
    expect(run.stdout.match(/made no progress/g)).toHaveLength(1);
  });

  it("a missing tree file: status, doctor and step give one way out, and it is not `runner init` alone (which refuses while .runner/ exists)", async () => {
    const s = await scenario();
    await s.git(["rm", "-q", TREE_FILE]);
    await s.git(["commit", "-qm", "lose the tree"]);
    const init = await s.runner(["init", "--goal", "x"]);
    expect(init.exitCode).not.toBe(0);
    const status = await s.runner(["status"]);
    expect(oneSentence(status.stderr)).toMatch(
      /does not exist; restore it from git .* or, to start over, remove \.runner\/ and run `runner init`\.$/,
    );
    const doctor = await s.runner(["doctor"]);
    expect(doctor.stdout).toContain("restore it from git");
  });

  it("one node is `1 node`", async () => {
    const s = await scenario();
    writeFiles(s.dir, { [CONFIG_FILE]: scenarioConfig() });
    const status = await s.runner(["status"]);
    expect(status.stdout).toContain("0 of 1 node passed");
    expect(status.stdout).toContain("progress: 0 of 1 leaf passed");
    const validate = await s.runner(["validate"]);
    expect(validate.stdout).toContain("1 node, 0 passed");
    const doctor = await s.runner(["doctor"]);
    expect(doctor.stdout).toMatch(/task tree: 1 node;/);
  });

  it("a red guard whose failing assertion sits in the middle of long output: the excerpt keeps it, and run, show and log quote it", async () => {
    const filler = (from: number) => `i=${from}; while [ $i -lt ${from + 150} ]; do echo "ok $i - a passing check with some words"; i=$((i+1)); done`;
    const guard = `#!/bin/sh\n${filler(0)}\necho "FAIL tests/sum.test.js: expected 3 to be 4"\n${filler(1000)}\necho "1 failed, 300 passed"\nexit 1\n`;
    const s = await scenario({ tree: tree(node("root", { children: [node("a")] })), guard: ["sh", "guard.sh"], files: { "guard.sh": guard } });
    s.script({ 1: { write: { "src/a.txt": "a\n" }, status: "done" }, 2: { write: { "src/a.txt": "b\n" }, status: "done" } });
    const run = await s.runner(["run", "--max-iterations", "1"]);
    expect(run.stdout).toContain("expected 3 to be 4");
    expect(await s.message()).toContain("FAIL tests/sum.test.js: expected 3 to be 4");
    for (const args of [
      ["show", "a"],
      ["log", "--iteration", "1"],
    ]) {
      const shown = await s.runner(args);
      expect(shown.stdout, args.join(" ")).toContain("expected 3 to be 4");
    }
    expect((await s.step()).exitCode).toBe(0);
    expect(s.agent(2).context["failure.md"], "the next iteration is told it").toContain("expected 3 to be 4");
  });
});
