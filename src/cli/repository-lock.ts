// Commands that change the repository (step, run) hold its lock for their whole duration.
import { refuseInsideAgentContainment } from "../adapters/agent-containment.js";
import { gitDir } from "../adapters/git.js";
import { RepositoryLock } from "../adapters/lock.js";
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

/**
 * A person's edit under the lock. While `runner run` works: refused in one sentence, or with `wait`
 * queued — the run hands the lock over between two iterations, and picks the edit up on its next.
 */
export async function withEditLock<T>(root: string, command: string, wait: boolean, work: (lock: RepositoryLock) => Promise<T>): Promise<T> {
  refuseInsideAgentContainment(command);
  const lock = new RepositoryLock(await gitDir(root), command);
  try {
    if (wait) await lock.acquireWaiting(Date.now, 24 * 3_600_000, printError);
    else await lock.acquire(Date.now);
  } catch (error) {
    if (error instanceof RefusalError && !wait)
      throw new RefusalError(
        `${error.message.replace(/; wait for it.*$/, "")}; pass --wait to make the edit between two of its iterations, or try again when it has stopped.`,
      );
    throw error;
  }
  try {
    return await work(lock);
  } finally {
    lock.unlock();
    lock.clearWaiting();
  }
}
