// Step 10, persist: the updated tree written atomically in canonical form (or, when the agent left
// it invalid, kept as the agent wrote it for the next repair step), and the iteration's logs.
import { fromPromise } from "xstate";
import { IterationLog } from "../../adapters/records/iteration-log.js";
import { projectPath, readOptional } from "../../adapters/files/project-files.js";
import { readFile } from "node:fs/promises";
import { writeFileAtomic } from "../../adapters/files/tree-store.js";
import { LAYOUT } from "../../core/base/layout.js";
import { serializeTreePieces } from "../../core/tree/serialize.js";
import type { PersistRequest } from "../../../machines/iteration-types.js";
import type { ActorDeps } from "../deps.js";

export function persistIterationActor({ root, secrets }: ActorDeps) {
  return fromPromise<void, PersistRequest>(async ({ input: { record } }) => {
    const log = new IterationLog(root, record.runId, record.iteration, secrets);
    const treeFile = projectPath(root, LAYOUT.tree);
    if (record.treeToWrite) {
      // Serialized as it is written, piece by piece (a large tree never as one string); tree.after.json
      // is a copy of the file, or its text redacted when it holds a secret value.
      const watch = secretWatch(log, secrets);
      await writeFileAtomic(treeFile, watch.pieces(serializeTreePieces(record.treeToWrite)));
      if (watch.found()) log.write("tree.after.json", await readFile(treeFile, "utf8"));
      else log.copyFile("tree.after.json", treeFile);
    } else {
      log.write("tree.after.json", (await readOptional(treeFile)) ?? "");
    }
    if (record.runnerError) log.write("runner_error.log", `${record.runnerError.kind}: ${record.runnerError.message}\n`);
  });
}

/** Pieces passed through, watched for a secret value (also one that spans two pieces). */
function secretWatch(
  log: IterationLog,
  secrets: readonly string[],
): { pieces: (source: Iterable<string>) => Generator<string>; found: () => boolean } {
  const longest = secrets.reduce((max, secret) => Math.max(max, secret.length), 0);
  let found = secrets.some((secret) => secret.endsWith("\n")); // (one might reach into the last newline)
  return {
    *pieces(source) {
      let carry = "";
      for (const piece of source) {
        if (!found && longest > 0) {
          const window = carry + piece;
          found = log.redacts(window);
          carry = window.slice(-longest);
        }
        yield piece;
      }
    },
    found: () => found,
  };
}
