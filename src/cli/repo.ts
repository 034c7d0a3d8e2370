// Finding the repository the runner works on: the nearest folder, from the start folder up, that
// holds `.runner/`.
import { existsSync, statSync } from "node:fs";
import path from "node:path";
import { RefusalError } from "../errors.js";
import { RUNNER_DIR } from "../core/layout.js";

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
