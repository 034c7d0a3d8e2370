// The guard's definition is the starting commit's, for the guards people use (issue 19 §1): an
// agent that rewrites what `npm test`, `npm run ci`, `just --justfile sub/justfile ci` or `make
// check` runs never gets guard=pass for failing work — the change is taken back and named — and
// `runner audit` flags a commit that changed the definition between iterations. Through the built
// binary, in real repositories, with scripted agents; the guard (guard.sh) judges the content.
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { git, node, runner, tempDir, tree, writeFiles } from "../helpers/sandbox.js";
import { expectAudit, expectLoopHistory, GUARD_SH, hostileScenario, runHistory } from "../helpers/hostile.js";
import { subject, type Scenario } from "../helpers/scenario.js";

const manifest = (scripts: Record<string, string>, extra: Record<string, unknown> = {}) =>
  `${JSON.stringify({ name: "project", version: "1.0.0", private: true, ...extra, scripts }, null, 2)}\n`;
/** npm without the network: nothing it runs here needs it. */
const NPM_ENV = { npm_config_update_notifier: "false", npm_config_audit: "false", npm_config_fund: "false", npm_config_offline: "true" };

async function subjects(s: Scenario): Promise<string[]> {
  return (await runHistory(s)).map((c) => c.subject);
}

/** A person's commit on the run branch (between iterations). */
async function commitByHand(s: Scenario, files: Record<string, string>, message: string): Promise<void> {
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(s.dir, name)), { recursive: true });
    writeFileSync(path.join(s.dir, name), text);
  }
  await s.git(["add", "--", ...Object.keys(files)]);
  await s.git(["-c", "user.name=A Person", "-c", "user.email=person@example.com", "commit", "-q", "-m", message]);
}

