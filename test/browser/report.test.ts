// `runner report` in a real browser (Chromium from the @sparticuz/chromium npm package, driven by
// puppeteer-core): reports of real runs — all passes; a guard failure then a retry; a repair; a
// runner error; the demo — opened from file:// with every other request blocked. Checks what a
// person sees: the outcome in the first screen, one chart mark per iteration, the iterations, the
// agent's hostile text shown as text, the page read without JavaScript; no console errors and no
// network requests. Screenshots go to test-output/report/.
import { mkdirSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Browser } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, openFile, type OpenedPage } from "../helpers/browser.js";
import { allPassesRun, guardFailRetryRun, repairRun, runnerErrorRun, type ReportRun } from "../helpers/report-runs.js";
import { git, PROJECT_ROOT, runner, tempDir, testEnv } from "../helpers/sandbox.js";
import type { Report, ReportIteration } from "../../src/report/model.js";
import { renderReport } from "../../src/report/render.js";
import { totalsOf } from "../../src/report/summarize.js";

// Code passed to page.evaluate runs in the page. The project compiles without the DOM library (so
// that src cannot use it by mistake); these name the few browser globals the page code uses.
declare const window: { __pwned?: number };
declare const document: { body: { innerText: string } };
declare const location: { hash: string };
type Folding = { open: boolean };

const SHOTS = path.join(PROJECT_ROOT, "test-output", "report");
const VIEWPORT_HEIGHT = 900;

interface Case {
  name: string;
  dir: string;
  file: string;
  headline: string;
  outcomes: string[];
}

const EXPECTED: Record<string, Omit<Case, "name" | "dir" | "file">> = {
  "all-passes": { headline: "Complete: ready to review and merge", outcomes: ["decompose", "pass", "pass"] },
  "guard-fail-retry": { headline: "Complete: ready to review and merge", outcomes: ["fail", "pass", "pass"] },
  repair: { headline: "Complete: ready to review and merge", outcomes: ["invalid-tree", "repair", "pass"] },
  "runner-error": { headline: "Stopped on a runner error in iteration 2", outcomes: ["pass", "error"] },
  demo: { headline: "Complete: ready to review and merge", outcomes: ["decompose", "pass", "fail", "pass", "pass"] },
  // A fresh clone of the guard-failure run: commits only, no local logs.
  "guard-fail-retry-clone": { headline: "Complete: ready to review and merge", outcomes: ["fail", "pass", "pass"] },
};

let browser: Browser;
let browserStartMs = 0;
const cases: Record<string, Case> = {};
const runs: Record<string, ReportRun> = {};

async function writeReport(name: string, dir: string, env: Record<string, string>): Promise<void> {
  const result = await runner(dir, ["report"], { env });
  expect(result.stderr).toBe("");
  expect(result.exitCode).toBe(0);
  cases[name] = { name, dir, file: result.stdout.trim(), ...EXPECTED[name]! };
}

beforeAll(async () => {
  const made = await Promise.all([allPassesRun(), guardFailRetryRun(), repairRun(), runnerErrorRun()]);
  for (const run of made) {
    runs[run.name] = run;
    await writeReport(run.name, run.s.dir, run.s.env);
  }
  const demoDir = path.join(tempDir("runner-report-demo-"), "demo");
  const demo = await runner(PROJECT_ROOT, ["demo", "--dir", demoDir], { env: testEnv() });
  expect(demo.exitCode, demo.stderr).toBe(0);
  await writeReport("demo", demoDir, testEnv());
  const cloneDir = path.join(tempDir("runner-report-clone-"), "clone");
  await git(PROJECT_ROOT, ["clone", "-q", runs["guard-fail-retry"]!.s.dir, cloneDir]);
  await writeReport("guard-fail-retry-clone", cloneDir, testEnv());
  mkdirSync(SHOTS, { recursive: true });
  const launched = await launchBrowser();
  browser = launched.browser;
  browserStartMs = launched.startMs;
}, 120_000);

afterAll(async () => {
  await browser?.close();
});

