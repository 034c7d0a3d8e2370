// `runner report [--run-id ID] [--output FILE] [--open]`: one self-contained HTML page about a run —
// outcome, totals, timeline, tree, every iteration, the agent's questions and assumptions, and the
// commands to review and merge the branch. Written to .runner/iterations/<run-id>/report.html (local,
// gitignored) unless --output names another file; the path is printed. writeReport is also
// `runner mcp`'s report tool.
import { mkdir, open } from "node:fs/promises";
import path from "node:path";
import { gitDir } from "../../adapters/git.js";
import { findOpener, openWith } from "../../adapters/opener.js";
import { LAYOUT } from "../../core/layout.js";
import { gatherReport, iterationDiffs } from "../../report/gather.js";
import type { Report } from "../../report/model.js";
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
  const report = await gatherReport(root, runIdOption, new Date().toISOString());
  const file = output !== undefined ? path.resolve(output) : inProject(root, `${LAYOUT.iterations}/${report.runId}/report.html`);
  await mkdir(path.dirname(file), { recursive: true });
  await writePage(file, root, report);
  return { path: file, run_id: report.runId };
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

/** The page written as it is produced: each iteration's article with its diff, read just then, and let go. */
async function writePage(file: string, root: string, report: Report): Promise<void> {
  const handle = await open(file, "w");
  try {
    await handle.write(reportHead(report));
    if (report.iterations.length === 0) await handle.write(NO_ITERATIONS);
    let i = 0;
    for await (const diff of iterationDiffs(root, report.iterations)) {
      await handle.write(`${i > 0 ? "\n" : ""}${renderIteration({ ...report.iterations[i]!, diff })}`);
      i++;
    }
    await handle.write(reportFoot(report));
  } finally {
    await handle.close();
  }
}
