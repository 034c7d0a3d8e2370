// `runner step` starts the safety check's `git status` and the agent's contained start as soon as it
// holds the repository's lock, so that git reads the work tree while the step's code loads. Only when no journal is there: an
// interrupted iteration's agent may have changed git's control files, which are put back before
// any git call (src/step/actors/inspect-repository.ts).
import { existsSync } from "node:fs";
import { gitDir, GitRepo, type RepoStatus } from "../adapters/git/git.js";
import { prepareAheadStart } from "../adapters/process/process-runner.js";
import { repositoryState } from "../adapters/state/runner-state.js";

/** The status the safety check would take first, started now; undefined when the step must take it itself. */
export async function startEarlyStatus(root: string, env: Record<string, string>): Promise<{ status: Promise<RepoStatus> } | undefined> {
  const dir = await gitDir(root);
  const state = repositoryState(env, dir);
  if (existsSync(state.journal)) return undefined;
  // (no journal: no process of a killed runner's agent or guard can be left, so the agent's
  // contained start can begin too — its wrapper moves into its cgroup while the code loads)
  prepareAheadStart();
  const status = GitRepo.forStep(root, dir, state.index).status();
  status.catch(() => undefined); // (awaited by the safety check, which reports a failure)
  return { status };
}
