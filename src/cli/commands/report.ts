// `runner report [--run-id ID] [--output FILE] [--open]`: one self-contained HTML page about a run —
// outcome, totals, timeline, tree, every iteration, the agent's questions and assumptions, and the
// commands to review and merge the branch. Written to .runner/iterations/<run-id>/report.html (local,
// gitignored) unless --output names another file; the path is printed.
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { gitDir } from "../../adapters/git.js";
import { findOpener, openWith } from "../../adapters/opener.js";
import { LAYOUT } from "../../core/layout.js";
import { gatherReport } from "../../report/gather.js";
import { renderReport } from "../../report/render.js";
import type { GlobalArgs } from "../command-table.js";
import { printLine } from "../output.js";
import { findProjectRoot, inProject } from "../repo.js";

export async function run(argv: GlobalArgs & { runId?: string; output?: string; open?: boolean }): Promise<number> {
  const root = findProjectRoot(argv.C);
  await gitDir(root); // refuses, in one sentence, where there is no repository
  const report = await gatherReport(root, argv.runId, new Date().toISOString());
  const file = argv.output !== undefined ? path.resolve(argv.output) : inProject(root, `${LAYOUT.iterations}/${report.runId}/report.html`);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, renderReport(report));
  printLine(file);
  if (argv.open) {
    const opener = findOpener();
    if (opener === undefined)
      printLine(`No ${process.platform === "darwin" ? "open" : "xdg-open"} command here to open it; open the file in a browser.`);
    else if (!(await openWith(opener, file))) printLine(`${opener} could not be started; open the file in a browser.`);
  }
  return 0;
}