/** Opens a case's report and checks what every page must hold: only the file loaded, no errors. */
async function open(name: string, javaScript = true): Promise<OpenedPage> {
  const opened = await openFile(browser, cases[name]!.file, { javaScript });
  expect(opened.requests).toEqual([opened.url]);
  expect(opened.blocked).toEqual([]);
  expect(opened.consoleErrors).toEqual([]);
  expect(opened.pageErrors).toEqual([]);
  return opened;
}

describe.each(Object.keys(EXPECTED))("report of the %s run in Chromium", (name) => {
  it("shows the outcome in the first screen, one chart mark per iteration, every iteration; no network, no console errors", async () => {
    const { page } = await open(name);
    const expected = cases[name]!;
    expect(await page.$eval("#outcome", (h) => h.textContent)).toBe(expected.headline);
    // The outcome, the verdict and the totals are in the first screen.
    for (const selector of ["#outcome", "#verdict", "#totals"]) {
      const box = await page.$eval(selector, (el) => {
        const r = el.getBoundingClientRect();
        return { top: r.top, bottom: r.bottom, width: r.width, height: r.height };
      });
      expect(box.width, selector).toBeGreaterThan(0);
      expect(box.bottom, selector).toBeLessThanOrEqual(VIEWPORT_HEIGHT);
    }
    // The chart: one drawn mark per iteration, in order, with the iteration's outcome; its badge is visible.
    const marks = await page.$$eval("svg.timeline g.mark", (gs) =>
      gs.map((g) => {
        const badge = g.querySelector("rect.badge")!.getBoundingClientRect();
        return {
          iteration: g.getAttribute("data-iteration"),
          outcome: g.getAttribute("data-outcome"),
          width: badge.width,
          height: badge.height,
          fill: g.querySelector("rect.badge")!.getAttribute("fill"),
        };
      }),
    );
    expect(marks.map((m) => m.outcome)).toEqual(expected.outcomes);
    expect(marks.map((m) => m.iteration)).toEqual(expected.outcomes.map((_, i) => String(i + 1)));
    for (const mark of marks) {
      expect(mark.width).toBeGreaterThan(5);
      expect(mark.height).toBeGreaterThan(5);
    }
    const chartTop = await page.$eval("svg.timeline", (svg) => svg.getBoundingClientRect().top);
    expect(chartTop).toBeLessThan(VIEWPORT_HEIGHT);
    // Every iteration has its section, its outcome and its change.
    const articles = await page.$$eval("article.iteration", (list) =>
      list.map((a) => ({ id: a.id, outcome: a.getAttribute("data-outcome"), change: a.querySelector("h4")?.textContent ?? "" })),
    );
    expect(articles.map((a) => a.id)).toEqual(expected.outcomes.map((_, i) => `iter-${i + 1}`));
    expect(articles.map((a) => a.outcome)).toEqual(expected.outcomes);
    // Merge commands and the tree are on the page.
    expect(await page.$$eval("#merge li", (items) => items.length)).toBeGreaterThanOrEqual(4);
    expect(await page.$$eval("#tree li.node", (items) => items.length)).toBeGreaterThan(1);
    await page.screenshot({ path: path.join(SHOTS, `${name}.png`) });
    await page.screenshot({ path: path.join(SHOTS, `${name}-full.png`), fullPage: true });
    await page.close();
  });

  it("reads fully without JavaScript: outcome, chart, iterations and folded patches are all in the page", async () => {
    const { page } = await open(name, false);
    const expected = cases[name]!;
    expect(await page.$eval("#outcome", (h) => h.textContent)).toBe(expected.headline);
    expect(await page.$$eval("svg.timeline g.mark", (gs) => gs.length)).toBe(expected.outcomes.length);
    const visible = await page.$$eval("article.iteration", (list) => list.filter((a) => a.getBoundingClientRect().height > 0).length);
    expect(visible).toBe(expected.outcomes.length);
    expect(await page.$$eval("#toolbar button", (buttons) => buttons.length)).toBe(0);
    await page.close();
  });
});

