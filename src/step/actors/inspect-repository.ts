// Step 1, safety check: the facts about the repository (branch, HEAD, changed paths, whether the
// local-only folders are ignored, an operation in progress), the git control files as they are
// before this iteration's agent, and the journal of an iteration that a killed runner left behind
// (whose agent's changes to the control files are put back first). core/safety.ts decides.
import { existsSync } from "node:fs";
import path from "node:path";
import { fromPromise } from "xstate";
import { OPERATION_MARKERS } from "../../adapters/agent-git.js";
import { killLeftovers } from "../../adapters/containment.js";
import { changedPathList } from "../../adapters/git.js";
import { restoreControlFiles, snapshotControlFiles } from "../../adapters/git-control.js";
import { readJournal, removeJournal } from "../../adapters/journal.js";
import { ensureRunnerIndex, mirroredCommit } from "../../adapters/runner-index.js";
import { LAYOUT } from "../../core/layout.js";
import { journalStatus, type RepositoryFacts } from "../../core/safety.js";
import type { ActorDeps } from "../deps.js";

export function inspectRepositoryActor({ gitDir, git, state }: ActorDeps) {
  return fromPromise<RepositoryFacts, { runIdOption: string | undefined }>(async () => {
    const journal = await readJournal(state.journal);
    // A killed runner's agent (or guard) may still be running, writing into the work tree: it ends first.
    if (journal?.containment) await killLeftovers(journal.containment);
    // Before any git call reads them: what an interrupted iteration's agent did to them is undone.
    const controlRestored = journal?.control ? restoreControlFiles(gitDir, journal.control) : [];
    const [mirrored, first, ignored, identity] = await Promise.all([
      mirroredCommit(state),
      git.status(),
      git.ignored([`${LAYOUT.iterations}/x`, `${LAYOUT.context}/x`]),
      git.identity(),
    ]);
    // Usually the runner's index mirrors HEAD already and that status is the one. Else (a first
    // step, commits by other hands, or a killed iteration whose `git add` may be half done in it)
    // the index is brought to HEAD and the status taken again.
    let status = first;
    if (mirrored !== status.head || journal !== undefined) {
      await ensureRunnerIndex(git, state, status.head, journal !== undefined);
      status = await git.status();
    }
    const operation = OPERATION_MARKERS.find(([marker]) => existsSync(path.join(gitDir, marker)));
    const facts: RepositoryFacts = {
      branch: status.branch,
      head: status.head,
      dirtyPaths: changedPathList(status.changes),
      logsIgnored: ignored.length === 2,
      operationInProgress: operation?.[1],
      control: snapshotControlFiles(gitDir),
      controlRestored,
      identity,
    };
    if (journal) {
      const headSubject = status.head === undefined ? undefined : (await git.raw(["log", "-1", "--format=%s", "HEAD"])).trim();
      const verdict = journalStatus(journal, status.branch, status.head, headSubject);
      // A journal whose iteration was committed, or whose branch moved on by other hands, is spent.
      if (verdict === "committed" || verdict === "abandoned") await removeJournal(state.journal);
      else facts.interrupted = { ...journal, status: verdict };
    }
    return facts;
  });
}
