// Finding the repository the runner works on: the nearest folder, from the start folder up, that
// holds `.runner/`.
import { existsSync, statSync } from "node:fs";
import path from "node:path";
import { RefusalError, UsageError } from "../errors.js";
import { RUNNER_DIR } from "../core/base/layout.js";

/** Refuses a -C folder that does not exist, or is a file, before any command looks for its repository there. */
export function checkWorkFolder(dir: string): void {
  const full = path.resolve(dir);
  let isFolder: boolean;
  try {
    isFolder = statSync(full).isDirectory();
  } catch {
    throw new UsageError(`The folder ${full} (-C) does not exist; give -C the path of your repository.`);
  }
  if (!isFolder) throw new UsageError(`-C ${full} is a file, not a folder; give -C the path of your repository.`);
}

export function findProjectRoot(start: string): string {
  let dir = path.resolve(start);
  for (;;) {
    const candidate = path.join(dir, RUNNER_DIR);
    if (existsSync(candidate) && statSync(candidate).isDirectory()) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) {
      throw new RefusalError(`No ${RUNNER_DIR}/ folder in ${path.resolve(start)} or above it; run \`runner init\` in your repository first.`);
    }
    dir = parent;
  }
}

/** Repository-relative path to an absolute one. */
export function inProject(root: string, relative: string): string {
  return path.join(root, ...relative.split("/"));
}
