// The GitHub Action's run step (action.yml calls it; test/integration/action.test.ts runs it as it is,
// in a temp clone whose remote is a bare repository). In the checked-out repository, with `runner` on
// PATH: continue the run branch runner/<run-id> when the remote has it, else start it (from a goal
// when one is given: `runner start --goal`, or for a repository without .runner/ yet `runner init
// --goal`; from a plan file through the runner's plan import, `runner init --plan`); `runner run`
// with the budgets; `runner report` into a file (the artifact); the run's summary (status and log,
// Markdown) for the job summary and a pull request; the outputs; then the run branch pushed.
// Outputs (GITHUB_OUTPUT): exit-code, outcome (done | stopped | failed), run-id, branch, base,
// report, summary — all written before the push, so that a push the remote refuses hides neither
// the results nor the report (the upload step runs on them). Exit code: 0 for done and stopped
// early (3, the outcome says which), else the runner's (1, 2); 1 when the push fails.
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { appendFileSync, copyFileSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

const env = process.env;
const input = (name) => (env[`INPUT_${name.toUpperCase().replace(/-/g, "_")}`] ?? "").trim();
const workspace = env.GITHUB_WORKSPACE && existsSync(env.GITHUB_WORKSPACE) ? env.GITHUB_WORKSPACE : process.cwd();
const remote = input("remote") || "origin";
const goal = input("goal");
const plan = input("plan");
const executor = input("executor") || "codex";
const TREE = path.join(".runner", "state", "tree.json");
const GOAL = path.join(".runner", "GOAL.md");
const BOT = { name: "github-actions[bot]", email: "41898282+github-actions[bot]@users.noreply.github.com" };

/** One sentence on stderr (a workflow error annotation under Actions), then exit 1. */
function fail(sentence) {
  process.stderr.write(`${env.GITHUB_ACTIONS ? "::error::" : ""}${sentence}\n`);
  process.exit(1);
}

function git(args, options = {}) {
  return execFileSync("git", args, { cwd: workspace, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], ...options });
}

/** The root of a tree file, or undefined where it cannot be read. */
function rootOf(file) {
  try {
    return JSON.parse(readFileSync(file, "utf8")).root;
  } catch {
    return undefined;
  }
}

function gitOk(args) {
  return spawnSync("git", args, { cwd: workspace, stdio: "ignore" }).status === 0;
}

/** `runner …` in the workspace (or `cwd`): its exit code, output shown in the job's log (or captured). */
function runner(args, capture = false, cwd = workspace) {
  const result = spawnSync("runner", args, {
    cwd,
    encoding: "utf8",
    stdio: ["ignore", capture ? "pipe" : "inherit", capture ? "pipe" : "inherit"],
  });
  if (result.error)
    fail(`runner could not be started (${result.error.message}); put it on PATH first (the action's install step, scripts/action/install.sh, does).`);
  return { code: result.status ?? 2, stdout: result.stdout ?? "", stderr: result.stderr ?? "" };
}

function output(name, value) {
  if (env.GITHUB_OUTPUT) appendFileSync(env.GITHUB_OUTPUT, `${name}<<RUNNER_EOF\n${value}\nRUNNER_EOF\n`);
}

/** A commit of the action's own (the goal), under the repository's identity, else the Actions bot's. */
function commitAsBot(message) {
  const named = gitOk(["config", "user.email"]);
  const identity = named ? [] : ["-c", `user.name=${BOT.name}`, "-c", `user.email=${BOT.email}`];
  git([...identity, "commit", "-q", "--no-verify", "-m", message]);
}

/** A repository without .runner/ yet: `runner init` with the goal, committed on the base (pushed only as part of the run branch). */
function initWithGoal() {
  const made = runner(["init", "--goal", goal, "--executor", executor]);
  if (made.code !== 0) process.exit(made.code);
  git(["add", ".runner"]);
  commitAsBot(`runner goal: ${goal.split("\n")[0].slice(0, 100)}`);
}

/**
 * A plan file (a Markdown checklist under a top heading, ralph's prd.json, task-master's tasks.json)
 * as the run's tree, read by the runner's own plan import (`runner init --plan`, which refuses what it
 * cannot map in one sentence), committed on the base as `runner goal: <root title>` (pushed only as
 * part of the run branch). Without .runner/ that is `runner init --plan` here, with the executor
 * input; with .runner/ (its config kept) the import runs in a scratch repository and its tree and
 * GOAL.md replace this one's, as `runner start --goal` replaces them with a goal's.
 */
