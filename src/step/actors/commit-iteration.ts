// Step 10, commit: every iteration, failures included, with the deterministic subject and the
// Runner-* trailers (CONTRACT §7). Changes to protected paths are taken back first and kept in the
// log, so the agent can never make its own guard pass. The commit is made with git's plumbing
// through the runner's own index — no hook, no message editing, no signing — with the starting
// commit as its only parent, and the run branch is moved to it only if it still points there.
import { existsSync } from "node:fs";
import { fromPromise } from "xstate";
import { isSystemError } from "../../errors.js";
import { IterationLog } from "../../adapters/records/iteration-log.js";
import { removeJournal } from "../../adapters/records/journal.js";
import { projectPath } from "../../adapters/files/project-files.js";
import { addToHistory } from "../../adapters/audit/run-history.js";
import { commitStaged } from "../../adapters/git/runner-commit.js";
import { settleTreeAfter } from "../../adapters/records/tree-snapshots.js";
import { commitSubjectOf, describeAgentGit } from "../../core/step/iteration-record.js";
import { LAYOUT } from "../../core/base/layout.js";
import { formatCommitMessage } from "../../core/commit/loop-history.js";
import { redactSecrets } from "../../core/base/text-limits.js";
import type { CommitFacts, CommitRequest } from "../../../machines/iteration-types.js";
import type { ActorDeps } from "../deps.js";

/** diff.patch keeps at most this much (a 600 MB file must not become a 600 MB log). */
const PATCH_CAP_BYTES = 16 * 1024 * 1024;

export function commitIterationActor({ root, git, gitDir, state, secrets, onProgress, lockLost }: ActorDeps) {
  return fromPromise<CommitFacts, CommitRequest>(async ({ input: { record, start } }) => {
    const { from, identity } = start;
    onProgress?.({ type: "phase", phase: "commit", iteration: record.iteration, nodeId: record.nodeId });
    const log = new IterationLog(root, record.runId, record.iteration, secrets);
    // The run's first loop commit says where the run began: where `runner start` left the branch, if
    // that is in the history the iteration starts from, else the iteration's own starting commit.
    const runStart =
      record.iteration !== 1
        ? undefined
        : from.runStart !== undefined && (from.runStart === from.head || (await git.isAncestor(from.runStart, from.head)))
          ? from.runStart
          : from.head;
    const message = redactSecrets(
      formatCommitMessage(commitSubjectOf(record), {
        summary: record.summary,
        status: record.stepKind === "repair" ? undefined : record.status,
        attempts:
          record.attemptsAfter !== undefined && record.maxAttempts !== undefined
            ? { after: record.attemptsAfter, max: record.maxAttempts }
            : undefined,
        runnerError: record.runnerError ? `${record.runnerError.kind}: ${record.runnerError.message}` : undefined,
        failure: record.failure,
        gitNote: describeAgentGit(record.agentGit),
        treeLeftInvalid: record.treeToWrite === undefined,
        tests: record.testFilesChanged,
        runStart,
        rechecked: record.rechecked,
      }),
      secrets,
    );
    if (record.protectedChanged.length > 0) {
      // Files the agent created show in the patch once git knows of them (intent to add).
      const present = record.protectedChanged.filter((relative) => existsSync(projectPath(root, relative)));
      if (present.length > 0) await git.raw(["add", "--intent-to-add", "--", ...present]).catch(() => "");
      log.write(
        "protected.patch",
        await git
          .raw(["diff", "--binary", "--no-color", "--no-ext-diff", "--no-textconv", from.head, "--", ...record.protectedChanged])
          .catch(() => ""),
      );
      await git.restorePaths(record.protectedChanged, from.head);
    }
    await git.addAll();
    // diff.patch: what is staged now is what the commit holds; taken beside the commit. It leaves out
    // the tree file (the commit and its parent hold it whole; the log's trees.json refers to them).
    const patch = git.diffToFile(from.head, "index", [LAYOUT.tree], log.file("diff.patch"), PATCH_CAP_BYTES, secrets);
    const commit = commitStaged({ git, gitDir, state, branch: from.branch, parent: from.head }, message, identity, {
      lockLost,
      lost: (reason) => new Error(`this runner no longer holds the repository's lock (${reason}), so it commits nothing`),
    });
    // The patch is a local log: one that cannot be written (a full disk) ends where it stopped, and
    // the commit, which is made, is recorded as such (meta.json, written last, reports the disk).
    // Its failure is told after the commit (run-step.ts): a patch cut short must not pass unseen.
    let patchError: unknown;
    const patched = patch.then(
      () => undefined,
      (error: unknown) => {
        patchError = error;
      },
    );
    const sha = await commit;
    await patched;
    // tree.after.json, once the commit holds the same bytes, becomes a reference to it.
    await settleTreeAfter(log, projectPath(root, LAYOUT.tree), sha).catch(() => undefined);
    // The run's history as the next step will read it: this commit on top of the one it kept.
    const newline = message.indexOf("\n");
    await addToHistory(
      state,
      record.runId,
      from.head,
      {
        sha,
        subject: message.slice(0, newline),
        body: message
          .slice(newline + 1)
          .replace(/^\n/, "")
          .trimEnd(),
        author: `${identity.name} <${identity.email}>`,
      },
      record.treeToWrite !== undefined,
    );
    await removeJournal(state.journal);
    return isSystemError(patchError) ? { sha, logError: patchError.message } : { sha };
  });
}
