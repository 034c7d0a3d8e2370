// What the agent did to git itself, as the runner found (and undid) it right after the agent ran:
// facts for classify, the change policy, the commit's Runner-Git trailer and the logs.

/** What the agent did to git itself, found (and undone) right after it ran. */
export interface AgentGitFacts {
  /** Control files the agent changed (put back as they were). */
  controlChanged: string[];
  /** Operations it left in progress (MERGE_HEAD, a rebase, …), removed. */
  operations: string[];
  /** Where it left HEAD, when not on the run branch at the starting commit (HEAD is put back). */
  headMoved?: { branch: string | undefined; sha: string | undefined };
  /** Commits it made itself (reachable from where it left HEAD or the run branch), oldest first. */
  agentCommits: { sha: string; subject: string }[];
  /** Files an ignore rule the iteration changed hides from the commit. */
  hiddenByIgnoreRules: string[];
  /** Git repositories without a commit the agent created inside the work tree (they cannot be committed). */
  nestedRepositories: string[];
  /** The guard's program, when the file changed since the iteration began. */
  guardProgramChanged?: string;
  /** The runner's own files under .runner/ the agent changed or replaced (`.runner/.gitignore`, a link in place of `.runner/context`), put back. */
  runnerFilesRestored?: string[];
  /** A `.git/index.lock` the agent left (its processes ended, so nobody holds it), removed. */
  indexLockRemoved?: boolean;
  /** Script entries of the guard's definition it changed ("package.json scripts.test"), taken back. */
  scriptEntriesChanged?: string[];
}
