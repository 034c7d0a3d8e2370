// The README's install and first-use steps, run as written (issue 14: "following only the README, a
// user installs the CLI and runs it in a repository of their own"). The registry install is played
// with the tarball `npm pack` makes (what `npm publish` would upload), into a temp prefix; the clone
// install links this checkout into another temp prefix. Then the "Use it on your repository" steps
// run in a fresh repository of a user's own, with the demo agent in place of Codex (no network).
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { PROJECT_ROOT, tempDir, testEnv } from "../helpers/sandbox.js";

const README = readFileSync(path.join(PROJECT_ROOT, "README.md"), "utf8");
const VERSION = (JSON.parse(readFileSync(path.join(PROJECT_ROOT, "package.json"), "utf8")) as { version: string; name: string }).version;
const NAME = (JSON.parse(readFileSync(path.join(PROJECT_ROOT, "package.json"), "utf8")) as { name: string }).name;

/** The shell lines of the ```sh block between `<!-- name:begin` and `<!-- name:end -->`. */
function steps(name: string): string[] {
  const start = README.indexOf(`<!-- ${name}:begin`);
  const end = README.indexOf(`<!-- ${name}:end -->`);
  expect(start, `README has a ${name} block`).toBeGreaterThanOrEqual(0);
  const block = README.slice(start, end);
  const code = /```sh\n([\s\S]*?)```/.exec(block)?.[1] ?? "";
  return code.split("\n").filter((line) => line.trim() !== "");
}

/** Runs one README line with sh, in `cwd`, with `prefix`/bin first on PATH; returns stdout. */
function sh(line: string, cwd: string, prefix: string): string {
  const env = testEnv({ PATH: `${path.join(prefix, "bin")}:${process.env.PATH ?? ""}`, npm_config_update_notifier: "false" });
  const result = spawnSync("sh", ["-c", line], { cwd, env, encoding: "utf8", timeout: 120_000 });
  expect(result.status, `${line}\n${result.stdout}\n${result.stderr}`).toBe(0);
  return result.stdout;
}

describe("the README's install steps", () => {
  it("lead with the install that works today (from a clone), and say the registry install is for a published release", () => {
    const section = README.slice(README.indexOf("## Install"), README.indexOf("\n## ", README.indexOf("## Install") + 1));
    expect(section.indexOf("<!-- install-clone:begin")).toBeGreaterThanOrEqual(0);
    expect(section.indexOf("<!-- install-clone:begin")).toBeLessThan(section.indexOf("<!-- install:begin"));
    expect(section).toMatch(/published release/);
  });

  it("from the registry: the package `npm pack` makes installs globally and `runner` runs", () => {
    const lines = steps("install");
    expect(lines[0]).toMatch(new RegExp(`^npm install -g ${NAME} `));
    const out = tempDir("runner-pack-");
    const tarball = execFileSync("npm", ["pack", "--ignore-scripts", "--silent", "--pack-destination", out], { cwd: PROJECT_ROOT, encoding: "utf8" })
      .trim()
      .split("\n")
      .at(-1)!;
    const prefix = tempDir("runner-prefix-");
    // The registry stands in as the tarball; npm's cache (filled by `npm ci`) serves the dependencies.
    const install = lines[0]!.replace(
      `npm install -g ${NAME}`,
      `npm install -g --prefix ${prefix} ${path.join(out, tarball)} --prefer-offline --no-audit --no-fund`,
    );
    sh(install, out, prefix);
    expect(sh(lines[1]!, out, prefix).trim()).toBe(VERSION);
    // The installed package brings its own `just` (rust-just), the guard's default program.
    expect(existsSync(path.join(prefix, "lib", "node_modules", NAME, "node_modules", "rust-just"))).toBe(true);
  }, 120_000);

  it("from a clone, then the first-use steps in a repository of the user's own: init, doctor, start, run, status, report", () => {
    const clone = steps("install-clone");
    // `npm ci && npm run build` is what this checkout's own setup already ran (rebuilding here would
    // change dist/ under the other tests' feet); the rest runs as written.
    expect(clone[0]).toMatch(/^npm ci && npm run build\b/);
    const prefix = tempDir("runner-prefix-");
    sh(clone[1]!.replace("npm install -g .", `npm install -g --prefix ${prefix} . --no-audit --no-fund`), PROJECT_ROOT, prefix);
    expect(sh(clone[2]!, PROJECT_ROOT, prefix).trim()).toBe(VERSION);

    // A project of the user's own: a first commit, and a justfile whose `ci` recipe runs its tests.
    const project = tempDir("runner-my-project-");
    writeFileSync(path.join(project, "package.json"), `${JSON.stringify({ name: "my-project", private: true, type: "module" })}\n`);
    writeFileSync(path.join(project, "justfile"), "ci:\n    node --test test/\n");
    const git = (args: string[]) => execFileSync("git", args, { cwd: project, env: testEnv() });
    git(["init", "-q", "-b", "main"]);
    git(["add", "-A"]);
    git(["commit", "-q", "-m", "my project"]);
    const use = steps("use");
    expect(use[0]).toMatch(/^cd my-project\b/);
    expect(use.some((line) => line.includes("--executor codex"))).toBe(true);
    const outputs: string[] = [];
    for (const line of use.slice(1)) {
      // The demo agent stands in for Codex: no network, no model.
      outputs.push(sh(line.replace("--executor codex", "--executor demo"), project, prefix));
    }
    const all = outputs.join("\n");
    expect(all).toMatch(/✓ guard's recipe: justfile: ci/);
    expect(all).toMatch(/^Done: the root passes \(run \d{8}-\d{6}\)\.$/m);
    const tree = JSON.parse(readFileSync(path.join(project, ".runner/state/tree.json"), "utf8")) as { root: { passes: boolean } };
    expect(tree.root.passes).toBe(true);
    const branch = execFileSync("git", ["branch", "--show-current"], { cwd: project, encoding: "utf8" }).trim();
    expect(existsSync(path.join(project, ".runner/iterations", branch.replace("runner/", ""), "report.html"))).toBe(true);
  }, 180_000);
});
