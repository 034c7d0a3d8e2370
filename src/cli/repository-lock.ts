// Commands that change the repository (step, run) hold its lock for their whole duration.
import { refuseInsideAgentContainment } from "../adapters/process/agent-containment.js";
import { gitDir } from "../adapters/git/git.js";
import { RepositoryLock } from "../adapters/state/lock.js";
import { RefusalError } from "../errors.js";
import { printError } from "./output.js";

export async function withRepositoryLock<T>(root: string, command: string, work: (lock: RepositoryLock) => Promise<T>): Promise<T> {
  const lock = new RepositoryLock(await gitDir(root), command);
  await lock.acquire(Date.now);
  try {
    return await work(lock);
  } finally {
    lock.unlock();
  }
}

/** How a person's edit meets a run at work. */
export interface EditWait {
  /** Wait for the run to hand the lock over (`--wait`), instead of being refused. */
  wait: boolean;
  /** How the refusal names the way to wait: the CLI's `pass --wait`, an MCP tool's `call again with wait: true`. */
  waitHint?: string;
  /** Ends a wait that nobody awaits any more (an MCP client cancelled its request): nothing is written. */
  signal?: AbortSignal;
}

/**
 * A person's edit under the lock. While `runner run` works: refused in one sentence, or with `wait`
 * queued — the run hands the lock over between two iterations, and picks the edit up on its next.
 */
export async function withEditLock<T>(root: string, command: string, how: EditWait, work: (lock: RepositoryLock) => Promise<T>): Promise<T> {
  refuseInsideAgentContainment(command);
  const { wait, signal } = how;
  const lock = new RepositoryLock(await gitDir(root), command);
  try {
    // (the line saying it waits goes to stderr: a terminal's, or an MCP client's log of the server)
    if (wait) await lock.acquireWaiting(Date.now, 24 * 3_600_000, printError, undefined, signal);
    else await lock.acquire(Date.now);
  } catch (error) {
    if (error instanceof RefusalError && !wait)
      throw new RefusalError(
        `${error.message.replace(/; wait for it.*$/, "")}; ${how.waitHint ?? "pass --wait"} to make the edit between two of its iterations, or try again when it has stopped.`,
      );
    if (signal?.aborted) throw new RefusalError(`\`${command}\` was cancelled while it waited for the run; nothing was written.`);
    throw error;
  }
  try {
    return await work(lock);
  } finally {
    lock.unlock();
    lock.clearWaiting();
  }
}
