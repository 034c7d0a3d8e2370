// Step 10, commit: every iteration, failures included, with the deterministic subject and the
// Runner-* trailers (CONTRACT §7). Changes to protected paths are taken back first and kept in the
// log, so the agent can never make its own guard pass.
import { existsSync } from "node:fs";
import { fromPromise } from "xstate";
import { gitDir } from "../../adapters/git.js";
import { IterationLog } from "../../adapters/iteration-log.js";
import { removeJournal } from "../../adapters/journal.js";
import { projectPath } from "../../adapters/project-files.js";
import { commitSubjectOf } from "../../core/iteration-record.js";
import { LAYOUT } from "../../core/layout.js";
import { formatCommitMessage } from "../../core/loop-history.js";
import { redactSecrets } from "../../core/text-limits.js";
import type { CommitRequest } from "../../../machines/iteration-types.js";
import type { ActorDeps } from "../deps.js";

export function commitIterationActor({ root, git, secrets, onProgress }: ActorDeps) {
  return fromPromise<{ sha: string }, CommitRequest>(async ({ input: { record, base } }) => {
    onProgress?.({ type: "phase", phase: "commit", iteration: record.iteration, nodeId: record.nodeId });
    const log = new IterationLog(root, record.runId, record.iteration, secrets);
    const message = redactSecrets(
      formatCommitMessage(commitSubjectOf(record), {
        summary: record.summary,
        status: record.stepKind === "repair" ? undefined : record.status,
        attempts: record.attemptsAfter !== undefined && record.maxAttempts !== undefined ? { after: record.attemptsAfter, max: record.maxAttempts } : undefined,
        runnerError: record.runnerError ? `${record.runnerError.kind}: ${record.runnerError.message}` : undefined,
        failure: record.failure?.split("\n")[0],
        treeLeftInvalid: record.treeToWrite === undefined,
      }),
      secrets,
    );
    if (record.protectedChanged.length > 0) {
      // Files the agent created show in the patch once git knows of them (intent to add).
      const present = record.protectedChanged.filter((relative) => existsSync(projectPath(root, relative)));
      if (present.length > 0) await git.raw(["add", "--intent-to-add", "--", ...present]).catch(() => "");
      log.write("protected.patch", await git.raw(["diff", "--binary", "--no-color", "HEAD", "--", ...record.protectedChanged]).catch(() => ""));
      await git.restorePaths(record.protectedChanged);
    }
    const [, identity] = await Promise.all([git.addAll(), git.identity()]);
    // diff.patch (against the commit the iteration began from, so it can run beside the commit)
    // leaves out the tree file: tree.before.json and tree.after.json hold it whole.
    const [patch] = await Promise.all([git.stagedPatch(base, [LAYOUT.tree]), git.commit(message, identity.name === undefined || identity.email === undefined)]);
    const dir = await gitDir(root);
    const sha = await git.headCommit(dir);
    log.write("diff.patch", patch);
    await removeJournal(dir);
    return { sha };
  });
}
