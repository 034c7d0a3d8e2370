// The runner's own state for a repository, kept outside it (the agent works inside the repository
// and may write anything there, .git included): the runner's index and the commit it mirrors, and
// the journal of an iteration in progress. Under $RUNNER_STATE_DIR, else $XDG_STATE_HOME/runner,
// else ~/.local/state/runner; one folder per repository, named by its git folder's real path.
import { createHash } from "node:crypto";
import { mkdirSync, realpathSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import path from "node:path";

export interface RepositoryStatePaths {
  dir: string;
  /** The runner's own git index (GIT_INDEX_FILE of a step's git calls). */
  index: string;
  /** The commit the index holds (written after each commit). */
  indexCommit: string;
  /** The journal of an iteration that has begun and is not committed yet. */
  journal: string;
}

export function runnerStateDir(env: Readonly<Record<string, string | undefined>>): string {
  if (env.RUNNER_STATE_DIR) return path.resolve(env.RUNNER_STATE_DIR);
  if (env.XDG_STATE_HOME) return path.join(env.XDG_STATE_HOME, "runner");
  const home = env.HOME ?? safeHomedir();
  return home ? path.join(home, ".local", "state", "runner") : path.join(tmpdir(), `runner-state-${process.getuid?.() ?? "user"}`);
}

function safeHomedir(): string | undefined {
  try {
    return homedir();
  } catch {
    return undefined;
  }
}

/** The state folder of the repository whose git folder is `gitDir` (created). */
export function repositoryState(env: Readonly<Record<string, string | undefined>>, gitDir: string): RepositoryStatePaths {
  let real = gitDir;
  try {
    real = realpathSync(gitDir);
  } catch {
    // a git folder that cannot be resolved keeps its given name
  }
  const dir = path.join(runnerStateDir(env), "repos", createHash("sha256").update(real).digest("hex").slice(0, 24));
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return { dir, index: path.join(dir, "index"), indexCommit: path.join(dir, "index.commit"), journal: path.join(dir, "journal.json") };
}
