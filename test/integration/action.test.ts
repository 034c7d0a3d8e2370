// The GitHub Action (issue 22 §2, issue 31 item 3, issue 34 item 9). action.yml, the example
// workflows and this repository's CI workflow are checked against the GitHub Actions schemas offline
// (@action-validator/core), and a broken file fails that check. The action's own steps
// (scripts/action/run.mjs, pull-request.mjs) run end to end here as action.yml calls them: in a
// fresh clone whose remote is a bare repository (the push lands there), with the built runner on
// PATH and a scripted agent; the pull request goes to a scripted HTTP server on 127.0.0.1 standing
// in for the GitHub API. The issue example runs whole, its job and action.yml's steps as the Actions
// runner runs them (test/helpers/actions-job.ts), from the event file of a labelled issue to the
// pull request that closes it. The upload step is actions/upload-artifact: the tests check that the
// file it is given exists. The install step is action-install.test.ts.
import { validateAction, validateWorkflow } from "@action-validator/core";
import { execa } from "execa";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { EXECUTOR_CHOICES } from "../../src/cli/commands.js";
import { runJob } from "../helpers/actions-job.js";
import { PROJECT_ROOT, RUNNER_BIN, runnerOnPath, tempDir, testEnv } from "../helpers/sandbox.js";
import { scenario, subject, type Scenario } from "../helpers/scenario.js";

const ACTION = readFileSync(path.join(PROJECT_ROOT, "action.yml"), "utf8");
const WORKFLOW = readFileSync(path.join(PROJECT_ROOT, "docs", "examples", "runner-matrix.yml"), "utf8");
const ISSUE_WORKFLOW = readFileSync(path.join(PROJECT_ROOT, "docs", "examples", "runner-issue.yml"), "utf8");
const CI_WORKFLOW = readFileSync(path.join(PROJECT_ROOT, ".github", "workflows", "ci.yml"), "utf8");

