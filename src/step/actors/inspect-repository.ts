// Step 1, safety check: the facts about the repository (branch, HEAD, changed paths, whether the
// local-only folders are ignored, an operation in progress), the git control files as they are
// before this iteration's agent, and the journal of an iteration that a killed runner left behind
// (whose agent's changes to the control files are put back first). core/step/safety.ts decides.
import { existsSync } from "node:fs";
import { readdir } from "node:fs/promises";
import path from "node:path";
import { fromPromise } from "xstate";
import { OPERATION_MARKERS } from "../../adapters/git/agent-git.js";
import { killLeftovers } from "../../adapters/process/containment.js";
import { prepareAheadStart } from "../../adapters/process/process-runner.js";
import { changedPathList } from "../../adapters/git/git.js";
import { restoreControlFiles, snapshotControlFiles } from "../../adapters/git/git-control.js";
import { readJournal, removeJournal } from "../../adapters/records/journal.js";
import { readRunStarts } from "../../adapters/state/run-starts.js";
import { projectPath } from "../../adapters/files/project-files.js";
import { ensureRunnerIndex, mirroredCommit } from "../../adapters/git/runner-index.js";
import { LAYOUT } from "../../core/base/layout.js";
import { journalStatus, type RepositoryFacts } from "../../core/step/safety.js";
import type { ActorDeps } from "../deps.js";

export function inspectRepositoryActor({ root, gitDir, git, state, earlyStatus }: ActorDeps) {
  return fromPromise<RepositoryFacts, { runIdOption: string | undefined }>(async () => {
    const journal = await readJournal(state.journal);
    // A killed runner's agent (or guard) may still be running, writing into the work tree: it ends first.
    if (journal?.containment) await killLeftovers(journal.containment);
    // No process of an agent or a guard is left now: the agent's contained start can begin (its
    // wrapper moves into its cgroup while the step checks, loads and writes the prompt).
    prepareAheadStart();
    // Before any git call reads them: what an interrupted iteration's agent did to them is undone.
    const controlRestored = journal?.control ? restoreControlFiles(gitDir, journal.control) : [];
    // Once both local-only folders hold something (after a run's first iteration), the status itself
    // tells whether git ignores them: it lists every untracked file. Only before that does git say.
    const present = await localFoldersPresent(root);
    const [mirrored, first, ignoredByGit] = await Promise.all([
      mirroredCommit(state),
      // (started early only when there was no journal: then nothing had to be put back first)
      journal === undefined && earlyStatus !== undefined ? earlyStatus : git.status(),
      present ? undefined : git.ignored(LOCAL_FOLDERS.map((folder) => `${folder}/x`)),
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
      logsIgnored: ignoredByGit
        ? ignoredByGit.length === LOCAL_FOLDERS.length
        : !changedPathList(status.changes).some((file) => LOCAL_FOLDERS.some((folder) => file.startsWith(`${folder}/`))),
      operationInProgress: operation?.[1],
      control: snapshotControlFiles(gitDir),
      controlRestored,
      runStarts: readRunStarts(state),
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

/** The local-only folders, which git must ignore. */
const LOCAL_FOLDERS = [LAYOUT.iterations, LAYOUT.context];

/** Whether both local-only folders exist with something in them. */
async function localFoldersPresent(root: string): Promise<boolean> {
  const present = await Promise.all(
    LOCAL_FOLDERS.map((folder) =>
      readdir(projectPath(root, folder)).then(
        (names) => names.length > 0,
        () => false,
      ),
    ),
  );
  return present.every(Boolean);
}
