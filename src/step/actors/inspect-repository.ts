// Step 1, safety check: the facts about the repository (branch, HEAD, changed paths, whether the
// local-only folders are ignored, an operation in progress) and the journal of an iteration that a
// killed runner left behind. core/safety.ts decides what they mean.
import { existsSync } from "node:fs";
import path from "node:path";
import { fromPromise } from "xstate";
import { changedPathList, gitDir } from "../../adapters/git.js";
import { readJournal, removeJournal } from "../../adapters/journal.js";
import { LAYOUT } from "../../core/layout.js";
import { journalStatus, type RepositoryFacts } from "../../core/safety.js";
import type { ActorDeps } from "../deps.js";

const OPERATION_MARKERS: [string, string][] = [
  ["MERGE_HEAD", "merge"],
  ["rebase-merge", "rebase"],
  ["rebase-apply", "rebase"],
  ["CHERRY_PICK_HEAD", "cherry-pick"],
  ["REVERT_HEAD", "revert"],
];

export function inspectRepositoryActor({ root, git }: ActorDeps) {
  return fromPromise<RepositoryFacts, { runIdOption: string | undefined }>(async () => {
    const dir = await gitDir(root);
    const [status, ignored, journal] = await Promise.all([
      git.status(),
      git.ignored([`${LAYOUT.iterations}/x`, `${LAYOUT.context}/x`]),
      readJournal(dir),
    ]);
    const operation = OPERATION_MARKERS.find(([marker]) => existsSync(path.join(dir, marker)));
    const facts: RepositoryFacts = {
      branch: status.branch,
      head: status.head,
      dirtyPaths: changedPathList(status.changes),
      logsIgnored: ignored.length === 2,
      operationInProgress: operation?.[1],
    };
    if (journal) {
      const headSubject = status.head === undefined ? undefined : (await git.raw(["log", "-1", "--format=%s", "HEAD"])).trim();
      const verdict = journalStatus(journal, status.branch, status.head, headSubject);
      // A journal whose iteration was committed, or whose branch moved on by other hands, is spent.
      if (verdict === "committed" || verdict === "abandoned") await removeJournal(dir);
      else facts.interrupted = { ...journal, status: verdict };
    }
    return facts;
  });
}
