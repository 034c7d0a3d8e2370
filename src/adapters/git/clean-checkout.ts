// The guard run in a clean checkout of a commit: a temporary git worktree holding exactly what was
// committed (nothing the agent left in the work tree that git ignores), the guard's setup command
// first (e.g. `npm ci`), then the guard. `runner audit --replay` uses it on every commit that
// passed a leaf; `[guard] isolation = "worktree"` on every guard run of a step.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { FALLBACK_IDENTITY, GitRepo } from "./git.js";
import { runProcess, type ProcessResult } from "../process/process-runner.js";

export interface CleanRun {
  /** The guard's result; undefined when the setup failed (then `setup` says how). */
  guard: ProcessResult | undefined;
  setup: ProcessResult | undefined;
}

export interface CleanRunRequest {
  /** The commit to check out (detached). */
  commit: string;
  guard: readonly string[];
  setup: readonly string[] | undefined;
  env: Record<string, string>;
  deadlineMs: number;
  /** Log files for the setup and the guard. */
  setupLog: string;
  guardLog: string;
  /** Where the logs are in the agent's reach: their folders are made real from here down (ProcessRequest.logTop). */
  logTop?: string;
  capBytes: number;
  secrets: readonly string[];
  abortSignal?: AbortSignal;
  onOutput?: (chunk: string) => void;
}

export async function runInCleanCheckout(repository: GitRepo, request: CleanRunRequest): Promise<CleanRun> {
  // The worktree gets git's own index and work tree, never the step's (GIT_INDEX_FILE, GIT_WORK_TREE).
  const git = new GitRepo(repository.root);
  const dir = await mkdtemp(path.join(tmpdir(), "runner-checkout-"));
  const worktree = path.join(dir, "work");
  try {
    await git.raw(["worktree", "add", "--quiet", "--force", "--detach", worktree, request.commit]);
    const run = (argv: readonly string[], logFile: string) =>
      runProcess({
        argv: [...argv],
        cwd: worktree,
        env: request.env,
        deadlineMs: request.deadlineMs,
        logFile,
        logTop: request.logTop,
        capBytes: request.capBytes,
        secrets: request.secrets,
        abortSignal: request.abortSignal,
        onOutput: request.onOutput,
      });
    const setup = request.setup ? await run(request.setup, request.setupLog) : undefined;
    if (setup && (setup.exitCode !== 0 || setup.timedOut || setup.aborted || setup.spawnError)) return { guard: undefined, setup };
    return { setup, guard: await run(request.guard, request.guardLog) };
  } finally {
    await git.raw(["worktree", "remove", "--force", worktree]).catch(() => "");
    await rm(dir, { recursive: true, force: true });
    await git.raw(["worktree", "prune"]).catch(() => "");
  }
}

/**
 * The candidate commit of an iteration: the work tree as the loop commit will hold it (staged in
 * the runner's own index), on top of `base`. Not on any branch; the loop commit made later holds
 * the same tree.
 */
export async function candidateCommit(git: GitRepo, base: string): Promise<string> {
  await git.addAll();
  const tree = await git.writeTree();
  return git.commitTree(tree, base, "runner: the candidate an iteration's guard judges\n", FALLBACK_IDENTITY);
}

/** A clean run's outcome as one process result: the guard's, or the setup's when it failed. */
export function cleanRunResult(run: CleanRun): ProcessResult {
  return run.guard ?? run.setup!;
}
