// Step 6, re-load: what the agent left — its output file, the tree file freshly parsed, the changed
// paths. Also what the recovery of a runner error collects. core decides what it means.
import { readFile, stat } from "node:fs/promises";
import { fromPromise } from "xstate";
import { changedPathList } from "../../adapters/git.js";
import { IterationLog } from "../../adapters/iteration-log.js";
import { projectPath, readOptional } from "../../adapters/project-files.js";
import { MAX_TREE_BYTES } from "../../adapters/tree-store.js";
import { LAYOUT } from "../../core/layout.js";
import { jsonSyntaxMessage } from "../../core/problems.js";
import type { CollectedFacts } from "../../core/step-facts.js";
import type { IterationRef } from "../../../machines/iteration-types.js";
import type { ActorDeps } from "../deps.js";

export function collectResultActor({ root, git, secrets }: ActorDeps) {
  return fromPromise<CollectedFacts, IterationRef>(async ({ input }) => {
    const log = new IterationLog(root, input.runId, input.iteration, secrets);
    const [outputText, status, treeData] = await Promise.all([readOptional(log.file("output.json")), git.status(), readTreeData(projectPath(root, LAYOUT.tree))]);
    return { outputText, treeData, changedPaths: changedPathList(status.changes) };
  });
}

/** The tree file parsed as JSON (size-limited), or the parse problem; schema checks come later. */
async function readTreeData(treeFile: string): Promise<CollectedFacts["treeData"]> {
  const info = await stat(treeFile).catch(() => undefined);
  if (!info) return { ok: false, problems: [{ path: "$", message: "the file was deleted" }] };
  if (info.size > MAX_TREE_BYTES) return { ok: false, problems: [{ path: "$", message: `the file is over the ${MAX_TREE_BYTES / 1024 / 1024} MiB limit` }] };
  const text = await readFile(treeFile, "utf8");
  try {
    return { ok: true, data: JSON.parse(text) };
  } catch (error) {
    return { ok: false, problems: [{ path: "$", message: jsonSyntaxMessage(text, error) }] };
  }
}
