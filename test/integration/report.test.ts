// `runner report` without a browser: the report's data (gathered from real runs' commits and local
// logs) and its HTML (escaping, the outcome of a run that ended in a runner error), on the machine
// that ran the loop and on a fresh `git clone` without local logs; the command's output file,
// refusals and --open.
import { chmodSync, cpSync, existsSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { gatherReport, iterationDiffs } from "../../src/report/gather.js";
import type { IterationDiff, Report } from "../../src/report/model.js";
import { renderReport } from "../../src/report/render.js";
import { HOSTILE_QUESTION, allPassesRun, guardFailRetryRun, repairRun, runnerErrorRun, type ReportRun } from "../helpers/report-runs.js";
import { git, runner, tempDir, testEnv } from "../helpers/sandbox.js";
import { oneSentence, scenario } from "../helpers/scenario.js";

const GENERATED = "2026-11-22T10:00:00.000Z";

let allPasses: ReportRun;
let guardFail: ReportRun;
let repair: ReportRun;
let runnerError: ReportRun;

beforeAll(async () => {
  [allPasses, guardFail, repair, runnerError] = await Promise.all([allPassesRun(), guardFailRetryRun(), repairRun(), runnerErrorRun()]);
});

function gather(run: ReportRun, runId?: string, root = run.s.dir): Promise<Report> {
  return gatherReport(root, runId, GENERATED);
}

/** The page with its one script and its stylesheet removed: what is left is markup and escaped text. */
function markup(html: string): string {
  return html.replace(/<script>[\s\S]*?<\/script>/, "").replace(/<style>[\s\S]*?<\/style>/, "");
}

async function cloneOf(run: ReportRun, args: string[] = []): Promise<string> {
  const dir = path.join(tempDir("runner-report-clone-"), "clone");
  await git(path.dirname(dir), ["clone", "-q", ...args, run.s.dir, dir]);
  return dir;
}

describe("runner report: the data", () => {
  it("all passes: totals, outcome, audit, tree, every iteration with its diff and local log, the notes the agent added", async () => {
    const report = await gather(allPasses);
    expect(report.runId).toBe("all-passes");
    expect(report.outcome).toMatchObject({ kind: "complete", mergeable: true });
    expect(report.audit).toEqual({ clean: true, violations: [] });
    expect(report.totals).toMatchObject({
      iterations: 3,
      decompose: 1,
      execute: 2,
      repair: 0,
      passes: 2,
      failures: 0,
      runnerErrors: 0,
      nodes: { total: 3, passed: 3, stuck: 0 },
    });
    expect(report.totals.time?.timed).toBe(3);
    expect(report.totals.time!.totalMs).toBeGreaterThanOrEqual(report.totals.time!.agentMs + report.totals.time!.guardMs);
    expect(report.localLogs).toBe(3);
    expect(report.iterations.map((it) => [it.iteration, it.nodeId, it.kind, it.agentStatus, it.guard, it.outcome])).toEqual([
      [1, "root", "decompose", "decomposed", "skipped", "decompose"],
      [2, "a", "execute", "done", "pass", "pass"],
      [3, "b", "execute", "done", "pass", "pass"],
    ]);
    const shas = (await allPasses.s.git(["log", "--format=%H", "--reverse", "main..HEAD"])).split("\n").filter(Boolean);
    expect(report.iterations.map((it) => it.commit)).toEqual(shas);
    // Each iteration's time is its commit's committer date, as git prints it.
    const dates = (await allPasses.s.git(["log", "--format=%cI", "--reverse", "main..HEAD"])).split("\n").filter(Boolean);
    expect(dates).toHaveLength(3);
    expect(report.iterations.map((it) => it.committedAt)).toEqual(dates);
    expect(report.tip).toBe(shas[2]);
    expect(report.base).toBe((await allPasses.s.git(["rev-parse", "main"])).trim());
    // The tree file is left out of the diffs: a decomposition changes nothing else. (Each diff is read
    // as the page is written, in the iterations' order.)
    const diffs: IterationDiff[] = [];
    for await (const diff of iterationDiffs(allPasses.s.dir, report.iterations)) diffs.push(diff);
    expect(diffs).toHaveLength(3);
    expect(diffs[0]!.files).toEqual([]);
    expect(diffs[1]!.files.map((f) => f.path).sort()).toEqual([".runner/state/assumptions.md", ".runner/state/questions.md", "src/a.txt"]);
    expect(diffs[1]!.patch).toContain("+a");
    expect(diffs[1]!.truncated).toBe(false);
    const local = report.iterations[2]!.local!;
    expect(local.path?.map((v) => v.state)).toEqual(allPasses.s.meta(3).path);
    expect(local.path?.some((v) => v.ms !== undefined)).toBe(true);
    expect(local.guardTail).toContain("all 2 checks green");
    expect(local.totalMs).toBe(allPasses.s.meta(3).durations.total_ms);
    expect(report.tree?.root).toMatchObject({ id: "root", state: "passed", iterations: [1] });
    expect(report.tree?.root?.children.map((c) => [c.id, c.state, c.iterations])).toEqual([
      ["a", "passed", [2]],
      ["b", "passed", [3]],
    ]);
    expect(report.notes).toEqual([
      { file: "assumptions", commit: shas[1], iteration: 2, lines: ["- Inputs are small integers."] },
      { file: "questions", commit: shas[1], iteration: 2, lines: [HOSTILE_QUESTION] },
    ]);
    expect(report.merge).toMatchObject({ ref: "runner/all-passes", target: "main" });
    expect(report.merge.commands.map((c) => c.command)).toContain("git switch main && git merge --no-ff runner/all-passes");
  });

  it("a guard failure then a retry: the failure, the guard's output and the attempt it cost", async () => {
    const report = await gather(guardFail);
    expect(report.outcome.kind).toBe("complete");
    expect(report.totals).toMatchObject({ iterations: 3, passes: 2, failures: 1, guardFailures: 1, runnerErrors: 0 });
    const [failed, retried] = report.iterations;
    expect(failed).toMatchObject({ nodeId: "a", nodeTitle: "Add", guard: "fail", outcome: "fail", attempts: { after: 1, max: 3 } });
    expect(failed!.failure).toMatch(/^The guard `node guard.mjs` exited with code 1\./);
    expect(failed!.failure).toContain("AssertionError: expected 5, got 6"); // the whole failure, from the local log
    expect(failed!.local?.guardTail).toContain("AssertionError: expected 5, got 6");
    expect(failed!.local?.guardExitCode).toBe(1);
    expect(retried).toMatchObject({ nodeId: "a", guard: "pass", outcome: "pass", attempts: { after: 1, max: 3 } });
    expect(report.tree?.root?.children[0]).toMatchObject({ id: "a", attempts: 1, iterations: [1, 2] });
  });

  it("a repair: the iteration that left the tree invalid, the repair step, and a clean audit", async () => {
    const report = await gather(repair);
    expect(report.iterations.map((it) => [it.kind, it.outcome, it.nodeId ?? null])).toEqual([
      ["decompose", "invalid-tree", "b"],
      ["repair", "repair", null],
      ["execute", "pass", "b"],
    ]);
    expect(report.iterations[0]!.treeLeftInvalid).toBe(true);
    expect(report.iterations[1]!.local?.path?.map((v) => v.state)).toContain("repairTree");
    expect(report.totals.repair).toBe(1);
    expect(report.outcome).toMatchObject({ kind: "complete", mergeable: true });
  });

  it("a runner error: the run's outcome, the error, and the agent's output", async () => {
    const report = await gather(runnerError);
    expect(report.outcome.kind).toBe("runner-error");
    expect(report.outcome.headline).toBe("Stopped on a runner error in iteration 2");
    expect(report.outcome.mergeable).toBe(false);
    const last = report.iterations[1]!;
    expect(last.outcome).toBe("error");
    expect(last.runnerError).toMatch(/^output_parse_error: /);
    expect(last.local?.agentTail).toContain("agent crashed <badly>");
    expect(report.totals).toMatchObject({ failures: 1, runnerErrors: 1 });
    expect(report.tree?.root?.children.map((c) => [c.id, c.state, c.next])).toEqual([
      ["a", "passed", false],
      ["b", "open", true],
    ]);
  });
});

describe("runner report: a run without iterations yet", () => {
  it("shows the tree it starts from and says there is nothing yet", async () => {
    const s = await scenario({ runId: "fresh" });
    const report = await gatherReport(s.dir, undefined, GENERATED);
    expect(report.outcome).toMatchObject({ kind: "empty", headline: "No iterations yet", mergeable: false });
    expect(report.iterations).toEqual([]);
    expect(report.tree?.root).toMatchObject({ id: "root", state: "open", next: true });
    const html = renderReport(report);
    expect(html).toContain("No iterations yet");
    expect(html.match(/<g class="mark"/g)).toBeNull();
  });
});

describe("runner report: the page", () => {
  it("shows everything from the agent as text: no script but the page's own, no element from a summary, a title or a note", async () => {
    const html = renderReport(await gather(allPasses));
    expect(html.match(/<script/g)).toHaveLength(1);
    const body = markup(html);
    expect(body).not.toContain("<script");
    expect(body).not.toMatch(/<img/);
    expect(body).not.toContain("<b>part</b>");
    expect(body).toContain(
      "wrote a &lt;script&gt;window.__pwned = 1&lt;/script&gt; and &lt;img src=&quot;x&quot; onerror=&quot;window.__pwned = 2&quot;&gt; &amp; &quot;quotes&quot;",
    );
    expect(body).toContain("Second &lt;b&gt;part&lt;/b&gt;");
    expect(body).toContain("Should &lt;script&gt;window.__pwned = 3&lt;/script&gt; be allowed?");
    // The policy forbids every resource and any script but the page's own (by its hash).
    expect(html).toMatch(
      /<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-[A-Za-z0-9+/]+=*';/,
    );
    expect(body).not.toMatch(/(src|href)="(https?:)?\/\//);
  });

  it("is the same page for the same data", async () => {
    const report = await gather(guardFail);
    expect(renderReport(report)).toBe(renderReport(structuredClone(report)));
  });

  it("a runner error: the header says so, with the error and the agent's output escaped", async () => {
    const html = renderReport(await gather(runnerError));
    expect(html).toContain('<header class="outcome kind-runner-error">');
    expect(html).toContain('<h1 id="outcome">Stopped on a runner error in iteration 2</h1>');
    const body = markup(html);
    expect(body).toContain("output_parse_error");
    expect(body).toContain("agent crashed &lt;badly&gt;");
    expect(body).not.toContain("<script");
    expect(body).toContain('id="verdict">Not ready to merge<');
  });
});

describe("runner report: the command", () => {
  it("writes .runner/iterations/<run-id>/report.html (ignored by git) and prints its path", async () => {
    const result = await allPasses.s.runner(["report"]);
    expect(result.stderr).toBe("");
    expect(result.exitCode).toBe(0);
    const file = path.join(allPasses.s.dir, ".runner", "iterations", "all-passes", "report.html");
    expect(result.stdout).toBe(file);
    const html = readFileSync(file, "utf8");
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).toContain("Complete: ready to review and merge");
    expect(await allPasses.s.git(["status", "--porcelain"])).toBe("");
  });

  it("--output writes the page where it is told, relative to the current folder", async () => {
    const out = tempDir("runner-report-out-");
    const result = await runner(out, ["-C", guardFail.s.dir, "report", "--output", "nested/page.html"], { env: guardFail.s.env });
    expect(result.stderr).toBe("");
    expect(result.exitCode).toBe(0);
    expect(result.stdout.trim()).toBe(path.join(out, "nested", "page.html"));
    expect(readFileSync(path.join(out, "nested", "page.html"), "utf8")).toContain("wrote a, badly");
  });

  it("a failure forged in a local meta.json (the agent can write it) is not shown: the failure is the runner's commit's", async () => {
    const dir = path.join(tempDir("runner-report-copy-"), "copy");
    cpSync(guardFail.s.dir, dir, { recursive: true });
    const metaFile = path.join(dir, ".runner", "iterations", "guard-fail", "0001", "meta.json");
    const meta = JSON.parse(readFileSync(metaFile, "utf8")) as Record<string, unknown>;
    writeFileSync(metaFile, JSON.stringify({ ...meta, failure: "FORGED: all is well" }));
    const report = await gatherReport(dir, "guard-fail", GENERATED);
    expect(report.iterations[0]!.local).toBeDefined();
    expect(report.iterations[0]!.failure).toMatch(/^The guard `node guard\.mjs` exited with code 1\./);
    expect(JSON.stringify(report)).not.toContain("FORGED");
  });

  it("works on a fresh clone, from the commits alone: same iterations, notes and tree, times marked as not logged here", async () => {
    const dir = await cloneOf(allPasses);
    expect(existsSync(path.join(dir, ".runner", "iterations"))).toBe(false);
    const report = await gatherReport(dir, undefined, GENERATED);
    const original = await gather(allPasses);
    expect(report.localLogs).toBe(0);
    expect(report.iterations.every((it) => it.local === undefined)).toBe(true);
    expect(report.totals.time).toBeUndefined();
    expect(report.totals.span).toBeDefined();
    const fromCommits = (r: Report) => r.iterations.map(({ local: _local, ...rest }) => rest);
    expect(fromCommits(report)).toEqual(fromCommits(original));
    expect(report.notes).toEqual(original.notes);
    expect(report.tree).toEqual(original.tree);
    expect(report.outcome).toEqual(original.outcome);

    const result = await runner(dir, ["report"], { env: testEnv() });
    expect(result.stderr).toBe("");
    expect(result.exitCode).toBe(0);
    const html = readFileSync(result.stdout.trim(), "utf8");
    expect(html).toContain("agent, guard and runner times are not logged here");
    expect(html).toContain("the local log of this iteration is not on this machine");
    expect(markup(html)).not.toContain("<script");
    expect(await git(dir, ["status", "--porcelain"])).toBe(""); // the page sits in the ignored .runner/iterations/
  });

  it("on a fresh clone of another branch, --run-id reads the run from its remote-tracking branch", async () => {
    const dir = await cloneOf(guardFail, ["--branch", "main"]);
    const report = await gatherReport(dir, "guard-fail", GENERATED);
    expect(report.merge.ref).toBe("origin/runner/guard-fail");
    expect(report.iterations).toHaveLength(3);
    // Without the local log, the failure is the commit's, in full: the same as where the run was made.
    expect(report.iterations[0]!.failure).toMatch(/^The guard `node guard\.mjs` exited with code 1\.\n/);
    expect(report.iterations[0]!.failure).toBe((await gather(guardFail)).iterations[0]!.failure);
    expect(report.merge.commands.map((c) => c.command)).toContain("git log --oneline --reverse main..origin/runner/guard-fail");
  });

  it("refuses, in one sentence: no run branch and no --run-id, an invalid run id, a run that is not there", async () => {
    const dir = await cloneOf(runnerError, ["--branch", "main"]);
    const noRun = await runner(dir, ["report"], { env: testEnv() });
    expect(noRun.exitCode).toBe(1);
    expect(oneSentence(noRun.stderr)).toMatch(/not a runner\/<run-id> branch/);
    const bad = await runner(dir, ["report", "--run-id", "no/slashes"], { env: testEnv() });
    expect(bad.exitCode).toBe(1);
    expect(oneSentence(bad.stderr)).toMatch(/run id "no\/slashes" is not valid/i);
    const missing = await runner(dir, ["report", "--run-id", "nope"], { env: testEnv() });
    expect(missing.exitCode).toBe(1);
    expect(oneSentence(missing.stderr)).toMatch(/There is no run nope here/);
    // Outside a repository: refused before the audit's thread, started ahead by the command, is
    // taken; the thread does not keep the process alive.
    const outside = await runner(tempDir("runner-report-nowhere-"), ["report"], { env: testEnv(), timeout: 20_000 });
    expect(outside.exitCode, outside.stderr).toBe(1);
    expect(oneSentence(outside.stderr)).toMatch(/No \.runner\/ folder/);
  });

  it("--open starts xdg-open with the page, or says there is none", async () => {
    // PATH holds only git and node (and, the first time, a recording xdg-open): no system opener is found.
    const tools = tempDir("runner-report-tools-");
    const gitPath = (process.env.PATH ?? "")
      .split(path.delimiter)
      .map((dir) => path.join(dir, "git"))
      .find((file) => existsSync(file))!;
    symlinkSync(gitPath, path.join(tools, "git"));
    symlinkSync(process.execPath, path.join(tools, "node"));
    const bin = tempDir("runner-report-bin-");
    const record = path.join(bin, "opened.txt");
    writeFileSync(path.join(bin, "xdg-open"), `#!/bin/sh\nprintf '%s' "$1" > '${record}'\n`);
    chmodSync(path.join(bin, "xdg-open"), 0o755);

    const opened = await runner(runnerError.s.dir, ["report", "--open"], { env: { ...runnerError.s.env, PATH: `${bin}${path.delimiter}${tools}` } });
    expect(opened.exitCode, opened.stderr).toBe(0);
    const file = opened.stdout; // the path alone: nothing said about the opener
    expect(file).toBe(path.join(runnerError.s.dir, ".runner", "iterations", "runner-error", "report.html"));
    const deadline = Date.now() + 10_000;
    while (!existsSync(record) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(readFileSync(record, "utf8")).toBe(file);

    const plain = await runner(runnerError.s.dir, ["report", "--open"], { env: { ...runnerError.s.env, PATH: tools } });
    expect(plain.exitCode, plain.stderr).toBe(0);
    expect(plain.stdout.split("\n")[1]).toBe("No xdg-open command here to open it; open the file in a browser.");
  });
});