describe("the action and the example workflow against the GitHub Actions schemas", () => {
  it("action.yml, the example workflows and this repository's CI workflow are valid", () => {
    expect(validateAction(ACTION).errors).toEqual([]);
    expect(validateWorkflow(WORKFLOW).errors).toEqual([]);
    expect(validateWorkflow(ISSUE_WORKFLOW).errors).toEqual([]);
    expect(validateWorkflow(CI_WORKFLOW).errors).toEqual([]);
  });

  it("a broken action file fails the check (a run step without its shell, an unknown runs.using), and so do broken workflows", () => {
    expect(validateAction(ACTION.replace("      shell: bash\n      run: node", "      run: node")).errors).not.toEqual([]);
    expect(validateAction(ACTION.replace("using: composite", "using: compost")).errors).not.toEqual([]);
    for (const workflow of [WORKFLOW, ISSUE_WORKFLOW, CI_WORKFLOW])
      expect(validateWorkflow(workflow.replace("runs-on: ubuntu-latest", "runs-on: [")).errors).not.toEqual([]);
    expect(validateWorkflow(CI_WORKFLOW.replace("on:\n  push:", "on:\n  pushed:")).errors).not.toEqual([]);
  });

  it("this repository's CI runs .ci/run on every push and pull request, on Node 20 and ubuntu-latest", () => {
    const ci = parse(CI_WORKFLOW) as { on: Record<string, unknown>; jobs: Record<string, { "runs-on": string; steps: Record<string, unknown>[] }> };
    expect(Object.keys(ci.on).sort()).toEqual(["pull_request", "push"]);
    expect(Object.values(ci.on)).toEqual([null, null]);
    const [job, ...others] = Object.values(ci.jobs);
    expect(others).toEqual([]);
    expect(job!["runs-on"]).toBe("ubuntu-latest");
    expect(job!.steps.find((step) => String(step.uses).startsWith("actions/setup-node@"))?.with).toMatchObject({ "node-version": "20" });
    expect(job!.steps.at(-1)).toEqual({ run: ".ci/run" });
    expect(statSync(path.join(PROJECT_ROOT, ".ci", "run")).mode & 0o111).not.toBe(0);
  });

  it("the executor input names every agent the runner's init takes (EXECUTOR_CHOICES, pi, copilot and cline among them)", () => {
    const action = parse(ACTION) as { inputs: Record<string, { description: string; default: string }> };
    const named = /yet: (.*) \(`runner init --executor`/.exec(action.inputs.executor!.description)?.[1] ?? "";
    const kinds = named.split(/, | or /);
    expect(new Set(kinds)).toEqual(new Set([...EXECUTOR_CHOICES, "pi", "copilot", "cline"]));
    expect(kinds).toHaveLength(new Set(kinds).size);
    expect(EXECUTOR_CHOICES).toContain(action.inputs.executor!.default);
  });

  it("the README's workflow block is valid, runs a matrix one job per run branch, and gives the action only inputs it has", () => {
    const readme = readFileSync(path.join(PROJECT_ROOT, "README.md"), "utf8");
    const block = readme.slice(readme.indexOf("<!-- many-goals-workflow:begin"), readme.indexOf("<!-- many-goals-workflow:end -->"));
    const yaml = /```yaml\n([\s\S]*?)```/.exec(block)?.[1] ?? "";
    expect(yaml).not.toBe("");
    expect(validateWorkflow(yaml).errors).toEqual([]);
    expect(yaml).toMatch(/concurrency: \{ group: "runner-\$\{\{ matrix\.run \}\}", cancel-in-progress: false \}/);
    const inputs = new Set([...(/^inputs:\n([\s\S]*?)\n\n/m.exec(ACTION)?.[1] ?? "").matchAll(/^ {2}([a-z-]+):$/gm)].map((m) => m[1]!));
    expect(inputs.has("goal") && inputs.has("run-id")).toBe(true);
    const given = [...(/with: \{ (.*) \}/.exec(yaml)?.[1] ?? "").matchAll(/([a-z-]+): /g)].map((m) => m[1]!);
    expect(given.length).toBeGreaterThan(0);
    for (const name of given) expect(inputs.has(name), name).toBe(true);
    const exampleWith = /with:\n((?: {10}.+\n)+)/.exec(WORKFLOW)?.[1] ?? "";
    for (const m of exampleWith.matchAll(/^ {10}([a-z-]+):/gm)) expect(inputs.has(m[1]!), m[1]).toBe(true);
  });

  it("the action calls the scripts this repository has; the workflow runs a matrix with secrets and one job per run branch at a time", () => {
    for (const script of ACTION.matchAll(/\$GITHUB_ACTION_PATH\/([^"]+)"/g))
      expect(existsSync(path.join(PROJECT_ROOT, script[1]!)), script[1]).toBe(true);
    expect(WORKFLOW).toMatch(/concurrency:\n\s+group: runner-\$\{\{ github\.repository \}\}-\$\{\{ matrix\.run \}\}\n\s+cancel-in-progress: false/);
    expect(WORKFLOW).toMatch(/run-id: \$\{\{ matrix\.run \}\}/);
    expect(WORKFLOW).toMatch(/\$\{\{ secrets\.[A-Z_]+ \}\}/);
    // Not a workflow of this repository's own CI.
    expect(existsSync(path.join(PROJECT_ROOT, ".github", "workflows", "runner-matrix.yml"))).toBe(false);
  });
});

interface Recorded {
  method: string;
  url: string;
  auth: string | undefined;
  body: Record<string, unknown> | null;
}

/** A scripted GitHub API: the open pull requests for the branch (none by default), then one created (number 7) or updated. */
async function scriptedApi(open: { number: number; html_url: string }[] = []): Promise<{ url: string; requests: Recorded[]; close: () => void }> {
  const requests: Recorded[] = [];
  const read = async (req: IncomingMessage) => {
    let text = "";
    for await (const chunk of req) text += String(chunk);
    return text === "" ? null : (JSON.parse(text) as Record<string, unknown>);
  };
  const server = createServer((req, res) => {
    void read(req).then((body) => {
      requests.push({ method: req.method ?? "", url: req.url ?? "", auth: req.headers.authorization, body });
      res.setHeader("content-type", "application/json");
      if (req.method === "GET") res.end(JSON.stringify(open));
      else if (req.method === "PATCH") res.end(JSON.stringify(open[0]));
      else {
        res.statusCode = 201;
        res.end(JSON.stringify({ number: 7, html_url: "https://github.example/acme/app/pull/7" }));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests, close: () => server.close() };
}

/** A repository whose origin is a bare repository, and a fresh clone of it (what actions/checkout makes). */
async function remoteAndClone(s: Scenario): Promise<{ bare: string; clone: string }> {
  const bare = path.join(tempDir("runner-remote-"), "app.git");
  execFileSync("git", ["init", "-q", "--bare", "-b", "main", bare], { env: s.gitEnv });
  await s.git(["push", "-q", bare, "main:main"]);
  const clone = path.join(tempDir("runner-checkout-"), "app");
  execFileSync("git", ["clone", "-q", bare, clone], { env: s.gitEnv });
  return { bare, clone };
}

function outputsOf(file: string): Record<string, string> {
  const outputs: Record<string, string> = {};
  const text = existsSync(file) ? readFileSync(file, "utf8") : "";
  for (const match of text.matchAll(/^([a-z-]+)<<RUNNER_EOF\n([\s\S]*?)\nRUNNER_EOF$/gm)) outputs[match[1]!] = match[2]!;
  for (const match of text.matchAll(/^([a-z-]+)=(.*)$/gm)) outputs[match[1]!] = match[2]!;
  return outputs;
}

describe("the action's steps, end to end in a temp clone", () => {
  it("a goal: started, stopped early by its budget (neutral), continued by the next job from the pushed branch to done; report, summary, push and pull request", async () => {
    const s = await scenario({ start: false });
    s.script({
      1: {
        decompose: [
          { id: "x", order: 0 },
          { id: "y", order: 1 },
        ],
        status: "decomposed",
      },
      2: { write: { "src/x.txt": "x\n" }, status: "done" },
      3: { write: { "src/y.txt": "y\n" }, status: "done" },
    });
    const { bare, clone } = await remoteAndClone(s);
    const api = await scriptedApi();
    const job = (checkout: string, extra: Record<string, string>) => {
      const temp = tempDir("runner-job-");
      const env = {
        ...s.env,
        PATH: `${runnerOnPath()}:${process.env.PATH ?? ""}`,
        GITHUB_WORKSPACE: checkout,
        GITHUB_OUTPUT: path.join(temp, "output"),
        GITHUB_STEP_SUMMARY: path.join(temp, "summary.md"),
        RUNNER_TEMP: temp,
        GITHUB_RUN_ID: "4242",
        INPUT_GOAL: "Write x and y",
        INPUT_RUN_ID: "nightly",
        INPUT_PUSH: "true",
        ...extra,
      };
      const result = spawnSync("node", [path.join(PROJECT_ROOT, "scripts", "action", "run.mjs")], {
        cwd: checkout,
        env,
        encoding: "utf8",
        timeout: 120_000,
      });
      return { ...result, outputs: outputsOf(env.GITHUB_OUTPUT), env, temp };
    };

    try {
      // The first job: a budget of two iterations stops the run early (exit 3): a neutral outcome, the step succeeds.
      const first = job(clone, { INPUT_MAX_ITERATIONS: "2" });
      expect(first.status, `${first.stdout}\n${first.stderr}`).toBe(0);
      expect(first.outputs).toMatchObject({ "exit-code": "3", outcome: "stopped", "run-id": "nightly", branch: "runner/nightly", base: "main" });
      expect(existsSync(first.outputs.report!), "the report the upload step is given").toBe(true);
      expect(readFileSync(first.outputs.report!, "utf8")).toMatch(/^<!doctype html>/i);
      const pushed = (await s.git(["--git-dir", bare, "log", "--format=%s", "--reverse", "main..runner/nightly"])).split("\n");
      expect(pushed).toEqual([
        "runner goal: Write x and y",
        subject("nightly", 1, "root", "decompose", "skipped"),
        subject("nightly", 2, "x", "execute", "pass"),
      ]);

      // The next job, in a fresh checkout: continues the pushed branch to the end.
      const again = path.join(tempDir("runner-checkout-"), "app");
      execFileSync("git", ["clone", "-q", bare, again], { env: s.gitEnv });
      const second = job(again, {});
      expect(second.status, `${second.stdout}\n${second.stderr}`).toBe(0);
      expect(second.stdout).toMatch(/continuing run nightly from origin\/runner\/nightly/);
      expect(second.outputs).toMatchObject({ "exit-code": "0", outcome: "done", branch: "runner/nightly" });
      expect(existsSync(second.outputs.report!)).toBe(true);
      const tip = (await s.git(["--git-dir", bare, "log", "-1", "--format=%s", "runner/nightly"])).trim();
      expect(tip).toBe(subject("nightly", 3, "y", "execute", "pass"));
      const summary = readFileSync(second.outputs.summary!, "utf8");
      expect(summary).toMatch(/^## runner: run nightly — done: the root passes/);
      expect(summary).toMatch(/2 of 2 leaves passed/);
      expect(readFileSync(path.join(second.temp, "summary.md"), "utf8")).toBe(summary);
      // `runner audit` in the checkout agrees with the pushed history.
      const audit = spawnSync("node", [RUNNER_BIN, "audit"], { cwd: again, env: second.env, encoding: "utf8" });
      expect(audit.status, audit.stdout + audit.stderr).toBe(0);

      // The pull-request step, against the scripted API.
      // (asynchronously: the scripted server answers from this process)
      const pr = await execa("node", [path.join(PROJECT_ROOT, "scripts", "action", "pull-request.mjs")], {
        cwd: again,
        extendEnv: false,
        reject: false,
        timeout: 30_000,
        env: {
          ...second.env,
          GITHUB_API_URL: api.url,
          GITHUB_REPOSITORY: "acme/app",
          INPUT_TOKEN: "t0ken",
          INPUT_BRANCH: second.outputs.branch!,
          INPUT_BASE: second.outputs.base!,
          INPUT_SUMMARY: second.outputs.summary!,
          INPUT_OUTCOME: second.outputs.outcome!,
          INPUT_RUN_ID: second.outputs["run-id"]!,
        },
      });
      expect(pr.exitCode, String(pr.stderr)).toBe(0);
      expect(String(pr.stdout).trim()).toBe("opened pull request #7: https://github.example/acme/app/pull/7");
      expect(api.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
        "GET /repos/acme/app/pulls?state=open&head=acme%3Arunner%2Fnightly",
        "POST /repos/acme/app/pulls",
      ]);
      expect(api.requests.every((r) => r.auth === "Bearer t0ken")).toBe(true);
      expect(api.requests[1]!.body).toEqual({ title: "runner: run nightly", head: "runner/nightly", base: "main", body: summary, draft: false });
      expect(outputsOf(second.env.GITHUB_OUTPUT)["pr-url"]).toBe("https://github.example/acme/app/pull/7");
    } finally {
      api.close();
    }
  }, 240_000);

  it("a repository without .runner/: the goal is set up with runner init (the executor input), on the run branch only; the remote's main is untouched", async () => {
    const project = tempDir("runner-plain-");
    const env = { ...testEnv(), PATH: `${runnerOnPath()}:${process.env.PATH ?? ""}` };
    const gitHere = (args: string[], cwd = project) => execFileSync("git", args, { cwd, env, encoding: "utf8" });
    writeFileSync(path.join(project, "justfile"), "ci:\n    true\n");
    gitHere(["init", "-q", "-b", "main"]);
    gitHere(["add", "-A"]);
    gitHere(["commit", "-q", "-m", "plain project"]);
    const bare = path.join(tempDir("runner-remote-"), "plain.git");
    gitHere(["init", "-q", "--bare", "-b", "main", bare]);
    gitHere(["push", "-q", bare, "main:main"]);
    const mainBefore = gitHere(["--git-dir", bare, "rev-parse", "main"]).trim();
    const clone = path.join(tempDir("runner-checkout-"), "plain");
    gitHere(["clone", "-q", bare, clone]);
    const temp = tempDir("runner-job-");
    const result = spawnSync("node", [path.join(PROJECT_ROOT, "scripts", "action", "run.mjs")], {
      cwd: clone,
      env: {
        ...env,
        GITHUB_OUTPUT: path.join(temp, "output"),
        RUNNER_TEMP: temp,
        INPUT_GOAL: "A calculator",
        INPUT_EXECUTOR: "demo",
        INPUT_RUN_ID: "fresh",
      },
      encoding: "utf8",
      timeout: 120_000,
    });
    expect(result.status, result.stdout + result.stderr).toBe(0);
    expect(outputsOf(path.join(temp, "output"))).toMatchObject({ outcome: "done", "exit-code": "0", branch: "runner/fresh" });
    const pushed = gitHere(["--git-dir", bare, "log", "--format=%s", "--reverse", "main..runner/fresh"]).split("\n").filter(Boolean);
    expect(pushed[0]).toBe("runner goal: A calculator");
    expect(pushed.slice(1).every((line) => line.startsWith("chore(loop): run fresh iter "))).toBe(true);
    expect(gitHere(["--git-dir", bare, "rev-parse", "main"]).trim()).toBe(mainBefore);
  }, 120_000);

  it("a run that fails (exit 1) fails the step, and what it committed is still pushed", async () => {
    const s = await scenario({
      start: false,
      files: {
        ".runner/state/config.toml":
          '[executor]\nkind = "command"\ncommand = ["node", "agent.mjs"]\n\n[guard]\ncommand = ["node", "guard.mjs"]\n\n[limits]\niteration_timeout_seconds = 60\nmax_consecutive_runner_errors = 1\n',
      },
    });
    s.script({ 1: { exit: 9 } });
    const { bare, clone } = await remoteAndClone(s);
    const temp = tempDir("runner-job-");
    const result = spawnSync("node", [path.join(PROJECT_ROOT, "scripts", "action", "run.mjs")], {
      cwd: clone,
      env: {
        ...s.env,
        PATH: `${runnerOnPath()}:${process.env.PATH ?? ""}`,
        GITHUB_OUTPUT: path.join(temp, "output"),
        RUNNER_TEMP: temp,
        INPUT_RUN_ID: "broken",
      },
      encoding: "utf8",
      timeout: 120_000,
    });
    const outputs = outputsOf(path.join(temp, "output"));
    expect(outputs.outcome, result.stdout + result.stderr).toBe("failed");
    expect(result.status).toBe(Number(outputs["exit-code"]));
    expect([1, 2]).toContain(result.status);
    expect(existsSync(outputs.report!)).toBe(true);
    expect((await s.git(["--git-dir", bare, "log", "-1", "--format=%s", "runner/broken"])).trim()).toMatch(/^chore\(loop\): run broken iter 1 /);
  }, 120_000);
});

describe("the pull-request step alone", () => {
  it("updates the body of the pull request already open for the run branch; without a token it refuses in one sentence", async () => {
    const api = await scriptedApi([{ number: 5, html_url: "https://github.example/acme/app/pull/5" }]);
    const summaryFile = path.join(tempDir("runner-summary-"), "summary.md");
    writeFileSync(summaryFile, "## runner: run r1 — done\n");
    const env = {
      PATH: process.env.PATH ?? "",
      GITHUB_API_URL: `${api.url}/`,
      GITHUB_REPOSITORY: "acme/app",
      INPUT_BRANCH: "runner/r1",
      INPUT_BASE: "main",
      INPUT_SUMMARY: summaryFile,
      INPUT_OUTCOME: "stopped",
      INPUT_RUN_ID: "r1",
    };
    const script = path.join(PROJECT_ROOT, "scripts", "action", "pull-request.mjs");
    try {
      const updated = await execa("node", [script], { env: { ...env, INPUT_TOKEN: "t" }, extendEnv: false, reject: false, timeout: 30_000 });
      expect(updated.exitCode, String(updated.stderr)).toBe(0);
      expect(String(updated.stdout).trim()).toBe("updated pull request #5: https://github.example/acme/app/pull/5");
      expect(api.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
        "GET /repos/acme/app/pulls?state=open&head=acme%3Arunner%2Fr1",
        "PATCH /repos/acme/app/pulls/5",
      ]);
      expect(api.requests[1]!.body).toEqual({ body: "## runner: run r1 — done\n" });
      const noToken = await execa("node", [script], { env, extendEnv: false, reject: false, timeout: 30_000 });
      expect(noToken.exitCode).toBe(1);
      expect(String(noToken.stderr)).toBe(
        "No token for the pull request; pass the action a token with pull-requests: write (e.g. secrets.GITHUB_TOKEN).",
      );
    } finally {
      api.close();
    }
  });
});

describe("the container image's job (Dockerfile, scripts/action/job.sh), as a Kubernetes Job runs it", () => {
  it("the Dockerfile packs the package and installs it; what it copies exists; its entrypoint is the job script", () => {
    const dockerfile = readFileSync(path.join(PROJECT_ROOT, "Dockerfile"), "utf8");
    expect(dockerfile).toMatch(/RUN npm pack /);
    expect(dockerfile).toMatch(/npm install -g [^\n]*\/tmp\/guarded-runner\.tgz/);
    const copied = [...dockerfile.matchAll(/^COPY (?!--from)(.+) (\S+)$/gm)].flatMap((m) => m[1]!.split(" ")).filter((f) => f !== ".");
    for (const file of copied) expect(existsSync(path.join(PROJECT_ROOT, file)), file).toBe(true);
    expect(dockerfile).toMatch(/^ENTRYPOINT \["\/opt\/runner\/job\.sh"\]$/m);
    expect(dockerfile).toMatch(/^COPY scripts\/action\/run\.mjs scripts\/action\/pull-request\.mjs scripts\/action\/job\.sh \/opt\/runner\/$/m);
  });

  it("clones the repository, runs the goal to the end and pushes the run branch; a missing repository or an unwritable home is one sentence", async () => {
    const s = await scenario({ start: false });
    s.script({ 1: { write: { "src/x.txt": "x\n" }, status: "done" } });
    const { bare } = await remoteAndClone(s);
    const home = tempDir("runner-home-");
    const job = path.join(PROJECT_ROOT, "scripts", "action", "job.sh");
    const env = { ...s.env, HOME: home, PATH: `${runnerOnPath()}:${process.env.PATH ?? ""}`, INPUT_RUN_ID: "k8s", INPUT_GOAL: "Write x" };
    const ran = spawnSync(job, [], { env: { ...env, RUNNER_REPOSITORY: bare }, encoding: "utf8", timeout: 120_000 });
    expect(ran.status, ran.stdout + ran.stderr).toBe(0);
    expect((await s.git(["--git-dir", bare, "log", "--format=%s", "main..runner/k8s"])).trim().split("\n")).toEqual([
      subject("k8s", 1, "root", "execute", "pass"),
      "runner goal: Write x",
    ]);
    expect(existsSync(path.join(home, "job", "out", "runner-report-k8s.html"))).toBe(true);

    const noRepo = spawnSync(job, [], { env, encoding: "utf8" });
    expect(noRepo.status).toBe(1);
    expect(noRepo.stderr).toBe("RUNNER_REPOSITORY is not set; give the job the clone URL of the repository, with push rights.\n");
    const noHome = spawnSync(job, [], { env: { ...env, RUNNER_REPOSITORY: bare, HOME: path.join(home, "missing") }, encoding: "utf8" });
    expect(noHome.status).toBe(1);
    expect(noHome.stderr).toMatch(/^HOME \(.*missing\) is not a writable folder; the runner keeps its state there \(mount an emptyDir at it\)\.\n$/);
  }, 120_000);
});

describe("a push the remote refuses (issue 34 item 9)", () => {
  it("the outputs and the report are written before the push; the step fails in one sentence naming the push", async () => {
    const s = await scenario({ start: false });
    s.script({ 1: { write: { "src/x.txt": "x\n" }, status: "done" } });
    const { bare, clone } = await remoteAndClone(s);
    writeFileSync(path.join(bare, "hooks", "pre-receive"), "#!/bin/sh\necho 'pushes are closed today' >&2\nexit 1\n", { mode: 0o755 });
    const temp = tempDir("runner-job-");
    const result = spawnSync("node", [path.join(PROJECT_ROOT, "scripts", "action", "run.mjs")], {
      cwd: clone,
      env: {
        ...s.env,
        PATH: `${runnerOnPath()}:${process.env.PATH ?? ""}`,
        GITHUB_OUTPUT: path.join(temp, "output"),
        RUNNER_TEMP: temp,
        INPUT_GOAL: "Write x",
        INPUT_RUN_ID: "refused",
      },
      encoding: "utf8",
      timeout: 120_000,
    });
    const outputs = outputsOf(path.join(temp, "output"));
    expect(outputs, result.stdout + result.stderr).toMatchObject({
      "exit-code": "0",
      outcome: "done",
      "run-id": "refused",
      branch: "runner/refused",
    });
    expect(existsSync(outputs.report!), "the report the upload step is given").toBe(true);
    expect(readFileSync(outputs.summary!, "utf8")).toMatch(/^## runner: run refused — done: the root passes/);
    expect(result.status).toBe(1);
    const sentences = result.stderr
      .split("\n")
      .filter((line) => !line.startsWith("remote:") && !/^(To |error:| ! \[remote rejected\])/.test(line) && line.trim() !== "");
    expect(sentences, result.stderr).toEqual([
      "git push of runner/refused to origin failed (see git's message above); the run's outputs, summary and report are written, and its commits are only in this job's checkout.",
    ]);
    expect(spawnSync("git", ["--git-dir", bare, "rev-parse", "--verify", "-q", "runner/refused"]).status).not.toBe(0);
  }, 120_000);
});

/** The event file of an issue labelled `label`: number 12, its title, and a body with a checklist (as GitHub sends it, CRLF). */
function labelledIssue(label: string): { name: string; payload: Record<string, unknown> } {
  return {
    name: "issues",
    payload: {
      action: "labeled",
      label: { name: label },
      issue: { number: 12, title: "Add x and y", body: "Two files.\r\n\r\n- [ ] Write x\r\n- [ ] Write y\r\n", state: "open" },
      repository: { full_name: "acme/app" },
    },
  };
}

/** docs/examples/runner-issue.yml's job, with this repository's action.yml as OWNER/runner@v1 and the built runner on PATH for its install step. */
function issueJob(options: { remote: string; env: Record<string, string>; apiUrl: string; label?: string; vars?: Record<string, string> }) {
  return runJob({
    workflow: ISSUE_WORKFLOW,
    job: "run",
    event: labelledIssue(options.label ?? "runner"),
    remote: options.remote,
    repository: "acme/app",
    env: { ...options.env, PATH: `${runnerOnPath()}:${process.env.PATH ?? ""}` },
    secrets: { GITHUB_TOKEN: "t0ken", OPENAI_API_KEY: "sk-test" },
    ...(options.vars ? { vars: options.vars } : {}),
    apiUrl: options.apiUrl,
    actions: { "OWNER/runner@v1": PROJECT_ROOT },
    standIns: ["Install the runner"],
  });
}

describe("docs/examples/runner-issue.yml, end to end: a labelled issue in, a pushed run branch and a pull request that closes it out", () => {
  it("an issue labelled runner: its title and checklist are the run's plan, run to the end; the branch pushed, the report uploaded, a pull request with Closes #12", async () => {
    const s = await scenario({ start: false });
    s.script({
      1: { write: { "src/x.txt": "x\n" }, status: "done" },
      2: { write: { "src/y.txt": "y\n" }, status: "done" },
    });
    const { bare } = await remoteAndClone(s);
    const api = await scriptedApi();
    try {
      const job = await issueJob({ remote: bare, env: s.env, apiUrl: api.url });
      const failed = job.steps.filter((step) => step.outcome === "failure");
      expect(job.conclusion, failed.map((step) => `${step.name}\n${step.stdout}\n${step.stderr}`).join("\n")).toBe("success");
      expect(readFileSync(path.join(job.temp, "issue.md"), "utf8")).toBe("# Add x and y\n\nTwo files.\n\n- [ ] Write x\n- [ ] Write y\n\n");
      const action = job.steps.find((step) => step.id === "runner")!;
      expect(action.outputs).toMatchObject({
        outcome: "done",
        "exit-code": "0",
        "run-id": "issue-12",
        branch: "runner/issue-12",
        "pr-url": "https://github.example/acme/app/pull/7",
      });

      const pushed = (await s.git(["--git-dir", bare, "log", "--format=%s", "--reverse", "main..runner/issue-12"])).trim().split("\n");
      expect(pushed).toEqual([
        "runner goal: Add x and y",
        subject("issue-12", 1, "write-x", "execute", "pass"),
        subject("issue-12", 2, "write-y", "execute", "pass"),
      ]);
      const tree = JSON.parse(await s.git(["--git-dir", bare, "show", "runner/issue-12:.runner/state/tree.json"])) as {
        root: { title: string; passes: boolean; children: { id: string; title: string; passes: boolean }[] };
      };
      expect(tree.root).toMatchObject({ title: "Add x and y", passes: true });
      expect(tree.root.children.map((c) => [c.id, c.title, c.passes])).toEqual([
        ["write-x", "Write x", true],
        ["write-y", "Write y", true],
      ]);
      // The repository's own config is kept: the goal commit changes the goal and the tree only.
      expect((await s.git(["--git-dir", bare, "show", "--format=", "--name-only", "runner/issue-12~2"])).trim().split("\n").sort()).toEqual([
        ".runner/GOAL.md",
        ".runner/state/tree.json",
      ]);

      expect(job.artifacts).toEqual([{ name: "runner-report-issue-12", path: action.outputs.report, exists: true }]);
      expect(api.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
        "GET /repos/acme/app/pulls?state=open&head=acme%3Arunner%2Fissue-12",
        "POST /repos/acme/app/pulls",
      ]);
      expect(api.requests.every((r) => r.auth === "Bearer t0ken")).toBe(true);
      const pull = api.requests[1]!.body!;
      expect(pull).toMatchObject({ title: "runner: run issue-12", head: "runner/issue-12", base: "main", draft: false });
      expect(String(pull.body)).toMatch(/^Closes #12\n\n## runner: run issue-12 — done: the root passes\n/);
      expect(String(pull.body)).toMatch(/2 of 2 leaves passed/);
    } finally {
      api.close();
    }
  }, 300_000);

  it("another label runs nothing: no branch, no pull request", async () => {
    const s = await scenario({ start: false });
    const { bare } = await remoteAndClone(s);
    const api = await scriptedApi();
    try {
      const job = await issueJob({ remote: bare, env: s.env, apiUrl: api.url, label: "bug" });
      expect(job.conclusion).toBe("skipped");
      expect(job.steps).toEqual([]);
      expect(api.requests).toEqual([]);
      expect((await s.git(["--git-dir", bare, "branch", "--list", "runner/*"])).trim()).toBe("");
    } finally {
      api.close();
    }
  }, 60_000);

  it("a repository without .runner/: the plan is imported by runner init --plan with the executor the repository's variable names", async () => {
    const project = tempDir("runner-plain-");
    const env = testEnv();
    const gitHere = (args: string[], cwd = project) => execFileSync("git", args, { cwd, env, encoding: "utf8" });
    writeFileSync(path.join(project, "justfile"), "ci:\n    test -f write-x.txt\n");
    // A bash agent (kind = "command"): a file named after its leaf, and "done".
    writeFileSync(
      path.join(project, "agent.sh"),
      'echo "$RUNNER_NODE_ID" > "$RUNNER_NODE_ID.txt"\nprintf \'{"status":"done","summary":"wrote %s"}\' "$RUNNER_NODE_ID" > "$RUNNER_OUTPUT_FILE"\n',
    );
    gitHere(["init", "-q", "-b", "main"]);
    gitHere(["add", "-A"]);
    gitHere(["commit", "-q", "-m", "plain project"]);
    const bare = path.join(tempDir("runner-remote-"), "plain.git");
    gitHere(["init", "-q", "--bare", "-b", "main", bare]);
    gitHere(["push", "-q", bare, "main:main"]);
    const api = await scriptedApi();
    try {
      const job = await issueJob({ remote: bare, env, apiUrl: api.url, vars: { RUNNER_EXECUTOR: "command" } });
      const failed = job.steps.filter((step) => step.outcome === "failure");
      expect(job.conclusion, failed.map((step) => `${step.name}\n${step.stdout}\n${step.stderr}`).join("\n")).toBe("success");
      const config = gitHere(["--git-dir", bare, "show", "runner/issue-12:.runner/state/config.toml"]);
      expect(config).toMatch(/^kind = "command" /m);
      const pushed = gitHere(["--git-dir", bare, "log", "--format=%s", "--reverse", "main..runner/issue-12"]).trim().split("\n");
      expect(pushed[0]).toBe("runner goal: Add x and y");
      expect(pushed.slice(1)).toEqual([subject("issue-12", 1, "write-x", "execute", "pass"), subject("issue-12", 2, "write-y", "execute", "pass")]);
      expect(String(api.requests[1]?.body?.body)).toMatch(/^Closes #12\n\n/);
    } finally {
      api.close();
    }
  }, 300_000);

  it("a push the remote refuses: the action's step fails, its outputs are set, the report is still uploaded, no pull request is opened", async () => {
    const s = await scenario({ start: false });
    s.script({
      1: { write: { "src/x.txt": "x\n" }, status: "done" },
      2: { write: { "src/y.txt": "y\n" }, status: "done" },
    });
    const { bare } = await remoteAndClone(s);
    writeFileSync(path.join(bare, "hooks", "pre-receive"), "#!/bin/sh\necho 'pushes are closed today' >&2\nexit 1\n", { mode: 0o755 });
    const api = await scriptedApi();
    try {
      const job = await issueJob({ remote: bare, env: s.env, apiUrl: api.url });
      expect(job.conclusion).toBe("failure");
      const run = job.steps.find((step) => step.name === "Run")!;
      expect(run.outcome).toBe("failure");
      expect(run.stderr).toMatch(
        /^::error::git push of runner\/issue-12 to origin failed \(see git's message above\); the run's outputs, summary and report are written, and its commits are only in this job's checkout\.$/m,
      );
      const action = job.steps.find((step) => step.id === "runner")!;
      expect(action.outcome).toBe("failure");
      expect(action.outputs).toMatchObject({ outcome: "done", "exit-code": "0", "run-id": "issue-12", "pr-url": "" });
      expect(job.steps.find((step) => step.name === "Upload the report")?.outcome).toBe("success");
      expect(job.artifacts).toEqual([{ name: "runner-report-issue-12", path: action.outputs.report, exists: true }]);
      expect(job.steps.find((step) => step.name === "Pull request")?.outcome).toBe("skipped");
      expect(api.requests).toEqual([]);
    } finally {
      api.close();
    }
  }, 300_000);
});
