// A person's edit, committed (CONTRACT §7, "Steering a run"): the runner's files it changes written
// atomically, then committed with git's plumbing through the runner's own index — as an iteration
// is (src/step/actors/commit-iteration.ts) — on the current branch, with the person's git identity,
// the edit's own subject and trailers, the branch's tip as its only parent. Only the files of the
// edit are staged; anything else in the work tree is left as it was.
import { readFile } from "node:fs/promises";
import { formatPersonEditMessage, type EditClient, type PersonEditSubject } from "../core/person-edit.js";
import { runIdFromBranch } from "../core/run-id.js";
import { RefusalError } from "../errors.js";
import { gitDir, GitRepo, type CommitIdentity } from "./git.js";
import { projectPath } from "./project-files.js";
import { ensureRunnerIndex, publishRunnerIndex } from "./runner-index.js";
import { repositoryState } from "./runner-state.js";
import { writeFileAtomic } from "./tree-store.js";

export interface PersonEditCommit {
  sha: string;
  subject: string;
  runId: string | undefined;
  person: string;
}

/** The person making the edit: GIT_AUTHOR_NAME/EMAIL, else git's user.name/email; none is a refusal (an edit names who made it). */
async function personIdentity(git: GitRepo, env: Readonly<Record<string, string | undefined>>): Promise<CommitIdentity> {
  if (env.GIT_AUTHOR_NAME && env.GIT_AUTHOR_EMAIL) return { name: env.GIT_AUTHOR_NAME, email: env.GIT_AUTHOR_EMAIL };
  const configured = await git.identity();
  if (configured.name && configured.email) return { name: configured.name, email: configured.email };
  throw new RefusalError(
    'A person\'s edit is committed in your name, and git knows none; set it (`git config user.name "…"` and `git config user.email …`), then edit again.',
  );
}

/** The current branch and its tip; refuses where an edit cannot be committed (no commit, detached HEAD). */
async function editTarget(root: string): Promise<{ branch: string; head: string; runId: string | undefined }> {
  const { branch, sha } = await new GitRepo(root).head();
  if (sha === undefined) throw new RefusalError("The repository has no commits yet; commit your project (with .runner/) first, then edit the plan.");
  if (branch === undefined)
    throw new RefusalError("HEAD is detached; check out the branch the edit belongs on (the run's runner/<id>, or main), then edit again.");
  return { branch, head: sha, runId: runIdFromBranch(branch) };
}

/**
 * Writes `files` (repository-relative path → new text) and commits exactly them as a person's
 * edit. Each file must be as the branch's tip holds it (an uncommitted change of a person would
 * otherwise be swept into the edit).
 */
export async function commitPersonEdit(options: {
  root: string;
  env: Readonly<Record<string, string | undefined>>;
  subject: Omit<PersonEditSubject, "runId">;
  changes: readonly string[];
  files: Readonly<Record<string, string>>;
  /** Why the edit no longer holds the repository's lock (src/adapters/lock.ts), asked right before the branch moves. */
  lockLost?: () => string | undefined;
  /** The MCP client the edit came through (`runner mcp`): named in a Runner-Client trailer. */
  client?: EditClient;
}): Promise<PersonEditCommit> {
  const { root, env } = options;
  const target = await editTarget(root);
  const dir = await gitDir(root);
  const state = repositoryState(env, dir);
  const git = GitRepo.forStep(root, dir, state.index);
  const identity = await personIdentity(git, env);
  const paths = Object.keys(options.files);
  for (const relative of paths) {
    const atHead = await git.showFile(target.head, relative);
    const onDisk = await readFile(projectPath(root, relative), "utf8").catch(() => undefined);
    if (atHead !== onDisk)
      throw new RefusalError(
        `${relative} has changes that are not committed; commit them (\`git commit\`) or undo them (\`git checkout -- ${relative}\`), then edit again — nothing was written.`,
      );
  }
  await ensureRunnerIndex(git, state, target.head);
  for (const [relative, text] of Object.entries(options.files)) await writeFileAtomic(projectPath(root, relative), text);
  const person = `${identity.name} <${identity.email}>`;
  const subject: PersonEditSubject = { ...options.subject, runId: target.runId };
  const message = formatPersonEditMessage(subject, person, options.changes, { client: options.client });
  await git.raw(["add", "--", ...paths]);
  const sha = await git.commitTree(await git.writeTree(), target.head, message, identity);
  const lost = options.lockLost?.();
  if (lost !== undefined) throw new RefusalError(`The edit no longer holds the repository's lock (${lost}); nothing was committed — try again.`);
  await git.updateRef(`refs/heads/${target.branch}`, sha, target.head);
  await publishRunnerIndex(state, dir, sha);
  return { sha, subject: message.slice(0, message.indexOf("\n")), runId: target.runId, person };
}