function commitPlan(hasRunnerDir) {
  const file = path.resolve(workspace, plan);
  if (!existsSync(file))
    fail(`The plan ${plan} does not exist; give the path of a Markdown checklist (or prd.json, tasks.json) outside the checkout or committed in it.`);
  if (!hasRunnerDir) {
    const made = runner(["init", "--plan", file, "--executor", executor]);
    if (made.code !== 0) process.exit(made.code);
    git(["add", ".runner"]);
  } else {
    const scratch = mkdtempSync(path.join(tmpdir(), "runner-plan-"));
    execFileSync("git", ["init", "-q", scratch], { stdio: "ignore" });
    const attempts = rootOf(path.join(workspace, TREE))?.max_attempts;
    const made = runner(
      ["init", "--plan", file, "--executor", "demo", ...(Number.isSafeInteger(attempts) ? ["--max-attempts", String(attempts)] : [])],
      false,
      scratch,
    );
    if (made.code !== 0) process.exit(made.code);
    for (const kept of [TREE, GOAL]) copyFileSync(path.join(scratch, kept), path.join(workspace, kept));
    git(["add", "--", TREE, GOAL]);
  }
  const title = rootOf(path.join(workspace, TREE))?.title ?? path.basename(plan);
  commitAsBot(`runner goal: ${String(title).slice(0, 100)}`);
}

if (goal !== "" && plan !== "") fail("The action was given both a goal and a plan; give one of them (the plan's top heading is its goal).");
const given = input("branch").replace(/^refs\/heads\//, "");
if (given !== "" && !given.startsWith("runner/")) fail(`branch "${given}" is not a run branch; give runner/<run-id>, or run-id alone.`);
const runId =
  input("run-id") ||
  given.slice("runner/".length) ||
  `gh${env.GITHUB_RUN_ID ?? Date.now()}-${createHash("sha256")
    .update(goal || plan || "tree")
    .digest("hex")
    .slice(0, 8)}`;
const branch = `runner/${runId}`;
const base = input("base") || git(["rev-parse", "--abbrev-ref", "HEAD"]).trim();
output("run-id", runId);
output("branch", branch);
output("base", base);

const onRemote = git(["ls-remote", "--heads", remote, `refs/heads/${branch}`]).trim() !== "";
if (onRemote) {
  // Continue: the run branch as the remote has it (the runner picks up where its last commit is).
  git(["fetch", "-q", remote, `+refs/heads/${branch}:refs/remotes/${remote}/${branch}`]);
  git(["checkout", "-q", "-B", branch, `${remote}/${branch}`]);
  console.log(`continuing run ${runId} from ${remote}/${branch}`);
} else {
  if (given !== "" && !input("run-id")) fail(`${remote} has no branch ${given} to continue; give a goal and run-id to start one.`);
  // A goal with .runner/ in place: `runner start --goal` commits the run's own goal and tree on its branch (the config kept).
  const hasRunnerDir = existsSync(path.join(workspace, ".runner"));
  if (plan !== "") commitPlan(hasRunnerDir);
  else if (goal !== "" && !hasRunnerDir) initWithGoal();
  const started = runner(["start", "--run-id", runId, ...(goal !== "" && hasRunnerDir ? ["--goal", goal] : [])]);
  if (started.code !== 0) process.exit(started.code);
}

const budget = input("max-iterations");
const ran = runner(["run", ...(budget ? ["--max-iterations", budget] : [])]);
const code = ran.code;
const outcome = code === 0 ? "done" : code === 3 ? "stopped" : "failed";

const out = env.RUNNER_TEMP || mkdtempSync(path.join(tmpdir(), "runner-action-"));
const report = path.join(out, `runner-report-${runId}.html`);
if (runner(["report", "--run-id", runId, "--output", report]).code !== 0)
  writeFileSync(report, `<!doctype html><title>run ${runId}</title><p>runner report failed; see the job's log.</p>\n`);
const status = runner(["status"], true);
const log = runner(["log"], true);
const fence = (text) => `\`\`\`\n${text.trim().slice(0, 25_000)}\n\`\`\``;
const summary = [
  `## runner: run ${runId} — ${outcome === "done" ? "done: the root passes" : outcome === "stopped" ? "stopped early (exit 3)" : `failed (exit ${code})`}`,
  "",
  `Branch \`${branch}\`; the full report is the job's artifact \`runner-report-${runId}\`.`,
  "",
  "### Status",
  fence(status.stdout || status.stderr),
  "",
  "### Iterations",
  fence(log.stdout || log.stderr),
  "",
].join("\n");
const summaryFile = path.join(out, `runner-summary-${runId}.md`);
writeFileSync(summaryFile, summary);
if (env.GITHUB_STEP_SUMMARY) appendFileSync(env.GITHUB_STEP_SUMMARY, summary);

output("exit-code", String(code));
output("outcome", outcome);
output("report", report);
output("summary", summaryFile);
if (outcome === "stopped")
  console.log(`${env.GITHUB_ACTIONS ? "::notice::" : ""}run ${runId} stopped early (exit 3); the outcome output is "stopped".`);

// Last, the push (after a failed run too: every iteration is committed and worth keeping). A refusal
// fails the step; the outputs above stay, and the upload step (always()) still takes the report.
if ((input("push") || "true") === "true") {
  const pushed = spawnSync("git", ["push", "-q", remote, `refs/heads/${branch}:refs/heads/${branch}`], {
    cwd: workspace,
    stdio: ["ignore", "inherit", "inherit"],
  });
  if (pushed.status !== 0)
    fail(
      `git push of ${branch} to ${remote} failed (see git's message above); the run's outputs, summary and report are written, and its commits are only in this job's checkout.`,
    );
}
process.exit(code === 0 || code === 3 ? 0 : code);
