// Step 10, persist: the updated tree written atomically in canonical form (or, when the agent left
// it invalid, kept as the agent wrote it for the next repair step), and the iteration's logs.
import { fromPromise } from "xstate";
import { IterationLog } from "../../adapters/iteration-log.js";
import { projectPath, readOptional } from "../../adapters/project-files.js";
import { writeTreeBody } from "../../adapters/tree-store.js";
import { LAYOUT } from "../../core/layout.js";
import { serializeTreeBody } from "../../core/serialize.js";
import type { PersistRequest } from "../../../machines/iteration-types.js";
import type { ActorDeps } from "../deps.js";

export function persistIterationActor({ root, secrets }: ActorDeps) {
  return fromPromise<void, PersistRequest>(async ({ input: { record } }) => {
    const log = new IterationLog(root, record.runId, record.iteration, secrets);
    const treeFile = projectPath(root, LAYOUT.tree);
    if (record.treeToWrite) {
      // Serialized once: the tree file is written from it, and tree.after.json is a copy of the file
      // (or its text redacted, when it holds a secret value).
      const body = serializeTreeBody(record.treeToWrite);
      await writeTreeBody(treeFile, body);
      if (log.redacts(body, true)) log.write("tree.after.json", `${body}\n`);
      else log.copyFile("tree.after.json", treeFile);
    } else {
      log.write("tree.after.json", (await readOptional(treeFile)) ?? "");
    }
    if (record.runnerError) log.write("runner_error.log", `${record.runnerError.kind}: ${record.runnerError.message}\n`);
  });
}
