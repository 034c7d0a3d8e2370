// `runner report [--run-id ID] [--output FILE] [--open]`: one self-contained HTML page about a run —
// outcome, totals, timeline, tree, every iteration, the agent's questions and assumptions, and the
// commands to review and merge the branch. Written to .runner/iterations/<run-id>/report.html (local,
// gitignored) unless --output names another file; the path is printed. writeReport is also
// `runner mcp`'s report tool.
import { closeSync, openSync, readSync, writeSync } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import path from "node:path";
import { gitDir } from "../../adapters/git/git.js";
import { findOpener, openWith } from "../../adapters/process/opener.js";
import { LAYOUT } from "../../core/base/layout.js";
import { gatherReport, iterationDiffs } from "../../report/gather.js";
import type { Report, ReportIteration } from "../../report/model.js";
import { NO_ITERATIONS, renderIteration, reportFoot, reportHead } from "../../report/render.js";
import type { GlobalArgs } from "../command-table.js";
import { printLine } from "../output.js";
import { findProjectRoot, inProject } from "../repo.js";

/** Writes the report of the run of the repository at `folder` (the current one, or `runIdOption`); returns the page's path and the run. */
export async function writeReport(
  folder: string,
  runIdOption: string | undefined,
  output: string | undefined,
): Promise<{ path: string; run_id: string }> {
  const root = findProjectRoot(folder);
  await gitDir(root); // refuses, in one sentence, where there is no repository
  const place = (runId: string) => (output !== undefined ? path.resolve(output) : inProject(root, `${LAYOUT.iterations}/${runId}/report.html`));
  // The articles are written beside the page while the run is audited (on a thread of its own), then the page around them.
  let articles: string | undefined;
  try {
    const report = await gatherReport(root, runIdOption, new Date().toISOString(), async (runId, iterations) => {
      await mkdir(path.dirname(place(runId)), { recursive: true });
      articles = `${place(runId)}.${process.pid}.articles`;
      await writeArticles(articles, root, iterations);
    });
    const file = place(report.runId);
    await writePage(file, report, articles!);
    return { path: file, run_id: report.runId };
  } finally {
    if (articles !== undefined) await rm(articles, { force: true });
  }
}

export async function run(argv: GlobalArgs & { runId?: string; output?: string; open?: boolean }): Promise<number> {
  const { path: file } = await writeReport(argv.C, argv.runId, argv.output);
  printLine(file);
  if (argv.open) {
    const opener = findOpener();
    if (opener === undefined)
      printLine(`No ${process.platform === "darwin" ? "open" : "xdg-open"} command here to open it; open the file in a browser.`);
    else if (!(await openWith(opener, file))) printLine(`${opener} could not be started; open the file in a browser.`);
  }
  return 0;
}

/**
 * Text written to a file in pieces of about 256 KB, each at once (a thousand small writes through
 * the thread pool cost more than the page's rendering).
 */
class PageWriter {
  private pending: string[] = [];
  private size = 0;

  constructor(private readonly fd: number) {}

  write(text: string): void {
    this.pending.push(text);
    this.size += text.length;
    if (this.size >= 256 * 1024) this.flush();
  }

  flush(): void {
    if (this.pending.length > 0) writeSync(this.fd, this.pending.join(""));
    this.pending = [];
    this.size = 0;
  }
}

/** Each iteration's article with its diff, read just then, and let go: written to `file` as they are produced. */
async function writeArticles(file: string, root: string, iterations: readonly ReportIteration[]): Promise<void> {
  const fd = openSync(file, "w");
  try {
    const out = new PageWriter(fd);
    if (iterations.length === 0) out.write(NO_ITERATIONS);
    let i = 0;
    for await (const diff of iterationDiffs(root, iterations)) {
      out.write(`${i > 0 ? "\n" : ""}${renderIteration({ ...iterations[i]!, diff })}`);
      i++;
    }
    out.flush();
  } finally {
    closeSync(fd);
  }
}

/** The page: its head (outcome, totals, audit), the articles written before, its foot. */
async function writePage(file: string, report: Report, articles: string): Promise<void> {
  const fd = openSync(file, "w");
  try {
    writeSync(fd, reportHead(report));
    const piece = Buffer.allocUnsafe(1 << 20);
    const from = openSync(articles, "r");
    try {
      for (let read = readSync(from, piece); read > 0; read = readSync(from, piece)) writeSync(fd, piece, 0, read);
    } finally {
      closeSync(from);
    }
    writeSync(fd, reportFoot(report));
  } finally {
    closeSync(fd);
  }
}
