// A person's edit, committed (CONTRACT §7, "Steering a run"): the runner's files it changes written
// atomically, then committed with git's plumbing through the runner's own index — as an iteration
// is (src/step/actors/commit-iteration.ts) — on the current branch, with the person's git identity,
// the edit's own subject and trailers, the branch's tip as its only parent. Only the files of the
// edit are staged; anything else in the work tree is left as it was.
import { formatPersonEditMessage, type EditClient, type PersonEditSubject } from "../../core/commit/commit-message.js";
import { RefusalError } from "../../errors.js";
import type { CommitIdentity, GitRepo } from "./git.js";
import { checkedOutTarget, commitFiles } from "./runner-commit.js";

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

/** Writes `files` and commits exactly them as a person's edit, in the person's name, with its subject and trailers. */
export async function commitPersonEdit(options: {
  root: string;
  env: Readonly<Record<string, string | undefined>>;
  subject: Omit<PersonEditSubject, "runId">;
  changes: readonly string[];
  files: Readonly<Record<string, string>>;
  /** Why the edit no longer holds the repository's lock (src/adapters/state/lock.ts), asked right before the branch moves. */
  lockLost?: () => string | undefined;
  /** The MCP client the edit came through (`runner mcp`): named in a Runner-Client trailer. */
  client?: EditClient;
}): Promise<PersonEditCommit> {
  const { root, env } = options;
  const target = await checkedOutTarget(root, env);
  const identity = await personIdentity(target.git, env);
  const person = `${identity.name} <${identity.email}>`;
  const subject: PersonEditSubject = { ...options.subject, runId: target.runId };
  const message = formatPersonEditMessage(subject, person, options.changes, { client: options.client });
  const sha = await commitFiles(target, root, options.files, message, identity, {
    lockLost: options.lockLost,
    lost: (reason) => new RefusalError(`The edit no longer holds the repository's lock (${reason}); nothing was committed — try again.`),
  });
  return { sha, subject: message.slice(0, message.indexOf("\n")), runId: target.runId, person };
}