describe.concurrent("the guard's definition is the starting commit's", () => {
  it("npm test: the agent's `test` script is taken back (its new dependency kept), failing work is guard=fail, audit clean", async () => {
    const s = await hostileScenario({ guard: ["npm", "test"], env: NPM_ENV, files: { "package.json": manifest({ test: "sh guard.sh" }) } });
    const agentManifest = manifest({ test: "true", build: "tsc" }, { dependencies: { "left-pad": "1.3.0" } });
    s.script({ 1: { write: { "src/a.txt": "not ok\n", "package.json": agentManifest }, status: "done" } });
    const step = await s.step();
    expect(step.exitCode, step.stderr).toBe(0);
    expect(await subjects(s)).toEqual([subject("t1", 1, "a", "execute", "fail")]);
    expect(await s.message()).toMatch(/Runner-Failure: The iteration changed protected paths \(package\.json scripts\.test\)/);
    const committed = JSON.parse(await s.git(["show", "HEAD:package.json"]));
    expect(committed.scripts).toEqual({ test: "sh guard.sh", build: "tsc" });
    expect(committed.dependencies, "the agent's other change of the manifest is kept").toEqual({ "left-pad": "1.3.0" });
    expect(JSON.parse(s.read("package.json")).scripts.test).toBe("sh guard.sh");
    expect(s.read(s.iterFile(1, "protected-scripts.patch"))).toContain('+    "test": "true"');
    expect(s.agent(1).stdin).toContain("package.json scripts.test");
    await expectLoopHistory(s, 1);
    await expectAudit(s, true);
  });

  it("npm test: adding a dependency to package.json still works (guard=pass)", async () => {
    const s = await hostileScenario({ guard: ["npm", "test"], env: NPM_ENV, files: { "package.json": manifest({ test: "sh guard.sh" }) } });
    const agentManifest = manifest({ test: "sh guard.sh" }, { dependencies: { "left-pad": "1.3.0" } });
    s.script({ 1: { write: { "src/a.txt": "ok\n", "package.json": agentManifest }, status: "done" } });
    const step = await s.step();
    expect(step.exitCode, step.stderr).toBe(0);
    expect(await subjects(s)).toEqual([subject("t1", 1, "a", "execute", "pass")]);
    expect(await s.git(["show", "HEAD:package.json"])).toBe(agentManifest.trimEnd());
    await expectAudit(s, true);
  });

  it("npm run ci calling `npm run lint && npm run unit`: the agent's `unit` (and a new `preci`) are taken back, guard=fail", async () => {
    const scripts = { ci: "npm run lint && npm run unit", lint: "true", unit: "sh guard.sh" };
    const s = await hostileScenario({ guard: ["npm", "run", "ci"], env: NPM_ENV, files: { "package.json": manifest(scripts) } });
    s.script({
      1: { write: { "src/a.txt": "not ok\n", "package.json": manifest({ ...scripts, unit: "echo skipped", preci: "true" }) }, status: "done" },
    });
    const step = await s.step();
    expect(step.exitCode, step.stderr).toBe(0);
    expect(await subjects(s)).toEqual([subject("t1", 1, "a", "execute", "fail")]);
    expect(s.meta(1).failure).toBe(
      "The iteration changed protected paths (package.json scripts.preci, package.json scripts.unit), which the agent may not touch; the guard stage failed.",
    );
    expect(await s.git(["show", "HEAD:package.json"]), "nothing else changed: the manifest is the start's, byte for byte").toBe(
      manifest(scripts).trimEnd(),
    );
    await expectAudit(s, true);
  });

  it("pnpm test and yarn test (stand-ins that run npm: neither is installed here): the agent's `test` script is taken back, guard=fail", async () => {
    const bin = tempDir("runner-pm-");
    for (const program of ["pnpm", "yarn"]) {
      writeFileSync(path.join(bin, program), '#!/bin/sh\nexec npm "$@"\n');
      chmodSync(path.join(bin, program), 0o755);
    }
    for (const program of ["pnpm", "yarn"]) {
      const s = await hostileScenario({ guard: [program, "test"], env: NPM_ENV, files: { "package.json": manifest({ test: "sh guard.sh" }) } });
      s.env = { ...s.env, PATH: `${bin}${path.delimiter}${s.env.PATH}` };
      s.script({ 1: { write: { "src/a.txt": "not ok\n", "package.json": manifest({ test: "exit 0" }) }, status: "done" } });
      const step = await s.step();
      expect(step.exitCode, step.stderr).toBe(0);
      expect(await subjects(s), program).toEqual([subject("t1", 1, "a", "execute", "fail")]);
      expect(s.meta(1).failure, program).toContain("changed protected paths (package.json scripts.test)");
      expect(JSON.parse(s.read("package.json")).scripts.test).toBe("sh guard.sh");
    }
  });

  it("just --justfile sub/justfile ci: the agent's rewrite of sub/justfile, or of the script its recipe calls, is taken back", async () => {
    const files = { "sub/justfile": "ci:\n    cd .. && sh scripts/check.sh\n", "scripts/check.sh": "sh guard.sh\n" };
    const s = await hostileScenario({
      guard: ["just", "--justfile", "sub/justfile", "ci"],
      tree: tree(node("root", { children: [node("a", { order: 0 })] })),
      files,
    });
    s.script({
      1: { write: { "src/a.txt": "not ok\n", "sub/justfile": "ci:\n    true\n" }, status: "done" },
      2: { write: { "src/a.txt": "still not ok\n", "scripts/check.sh": "exit 0\n" }, status: "done" },
    });
    for (const iteration of [1, 2]) expect((await s.step()).exitCode, `iteration ${iteration}`).toBe(0);
    expect(await subjects(s)).toEqual([subject("t1", 1, "a", "execute", "fail"), subject("t1", 2, "a", "execute", "fail")]);
    expect(s.meta(1).failure).toContain("changed protected paths (sub/justfile)");
    expect(s.meta(2).failure).toContain("changed protected paths (scripts/check.sh)");
    expect(s.read("sub/justfile")).toBe(files["sub/justfile"]);
    expect(s.read("scripts/check.sh")).toBe(files["scripts/check.sh"]);
    expect(s.read("guard.sh")).toBe(GUARD_SH);
    await expectLoopHistory(s, 2);
    await expectAudit(s, true);
  });

  it("make check: a GNUmakefile the agent adds (make would read it first) is removed, guard=fail", async () => {
    const s = await hostileScenario({ guard: ["make", "check"], files: { Makefile: "check:\n\tsh guard.sh\n" } });
    s.script({ 1: { write: { "src/a.txt": "not ok\n", GNUmakefile: "check:\n\ttrue\n" }, status: "done" } });
    const step = await s.step();
    expect(step.exitCode, step.stderr).toBe(0);
    expect(await subjects(s)).toEqual([subject("t1", 1, "a", "execute", "fail")]);
    expect(s.meta(1).failure).toContain("changed protected paths (GNUmakefile)");
    expect(s.exists("GNUmakefile")).toBe(false);
    await expectAudit(s, true);
  });
});