describe("report pages in Chromium: what the agent wrote and what the script adds", () => {
  it("an agent's <script> and <img onerror> show as text and never run", async () => {
    const { page } = await open("all-passes");
    expect(await page.evaluate(() => window.__pwned)).toBeUndefined();
    const text = await page.evaluate(() => document.body.innerText);
    expect(text).toContain(`wrote a <script>window.__pwned = 1</script> and <img src="x" onerror="window.__pwned = 2"> & "quotes"`);
    expect(text).toContain("Should <script>window.__pwned = 3</script> be allowed?");
    expect(text).toContain("Second <b>part</b>");
    expect(await page.$$eval("img", (images) => images.length)).toBe(0);
    await page.close();

    const error = await open("runner-error");
    expect(await error.page.evaluate(() => document.body.innerText)).toContain("agent crashed <badly>");
    expect(await error.page.evaluate(() => window.__pwned)).toBeUndefined();
    await error.page.close();
  });

  it("a guard failure: the failure and the guard's output are shown open; a chart mark links to its iteration", async () => {
    const { page } = await open("guard-fail-retry");
    const failed = await page.$eval("#iter-1", (a) => ({
      text: (a as unknown as { innerText: string }).innerText,
      guardOpen: (a.querySelector("details.guard") as unknown as Folding | null)?.open ?? false,
    }));
    expect(failed.text).toContain("The guard `node guard.mjs` exited with code 1.");
    expect(failed.guardOpen).toBe(true);
    expect(failed.text).toContain("AssertionError: expected 5, got 6");
    await page.click('svg.timeline g.mark[data-iteration="1"] rect.badge');
    expect(await page.evaluate(() => location.hash)).toBe("#iter-1");
    await page.close();
  });

  it("on a fresh clone: the chart shows outcomes without times, and says why", async () => {
    const { page } = await open("guard-fail-retry-clone");
    expect(await page.$$eval("svg.timeline rect.seg-outcome", (bars) => bars.length)).toBe(3);
    expect(await page.$$eval("svg.timeline [class^='seg-agent']", (bars) => bars.length)).toBe(0);
    const text = await page.evaluate(() => document.body.innerText);
    expect(text).toContain("The local logs with each iteration's time are not on this machine");
    expect(text).toContain("agent, guard and runner times are not logged here");
    await page.close();
  });

  it("with JavaScript: 'Failures only' leaves the failed iterations, 'Expand all' opens every patch", async () => {
    const { page } = await open("demo");
    const buttons = await page.$$("#toolbar button");
    expect(buttons).toHaveLength(2);
    const visibleIds = () => page.$$eval("article.iteration", (list) => list.filter((a) => a.getBoundingClientRect().height > 0).map((a) => a.id));
    await buttons[1]!.click();
    expect(await visibleIds()).toEqual(["iter-3"]);
    await buttons[1]!.click();
    expect(await visibleIds()).toHaveLength(5);
    await buttons[0]!.click();
    expect(await page.$$eval("details.patch", (list) => list.every((d) => (d as unknown as Folding).open))).toBe(true);
    await page.close();
  });

  it("starts from the npm package alone", () => {
    // (the time is told, not asserted: a loaded machine stretches it for no defect; that it started at all is the check)
    console.log(`Chromium from @sparticuz/chromium: connected in ${browserStartMs} ms (decompression on first use included)`);
    expect(browserStartMs).toBeGreaterThan(0);
  });
});

/**
 * A night's report: 2,000 iterations (one in 25 a guard failure, times from local logs), synthesized
 * as the report's model and rendered as `runner report` writes it (issue 24: readable at 2,000).
 */
