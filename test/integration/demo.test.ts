// The README's first command (`npm run demo` = `node bin/runner.js demo`) as a new user sees it: the
// whole loop on a throw-away repository with the built-in demo agent, no network, under a minute,
// a retry shown, every node passed, the run's git log; the repository it leaves passes audit and
// validate. With --json it prints only JSON lines.
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { PROJECT_ROOT, git, runner, tempDir, testEnv } from "../helpers/sandbox.js";

/** A new user's environment: no git identity, no node_modules/.bin on PATH (the demo must find its own `just`). */
function newUserEnv(): Record<string, string> {
  const env = testEnv({}, false);
  env.PATH = (env.PATH ?? "")
    .split(path.delimiter)
    .filter((entry) => !entry.includes("node_modules"))
    .join(path.delimiter);
  return env;
}

const LOOP_SUBJECT = /^[0-9a-f]{7,} chore\(loop\): run demo iter (\d+) node (\S+) (decompose|execute) guard=(pass|fail|skipped)$/;

// Honest time limits with room to spare: the demo took about 10 s on a quiet machine, far more beside other test runs.
describe("runner demo", { timeout: 360_000 }, () => {
  it("the README's first command runs `runner demo`", () => {
    const readme = readFileSync(path.join(PROJECT_ROOT, "README.md"), "utf8");
    const firstCommand = /```sh\n([^\n]*)/.exec(readme)?.[1] ?? "";
    expect(firstCommand).toContain("npm run demo");
    const pkg = JSON.parse(readFileSync(path.join(PROJECT_ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> };
    // It builds first (no install script builds dist/: see docs/decisions.md, "First contact").
    expect(pkg.scripts.demo).toBe("npm run build --silent && node bin/runner.js demo");
  });

  // (its speed, "under a minute" in the README, is `npm run bench`'s: a loaded machine stretches it for no defect)
  it("runs the whole loop: a retry, every node ✓, the git log; the repository passes audit and validate", async () => {
    const dir = path.join(tempDir("runner-demo-test-"), "demo");
    const result = await runner(PROJECT_ROOT, ["demo", "--dir", dir], { timeout: 300_000, env: newUserEnv() });
    expect(result.stderr).toBe("");
    expect(result.exitCode).toBe(0);
    const out = result.stdout;
    // The live part: one line per iteration (stdout is not a terminal here), a failed guard and its retry.
    const iterationLines = out.split("\n").filter((line) => line.startsWith("Iteration "));
    expect(iterationLines.length).toBeGreaterThanOrEqual(5);
    const failed = iterationLines.find((line) => line.includes("guard=fail"));
    expect(failed, out).toBeDefined();
    const failedNode = /node (\S+) execute/.exec(failed!)![1]!;
    const retry = iterationLines.slice(iterationLines.indexOf(failed!) + 1).find((line) => line.includes(`node ${failedNode} execute`));
    expect(retry).toContain("guard=pass");
    expect(out).toContain("Done: the root passes (run demo).");
    expect(out).toMatch(/^\d+ iterations, \d+ passed, 1 failed \(1 red guard\); time: agent [\d.]+s, guard [\d.]+s, runner [\d.]+s/m);

    // `runner status`: every node ✓.
    const status = out.slice(out.indexOf("$ runner status"), out.indexOf("$ git log"));
    const nodeLines = status.split("\n").filter((line) => /[✓○!] \S+ {2}/.test(line));
    expect(nodeLines.length).toBe(4);
    for (const line of nodeLines) expect(line, line).toContain("✓");
    expect(status).toContain("complete: all 4 nodes passed.");

    // The git log of the run, as the repository has it.
    const logPart = out.slice(out.indexOf("$ git log")).split("\n").slice(1);
    const shown = logPart.filter((line) => LOOP_SUBJECT.test(line));
    const actual = (await git(dir, ["log", "--oneline", "--no-decorate", "main..runner/demo"])).split("\n");
    expect(shown).toEqual(actual);
    expect(shown.length).toBe(iterationLines.length);
    expect(shown.at(-1)).toMatch(/iter 1 node root decompose guard=skipped$/);

    // The repository it leaves behind is a valid, auditable run.
    expect(await git(dir, ["status", "--porcelain"])).toBe("");
    const audit = await runner(dir, ["audit"]);
    expect(audit.stderr).toBe("");
    expect(audit.exitCode).toBe(0);
    const validate = await runner(dir, ["validate"]);
    expect(validate.stderr).toBe("");
    expect(validate.exitCode).toBe(0);
    // The code the demo agent wrote passes its tests.
    expect(readFileSync(path.join(dir, "src", "calc.js"), "utf8")).toContain("export function calc");
  });

  it("--json prints only JSON lines", async () => {
    const dir = path.join(tempDir("runner-demo-json-"), "demo");
    const result = await runner(PROJECT_ROOT, ["demo", "--dir", dir, "--json"], { timeout: 300_000, env: newUserEnv() });
    expect(result.stderr).toBe("");
    expect(result.exitCode).toBe(0);
    const events = result.stdout
      .split("\n")
      .filter((line) => line.length > 0)
      .map((line) => {
        expect(() => JSON.parse(line), line).not.toThrow();
        return JSON.parse(line) as Record<string, unknown>;
      });
    expect(events.length).toBeGreaterThan(10);
    expect(events.filter((event) => event.type === "iteration" && event.guard_outcome === "fail")).toHaveLength(1);
    expect(events.at(-1)).toMatchObject({ type: "summary", exit_code: 0, run_id: "demo", failures: 1 });
  });
});
