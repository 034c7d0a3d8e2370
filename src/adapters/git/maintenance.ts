// `.git` kept packed as a run grows (issue 33). The runner commits by plumbing (commit-tree,
// update-ref), so git's own automatic maintenance — which `git commit` starts — never runs: a night
// of 1,000 iterations left 6,000 loose objects. Between iterations of `runner run` (never while an
// agent or a guard runs, never inside an iteration's timing) and when the run ends, the runner
// packs what is loose itself (GitRepo.packLooseObjects): `git repack` alone, not `gc` — no reflog
// expiry, no prune, no worktree prune — with its settings fixed and git's hooks off, so nothing a
// repository's config names runs or decides. The packing is the runner's own process (not in an
// agent's containment), and dies with the runner (setpriv --pdeathsig), so it never runs on beside
// the next run's agent. A packing that fails changes nothing and stops nothing.
import { GitRepo } from "./git.js";
import { systemTool } from "../process/program-path.js";

/** Iterations between two packings: at about six objects an iteration, a pack of a few hundred. */
export const PACK_EVERY = 32;

let setpriv: string | undefined | null = null;

/**
 * Packs the repository's loose objects; `started` is called once git runs (the test hook that kills
 * the runner there). Returns git's complaint when it failed, undefined when it packed.
 */
export async function packRepository(root: string, started?: () => void): Promise<string | undefined> {
  if (setpriv === null) setpriv = systemTool("setpriv");
  const through = setpriv === undefined ? [] : [setpriv, "--pdeathsig", "KILL", "--"];
  try {
    await new GitRepo(root).packLooseObjects(through, started);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}
