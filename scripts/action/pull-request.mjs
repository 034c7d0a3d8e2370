// The GitHub Action's pull-request step (action.yml calls it after run.mjs pushed the run branch):
// opens a pull request from runner/<run-id> into the base branch whose body is the run's summary,
// or updates the body of the one already open for that branch; a draft when the run stopped early.
// With an issue number (the closes input), "Closes #N" heads the body: merging closes the issue.
// Through the REST API at GITHUB_API_URL (https://api.github.com unless set: GitHub Enterprise, or a
// scripted server in the tests). Output: pr-url.
import { appendFileSync, readFileSync } from "node:fs";

const env = process.env;
const input = (name) => (env[`INPUT_${name.toUpperCase().replace(/-/g, "_")}`] ?? "").trim();
const api = (env.GITHUB_API_URL || "https://api.github.com").replace(/\/$/, "");
const repository = env.GITHUB_REPOSITORY ?? "";
const token = input("token") || env.GITHUB_TOKEN || "";
const [branch, base, summaryFile, outcome, runId, closes] = ["branch", "base", "summary", "outcome", "run-id", "closes"].map(input);

function fail(sentence) {
  process.stderr.write(`${env.GITHUB_ACTIONS ? "::error::" : ""}${sentence}\n`);
  process.exit(1);
}

if (!/^[^/]+\/[^/]+$/.test(repository)) fail(`GITHUB_REPOSITORY is "${repository}", not owner/name; run this step inside GitHub Actions or set it.`);
if (token === "") fail("No token for the pull request; pass the action a token with pull-requests: write (e.g. secrets.GITHUB_TOKEN).");
if (branch === "" || base === "") fail("The pull-request step needs the run's branch and base (the run step's outputs).");
if (closes !== "" && !/^[1-9]\d*$/.test(closes.replace(/^#/, "")))
  fail(`The closes input is "${closes}", not an issue number; give the number alone (e.g. \${{ github.event.issue.number }}).`);

async function call(method, route, body) {
  const response = await globalThis.fetch(`${api}${route}`, {
    method,
    headers: {
      accept: "application/vnd.github+json",
      authorization: `Bearer ${token}`,
      "x-github-api-version": "2022-11-28",
      "user-agent": "guarded-runner-action",
      ...(body ? { "content-type": "application/json" } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await response.text();
  if (!response.ok) fail(`${method} ${route} answered ${response.status}: ${text.slice(0, 300).replace(/\s+/g, " ")}`);
  return text === "" ? null : JSON.parse(text);
}

const owner = repository.split("/")[0];
const summary = `${closes === "" ? "" : `Closes #${closes.replace(/^#/, "")}\n\n`}${readFileSync(summaryFile, "utf8").slice(0, 60_000)}`;
const open = await call("GET", `/repos/${repository}/pulls?state=open&head=${encodeURIComponent(`${owner}:${branch}`)}`);
let pull;
if (Array.isArray(open) && open.length > 0) {
  pull = await call("PATCH", `/repos/${repository}/pulls/${open[0].number}`, { body: summary });
  console.log(`updated pull request #${pull.number}: ${pull.html_url}`);
} else {
  const title = `runner: run ${runId}${outcome === "done" ? "" : ` (${outcome})`}`;
  pull = await call("POST", `/repos/${repository}/pulls`, { title, head: branch, base, body: summary, draft: outcome !== "done" });
  console.log(`opened pull request #${pull.number}: ${pull.html_url}`);
}
if (env.GITHUB_OUTPUT) appendFileSync(env.GITHUB_OUTPUT, `pr-url=${pull.html_url}\n`);
