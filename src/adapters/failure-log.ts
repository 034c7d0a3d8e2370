// The failure an iteration hears about (context/failure.md): in full from the local log of the
// iteration that failed when it is there, else the first line the commit's trailer keeps.
import path from "node:path";
import { iterationDir } from "../core/layout.js";
import { lastFailureRecord, type LoopRecord } from "../core/loop-history.js";
import { readOptional } from "./project-files.js";

export async function lastFailure(root: string, runId: string, records: readonly LoopRecord[], nodeId: string, ancestorIds: readonly string[]): Promise<string | undefined> {
  const latest = lastFailureRecord(records, nodeId, ancestorIds);
  if (!latest) return undefined;
  const meta = await readOptional(path.join(root, ...`${iterationDir(runId, latest.subject.iteration)}/meta.json`.split("/")));
  if (meta) {
    try {
      const failure = (JSON.parse(meta) as { failure?: unknown }).failure;
      if (typeof failure === "string" && failure.length > 0) return `Iteration ${latest.subject.iteration}: ${failure}`;
    } catch {
      // a damaged local log falls back to the commit
    }
  }
  return `Iteration ${latest.subject.iteration}: ${latest.trailers.failure}`;
}
