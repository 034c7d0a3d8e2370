// The context writer (seed 000 "Directory structure split"): `.runner/context/` is cleared and
// written anew by the runner every iteration, for the agent to read. Secrets are redacted.
import { mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { LAYOUT } from "../../core/base/layout.js";
import { redactSecrets } from "../../core/base/text-limits.js";
import { projectPath } from "../files/project-files.js";

/** Empties the context folder (whatever an earlier iteration or the agent left there). */
export async function clearContext(root: string): Promise<void> {
  const dir = projectPath(root, LAYOUT.context);
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
}

/** Writes the context files (name → text) into the cleared folder. */
export async function writeContext(root: string, files: Record<string, string>, secrets: readonly string[]): Promise<void> {
  const dir = projectPath(root, LAYOUT.context);
  await Promise.all(Object.entries(files).map(([name, text]) => writeFile(path.join(dir, name), redactSecrets(text, secrets))));
}
