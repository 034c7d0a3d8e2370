// The action's install step (issue 31 item 3): without a registry release, the runner is built and
// installed from the action's own checkout. GitHub checks an action out as the repository's tracked
// files at the ref the workflow names (a download of that commit's archive: no node_modules, no
// dist/); here that is a copy of the files git tracks (as they are in this working tree, export-ignore
// honoured) in a folder laid out as GitHub lays it out, used as GITHUB_ACTION_PATH. action.yml's steps
// run through test/helpers/actions-job.ts up to and including "Install the runner", with `npm
// install -g` into a prefix of the test's own; npm reaches only the npm registry (and its cache).
import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { createHash } from "node:crypto";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runJob } from "../helpers/actions-job.js";
import { PROJECT_ROOT, tempDir, testEnv } from "../helpers/sandbox.js";

/** The repository as GitHub hands it to a workflow that uses the action: its tracked files, nothing else. */
function actionCheckout(): string {
  const folder = path.join(tempDir("runner-actions-"), "_actions", "OWNER", "runner", "v1");
  const listed = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], { cwd: PROJECT_ROOT, encoding: "utf8" })
    .split("\0")
    .filter((file) => file !== "" && existsSync(path.join(PROJECT_ROOT, file)));
  const attributes = execFileSync("git", ["check-attr", "-z", "--stdin", "export-ignore"], {
    cwd: PROJECT_ROOT,
    input: listed.join("\0"),
    encoding: "utf8",
  }).split("\0");
  const ignored = new Set<string>();
  for (let i = 0; i + 2 < attributes.length; i += 3) if (attributes[i + 2] === "set") ignored.add(attributes[i]!);
  for (const file of listed.filter((f) => !ignored.has(f))) {
    mkdirSync(path.dirname(path.join(folder, file)), { recursive: true });
    copyFileSync(path.join(PROJECT_ROOT, file), path.join(folder, file));
  }
  return folder;
}

/** A workflow whose one job uses the action, stopped after its install step. */
function installJob(action: string, env: Record<string, string>, withPackage?: string) {
  const workflow = `on: push\njobs:\n  install:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: OWNER/runner@v1\n        with:\n          checkout: "false"\n${withPackage === undefined ? "" : `          package: ${JSON.stringify(withPackage)}\n`}`;
  return runJob({
    workflow,
    job: "install",
    event: { name: "push", payload: {} },
    remote: "",
    repository: "acme/app",
    env,
    actions: { "OWNER/runner@v1": action },
    stopAfter: "Install the runner",
    stepTimeoutMs: 900_000,
  });
}

describe("the action's install step, from a clean copy of the repository as GitHub checks an action out", () => {
  it("builds the runner there (npm ci, npm pack) and installs it with npm install -g; the cache is keyed on the lockfile's hash; runner --version works", async () => {
    const action = actionCheckout();
    expect(existsSync(path.join(action, "dist")), "no build output in the checkout").toBe(false);
    expect(existsSync(path.join(action, "node_modules"))).toBe(false);
    const prefix = tempDir("runner-npm-prefix-");
    const env = testEnv({
      npm_config_prefix: prefix,
      npm_config_update_notifier: "false",
      PATH: `${path.join(prefix, "bin")}:${process.env.PATH ?? ""}`,
    });
    const job = await installJob(action, env);
    const install = job.steps.find((step) => step.name === "Install the runner")!;
    expect(install.outcome, `${install.stdout}\n${install.stderr}`).toBe("success");
    const version = (JSON.parse(readFileSync(path.join(PROJECT_ROOT, "package.json"), "utf8")) as { version: string }).version;
    expect(install.stdout.trim().split("\n").at(-1)).toBe(version);
    const lockHash = createHash("sha256")
      .update(readFileSync(path.join(action, "package-lock.json")))
      .digest("hex");
    expect(job.caches).toEqual([{ path: "~/.npm", key: `guarded-runner-npm-Linux-${lockHash}` }]);

    // The installed command, not the checkout's: a copy of the package in the prefix, with what it ships.
    const installed = path.join(prefix, "lib", "node_modules", "guarded-runner");
    expect(existsSync(path.join(installed, "dist", "runner.cjs"))).toBe(true);
    expect(existsSync(path.join(installed, "src")), "only the package's files").toBe(false);
    const ran = spawnSync(path.join(prefix, "bin", "runner"), ["--version"], { env, encoding: "utf8" });
    expect(ran.stdout.trim()).toBe(version);
    const project = tempDir("runner-installed-use-");
    execFileSync("git", ["init", "-q"], { cwd: project, env });
    const init = spawnSync(path.join(prefix, "bin", "runner"), ["init", "--executor", "demo", "--goal", "A calculator"], {
      cwd: project,
      env,
      encoding: "utf8",
    });
    expect(init.status, init.stderr).toBe(0);
    const validate = spawnSync(path.join(prefix, "bin", "runner"), ["validate"], { cwd: project, env, encoding: "utf8" });
    expect(validate.status, validate.stdout + validate.stderr).toBe(0);
  }, 900_000);

  it("the package input installs what it names instead (no build, no cache); one it cannot install fails the step in one sentence", async () => {
    const action = actionCheckout();
    const prefix = tempDir("runner-npm-prefix-");
    const env = testEnv({ npm_config_prefix: prefix, npm_config_update_notifier: "false" });
    const missing = path.join(tempDir("runner-no-tarball-"), "guarded-runner-9.9.9.tgz");
    const job = await installJob(action, env, missing);
    const install = job.steps.find((step) => step.name === "Install the runner")!;
    expect(install.outcome).toBe("failure");
    expect(job.caches).toEqual([]);
    expect(job.steps.find((step) => step.id === "lock")?.outcome).toBe("skipped");
    expect(existsSync(path.join(action, "node_modules")), "nothing built").toBe(false);
    expect(install.stderr.trim().split("\n").at(-1)).toBe(
      `::error::npm install -g ${missing} failed (npm says why above); give the package input a published version (guarded-runner@0.1.0) or a tarball, or leave it empty to install from the action's own checkout.`,
    );
  }, 300_000);
});
