// A plan file as `runner init --plan` and `runner import` read it (docs/plans.md): beside the file,
// task-master's current tag; after the import, the tree's size against what every command reads.
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { PlanEditError } from "../../core/edit/plan-edit.js";
import type { ImportOptions } from "../../core/plan/plan-import.js";
import { UsageError } from "../../errors.js";
import { MAX_TREE_BYTES, treeSizeProblem } from "./tree-store.js";

/** A tree no command would read (over MAX_TREE_BYTES) is refused before it is written. */
export function refuseOversizedTree(name: string, text: string): void {
  const bytes = Buffer.byteLength(text);
  if (treeSizeProblem(bytes))
    throw new PlanEditError(
      `${name} gives a task tree of ${(bytes / 1024 / 1024).toFixed(1)} MiB, over the ${MAX_TREE_BYTES / 1024 / 1024} MiB every command reads; split the plan and import its parts as the run goes (\`runner import\`)`,
    );
}

/** task-master's current tag: `.taskmaster/state.json` beside the tasks folder (`.taskmaster/tasks/tasks.json`), when there is one. */
export function taskMasterState(planFile: string): { currentTag?: string } {
  if (!/\.json$/i.test(planFile)) return {};
  for (const candidate of [path.join(path.dirname(planFile), "..", "state.json"), path.join(path.dirname(planFile), "state.json")]) {
    try {
      const state = JSON.parse(readFileSync(candidate, "utf8")) as { currentTag?: unknown };
      if (typeof state.currentTag === "string" && state.currentTag !== "") return { currentTag: state.currentTag };
    } catch {
      // no state file there (or not task-master's): the default tag applies
    }
  }
  return {};
}

/**
 * A plan file as `runner init --plan` and `runner import` read it: its name, its bytes, and the
 * import options the command line gives (the caller adds max_attempts) (with task-master's current tag found beside it); `shown`
 * names the file in the one sentence for a file that cannot be read.
 */
export async function readPlanFile(
  full: string,
  shown: string,
  args: { goal?: string; skipDone?: boolean; tag?: string },
): Promise<{ name: string; bytes: Buffer; options: Omit<ImportOptions, "maxAttempts"> }> {
  const bytes = await readFile(full).catch(() => {
    throw new UsageError(`${shown} cannot be read; give the path of a Markdown plan, ralph's prd.json or task-master's tasks.json.`);
  });
  const options = {
    ...(args.goal !== undefined ? { goal: args.goal } : {}),
    ...(args.skipDone ? { skipDone: true } : {}),
    ...(args.tag !== undefined ? { tag: args.tag } : {}),
    ...taskMasterState(full),
  };
  return { name: path.basename(full), bytes, options };
}
