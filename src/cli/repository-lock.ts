// Commands that change the repository (step, run) hold its lock for their whole duration.
import path from "node:path";
import { gitDir } from "../adapters/git.js";
import { RepositoryLock } from "../adapters/lock.js";
import { LOCK_NAME } from "../adapters/lock-holder.js";

export async function withRepositoryLock<T>(root: string, command: string, work: () => Promise<T>): Promise<T> {
  const lock = new RepositoryLock(path.join(await gitDir(root), LOCK_NAME), command);
  lock.acquire(Date.now);
  try {
    return await work();
  } finally {
    lock.unlock();
  }
}