describe.concurrent("runner audit re-checks the guard's definition from git alone", () => {
  it("a person's commit between iterations that weakens sub/justfile is flagged; one that adds a dependency is not", async () => {
    const s = await hostileScenario({
      guard: ["just", "--justfile", "sub/justfile", "ci"],
      files: { "sub/justfile": "ci:\n    cd .. && sh guard.sh\n", "package.json": manifest({ test: "sh guard.sh" }) },
    });
    s.script({ 1: { write: { "src/a.txt": "ok\n" }, status: "done" }, 2: { write: { "src/b.txt": "not ok\n" }, status: "done" } });
    expect((await s.step()).exitCode).toBe(0);
    await commitByHand(s, { "package.json": manifest({ test: "sh guard.sh" }, { dependencies: { x: "1.0.0" } }) }, "Add a dependency");
    await commitByHand(s, { "sub/justfile": "ci:\n    true\n" }, "Make the guard pass");
    const step = await s.step();
    expect(step.exitCode, step.stderr).toBe(0);
    expect((await subjects(s)).at(-1), "the weakened guard passed failing work").toBe(subject("t1", 2, "b", "execute", "pass"));
    const audit = await s.runner(["audit", "--json"]);
    expect(audit.exitCode, audit.stdout).toBe(1);
    const violations: { message: string }[] = JSON.parse(audit.stdout).violations;
    const definition = violations.filter((v) => v.message.includes("guard's definition"));
    expect(definition.map((v) => v.message)).toEqual([
      "a commit between iterations changed the guard's definition (sub/justfile): the iterations after it were judged by another guard, so check it by hand",
    ]);
  });

  it("a file the definition comes to name (a person's commit) is watched from then on: a later commit that changes it is flagged", async () => {
    const s = await hostileScenario({ guard: ["make", "check"], files: { Makefile: "check:\n\tsh guard.sh\n" } });
    s.script({ 1: { write: { "src/a.txt": "ok\n" }, status: "done" }, 2: { write: { "src/b.txt": "ok\n" }, status: "done" } });
    expect((await s.step()).exitCode).toBe(0);
    await commitByHand(s, { Makefile: "check:\n\tsh guard.sh\n\tsh extra.sh\n", "extra.sh": "exit 1\n" }, "Check more");
    await commitByHand(s, { "extra.sh": "exit 0\n" }, "Check less");
    expect((await s.step()).exitCode).toBe(0);
    const audit = await s.runner(["audit", "--json"]);
    expect(audit.exitCode, audit.stdout).toBe(1);
    const violations: { commit: string; message: string }[] = JSON.parse(audit.stdout).violations;
    const lessSha = (await s.git(["log", "--format=%H", "--grep=^Check less$"])).trim();
    expect(violations.filter((v) => v.commit === lessSha).map((v) => v.message)).toEqual([
      "a commit between iterations changed the guard's definition (extra.sh): the iterations after it were judged by another guard, so check it by hand",
      'a commit between loop commits that the runner did not make ("Check less"); the runner never lets the agent commit, so check it by hand',
    ]);
  });

  it("a loop commit (here forged: the runner never makes one) that changes the definition is flagged", async () => {
    const s = await hostileScenario({ guard: ["make", "check"], files: { Makefile: "check:\n\tsh guard.sh\n" } });
    s.script({ 1: { write: { "src/a.txt": "ok\n" }, status: "done" } });
    expect((await s.step()).exitCode).toBe(0);
    writeFileSync(path.join(s.dir, "Makefile"), "check:\n\ttrue\n");
    await s.git(["commit", "-q", "-am", `${subject("t1", 2, "b", "execute", "skipped")}\n\nRunner-Status: retry`]);
    const audit = await s.runner(["audit", "--json"]);
    expect(audit.exitCode, audit.stdout).toBe(1);
    const messages: string[] = JSON.parse(audit.stdout).violations.map((v: { message: string }) => v.message);
    expect(messages).toContain("changed the guard's definition (Makefile), which the runner takes back from every iteration");
  });

  it("a person's commit that changes package.json scripts.test under an npm test guard is flagged, naming the entry", async () => {
    const s = await hostileScenario({ guard: ["npm", "test"], env: NPM_ENV, files: { "package.json": manifest({ test: "sh guard.sh" }) } });
    s.script({ 1: { write: { "src/a.txt": "ok\n" }, status: "done" }, 2: { write: { "src/b.txt": "ok\n" }, status: "done" } });
    expect((await s.step()).exitCode).toBe(0);
    await commitByHand(s, { "package.json": manifest({ test: "true" }) }, "Skip the tests");
    expect((await s.step()).exitCode).toBe(0);
    const audit = await s.runner(["audit"]);
    expect(audit.exitCode, audit.stdout).toBe(1);
    expect(audit.stderr).toContain("changed the guard's definition (package.json scripts.test)");
  });
});

