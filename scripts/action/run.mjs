// The GitHub Action's run step (action.yml calls it; test/integration/action.test.ts runs it as it is,
// in a temp clone whose remote is a bare repository). In the checked-out repository, with `runner` on
// PATH: continue the run branch runner/<run-id> when the remote has it, else start it (from a goal
// when one is given: `runner start --goal`, or for a repository without .runner/ yet `runner init
// --goal`); `runner run` with the budgets; `runner report` into a file (the artifact); the run's
// summary (status and log, Markdown) for the job summary and a pull request; the run branch pushed.
// Outputs (GITHUB_OUTPUT): exit-code, outcome (done | stopped | failed), run-id, branch, base,
// report, summary. Exit code: 0 for done and stopped early (3, the outcome says which), else the
// runner's (1, 2).
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { appendFileSync, existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

const env = process.env;
const input = (name) => (env[`INPUT_${name.toUpperCase().replace(/-/g, "_")}`] ?? "").trim();
const workspace = env.GITHUB_WORKSPACE && existsSync(env.GITHUB_WORKSPACE) ? env.GITHUB_WORKSPACE : process.cwd();
const remote = input("remote") || "origin";
const goal = input("goal");
const BOT = { name: "github-actions[bot]", email: "41898282+github-actions[bot]@users.noreply.github.com" };

/** One sentence on stderr (a workflow error annotation under Actions), then exit 1. */
function fail(sentence) {
  process.stderr.write(`${env.GITHUB_ACTIONS ? "::error::" : ""}${sentence}\n`);
  process.exit(1);
}

function git(args, options = {}) {
  return execFileSync("git", args, { cwd: workspace, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], ...options });
}

function gitOk(args) {
  return spawnSync("git", args, { cwd: workspace, stdio: "ignore" }).status === 0;
}

/** `runner …` in the workspace: its exit code, output shown in the job's log (or captured). */
function runner(args, capture = false) {
  const result = spawnSync("runner", args, {
    cwd: workspace,
    encoding: "utf8",
    stdio: ["ignore", capture ? "pipe" : "inherit", capture ? "pipe" : "inherit"],
  });
  if (result.error) fail(`runner could not be started (${result.error.message}); install it first (npm install -g guarded-runner).`);
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
  const made = runner(["init", "--goal", goal, "--executor", input("executor") || "codex"]);
  if (made.code !== 0) process.exit(made.code);
  git(["add", ".runner"]);
  commitAsBot(`runner goal: ${goal.split("\n")[0].slice(0, 100)}`);
}

const given = input("branch").replace(/^refs\/heads\//, "");
if (given !== "" && !given.startsWith("runner/")) fail(`branch "${given}" is not a run branch; give runner/<run-id>, or run-id alone.`);
const runId =
  input("run-id") ||
  given.slice("runner/".length) ||
  `gh${env.GITHUB_RUN_ID ?? Date.now()}-${createHash("sha256")
    .update(goal || "tree")
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
  const fresh = goal !== "" && !existsSync(path.join(workspace, ".runner"));
  if (fresh) initWithGoal();
  const started = runner(["start", "--run-id", runId, ...(goal !== "" && !fresh ? ["--goal", goal] : [])]);
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

if ((input("push") || "true") === "true") git(["push", "-q", remote, `refs/heads/${branch}:refs/heads/${branch}`], { stdio: "inherit" });

output("exit-code", String(code));
output("outcome", outcome);
output("report", report);
output("summary", summaryFile);
if (outcome === "stopped")
  console.log(`${env.GITHUB_ACTIONS ? "::notice::" : ""}run ${runId} stopped early (exit 3); the outcome output is "stopped".`);
process.exit(code === 0 || code === 3 ? 0 : code);