function longRunReport(iterations: number): Report {
  const its: ReportIteration[] = [];
  for (let i = 1; i <= iterations; i++) {
    const failed = i % 25 === 0;
    its.push({
      iteration: i,
      commit: i.toString(16).padStart(40, "a"),
      committedAt: new Date(Date.UTC(2026, 10, 25, 22) + i * 60_000).toISOString(),
      nodeId: `f${String(Math.ceil(i / 99)).padStart(5, "0")}.t${String(i % 99).padStart(3, "0")}`,
      kind: "execute",
      agentStatus: "done",
      guard: failed ? "fail" : "pass",
      attempts: { after: failed ? 1 : 0, max: 3 },
      outcome: failed ? "fail" : "pass",
      summary: `did task ${i}`,
      ...(failed ? { failure: `guard failed on iteration ${i}` } : {}),
      treeLeftInvalid: false,
      diff: {
        files: [{ path: "bench-out.txt", added: 1, removed: 1 }],
        patch: `--- a/bench-out.txt\n+++ b/bench-out.txt\n-${i - 1}\n+${i}`,
        patchLines: 4,
        truncated: false,
      },
      local: { totalMs: 900 + (i % 7) * 40, agentMs: 500, guardMs: 300, guardTail: `guard: iteration ${i}` },
    });
  }
  return {
    runId: "long",
    tip: "f".repeat(40),
    base: "e".repeat(40),
    generatedAt: "2026-11-26T06:00:00.000Z",
    localLogs: iterations,
    outcome: { kind: "in-progress", headline: "Not finished", detail: `Not finished after ${iterations} iterations.`, mergeable: false },
    totals: totalsOf(its, undefined),
    iterations: its,
    notes: [],
    merge: { ref: "runner/long", target: "main", commands: [{ label: "Check out the run's branch", command: "git switch runner/long" }] },
  };
}

describe("report of a 2,000-iteration run in Chromium", () => {
  it("stays as small as the page that loaded within a second; the timeline groups the iterations into at most 240 marks whose axis labels never overlap", async () => {
    const file = path.join(tempDir("runner-report-long-"), "report.html");
    writeFileSync(file, renderReport(longRunReport(2000)));
    const opened = await openFile(browser, file);
    expect(opened.consoleErrors).toEqual([]);
    expect(opened.pageErrors).toEqual([]);
    const { page } = opened;
    const loadMs = await page.evaluate(() => {
      const entry = (
        globalThis as unknown as { performance: { getEntriesByType(t: string): { loadEventEnd: number }[] } }
      ).performance.getEntriesByType("navigation")[0]!;
      return entry.loadEventEnd;
    });
    const elements = await page.evaluate(
      () =>
        (globalThis as unknown as { document: { getElementsByTagName(t: string): { length: number } } }).document.getElementsByTagName("*").length,
    );
    console.log(`2,000-iteration report: ${(statSync(file).size / 1024).toFixed(0)} KB, ${elements} elements, loaded in ${Math.round(loadMs)} ms`);
    // The load time is measured (above), not asserted: a loaded machine stretches it for no defect. What
    // makes it, the page's bytes and elements, is held near the page measured at 0.44 s (2,228 KB,
    // 51,897 elements; docs/decisions.md 2026-11-26): a page that grows past these is a regression.
    expect(statSync(file).size).toBeLessThan(2_600 * 1024);
    expect(elements).toBeLessThan(60_000);
    const marks = await page.$$eval("svg.timeline g.mark", (gs) =>
      gs.map((g) => ({
        first: Number(g.getAttribute("data-iteration")),
        last: Number(g.getAttribute("data-last")),
        outcome: g.getAttribute("data-outcome"),
      })),
    );
    expect(marks.length).toBeLessThanOrEqual(240);
    expect(marks.length).toBeGreaterThan(100);
    // A mark holding a failed iteration (every 25th) shows the failure; the others the passes.
    for (const mark of marks) {
      const holdsFailure = Math.floor(mark.last / 25) > Math.floor((mark.first - 1) / 25);
      expect(mark.outcome, `${mark.first}–${mark.last}`).toBe(holdsFailure ? "fail" : "pass");
    }
    expect(marks[marks.length - 1]!.last).toBe(2000);
    const labels = await page.$$eval("svg.timeline g.mark text.axis", (texts) =>
      texts.map((t) => {
        const r = t.getBoundingClientRect();
        return { text: t.textContent, left: r.left, right: r.right };
      }),
    );
    expect(labels.length).toBeGreaterThanOrEqual(5);
    expect(labels[0]!.text).toBe("1");
    for (let i = 1; i < labels.length; i++)
      expect(labels[i]!.left, `${labels[i - 1]!.text} and ${labels[i]!.text}`).toBeGreaterThan(labels[i - 1]!.right + 4);
    expect(await page.$$eval("article.iteration", (list) => list.length)).toBe(2000);
    await page.screenshot({ path: path.join(SHOTS, "long-run.png") });
    await page.close();
  });
});