describe.concurrent("runner init and runner doctor say what protects the guard", () => {
  it("init (guard `just ci`) and doctor (guard `make check`) name the definition's files and script entries", async () => {
    const dir = tempDir();
    await git(dir, ["init", "-q", "-b", "main"]);
    writeFiles(dir, { justfile: "ci:\n    bash scripts/ci.sh\n", "scripts/ci.sh": "npm test\n", "package.json": manifest({ test: "node --test" }) });
    await git(dir, ["add", "-A"]);
    await git(dir, ["commit", "-q", "-m", "project"]);
    const init = await runner(dir, ["init"]);
    expect(init.exitCode, init.stderr).toBe(0);
    expect(init.stdout).toContain("the guard `just ci` is protected by: justfile, scripts/ci.sh, package.json scripts (test)");

    const s = await hostileScenario({
      guard: ["make", "check"],
      files: { Makefile: "check:\n\t./run-checks.sh\n", "run-checks.sh": "sh guard.sh\n" },
    });
    const doctor = await s.runner(["doctor"]);
    expect(doctor.stdout).toMatch(
      /✓ guard's definition: Makefile, guard\.sh, run-checks\.sh \(at HEAD; the agent's changes to them are taken back\)/,
    );
  });
});

describe.concurrent("changes to tests are visible (issue 19 §2)", () => {
  it("an iteration that weakens a test records it (Runner-Tests); log, show, the report and meta.json name it; the next does not", async () => {
    const s = await hostileScenario({ files: { "test/a.test.js": "assert(ok)\n", "pkg/parse_test.go": "package pkg\n" } });
    s.script({
      1: {
        write: { "src/a.txt": "ok\n", "test/a.test.js": "// skipped\n", "pkg/parse_test.go": "package pkg // none\n", "pkg/parse.go": "" },
        status: "done",
      },
      2: { write: { "src/b.txt": "ok\n" }, status: "done" },
    });
    for (const i of [1, 2]) expect((await s.step()).exitCode, `step ${i}`).toBe(0);
    const history = await runHistory(s);
    expect(await s.message(history[0]!.sha)).toMatch(/^Runner-Tests: pkg\/parse_test\.go, test\/a\.test\.js$/m);
    expect(await s.message(history[1]!.sha)).not.toContain("Runner-Tests");
    expect(s.meta(1).tests_changed).toEqual(["pkg/parse_test.go", "test/a.test.js"]);

    const log = await s.runner(["log"]);
    expect(log.stdout).toContain("iteration 1 changed tests: pkg/parse_test.go, test/a.test.js");
    expect(log.stdout).not.toContain("iteration 2 changed tests");
    const json = JSON.parse((await s.runner(["log", "--json"])).stdout);
    expect(json.iterations.map((e: { tests_changed: string[] }) => e.tests_changed)).toEqual([["pkg/parse_test.go", "test/a.test.js"], []]);
    expect((await s.runner(["log", "--iteration", "1"])).stdout).toContain("tests_changed: pkg/parse_test.go, test/a.test.js");
    expect((await s.runner(["show", "a"])).stdout).toContain("tests changed: pkg/parse_test.go, test/a.test.js");
    const report = await s.runner(["report", "--output", "report.html"]);
    expect(report.exitCode, report.stderr).toBe(0);
    expect(s.read("report.html")).toContain("<strong>Tests changed:</strong> <code>pkg/parse_test.go</code>, <code>test/a.test.js</code>");
  });

  it("[guard] test_patterns replaces the conventions", async () => {
    const s = await hostileScenario({ guardConfig: 'test_patterns = ["checks/**"]', files: { "checks/one.sh": "true\n", "test/a.test.js": "" } });
    s.script({ 1: { write: { "src/a.txt": "ok\n", "checks/one.sh": "exit 0\n", "test/a.test.js": "x\n" }, status: "done" } });
    expect((await s.step()).exitCode).toBe(0);
    expect(await s.message()).toMatch(/^Runner-Tests: checks\/one\.sh$/m);
  });
});

describe.concurrent("a take-back leaves the commit's kind true", () => {
  it("an agent that changes only the guard's definition: the commit, taken back, changes only .runner/, is named so, and audit is clean", async () => {
    const s = await hostileScenario({ guard: ["make", "check"], files: { Makefile: "check:\n\tsh guard.sh\n" } });
    s.script({ 1: { write: { Makefile: "check:\n\ttrue\n" }, status: "done" }, 2: { write: { Makefile: "check:\n\ttrue\n" }, status: "retry" } });
    for (const i of [1, 2]) expect((await s.step()).exitCode, `step ${i}`).toBe(0);
    expect(await subjects(s)).toEqual([subject("t1", 1, "a", "decompose", "fail"), subject("t1", 2, "a", "decompose", "skipped")]);
    expect(s.node("a").attempts).toBe(2);
    expect(s.meta(1).failure).toContain("changed protected paths (Makefile)");
    await expectAudit(s, true);
  });
});
