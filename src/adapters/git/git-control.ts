// The files in the git folder that decide what git does and that an agent could change: the
// repository's config (filters, hooks path, excludes, identity), info/exclude and info/attributes,
// and the hooks folder. A step keeps them as they were before the agent (in memory and in its
// journal), and puts them back before its own git calls read them: the agent's changes never
// steer the runner's git, nor the user's git after the run.
// In a linked worktree (`runner start --worktree`) git reads these from the repository's common git
// folder (its `commondir`), shared by every worktree, and the worktree's own `config.worktree` from
// the worktree's folder: both are kept and put back.
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { ControlSnapshot } from "../../core/step/step-facts.js";

const FILES = ["config", "info/exclude", "info/attributes", "info/sparse-checkout"];
const HOOKS = "hooks";
/** A linked worktree's own config (extensions.worktreeConfig), in the worktree's git folder. */
const WORKTREE_CONFIG = "config.worktree";

/** The folder git reads the shared control files from: the common git folder of a linked worktree, else `gitDir` itself. */
export function commonDir(gitDir: string): string {
  try {
    const pointer = readFileSync(path.join(gitDir, "commondir"), "utf8").trim();
    return pointer === "" ? gitDir : path.resolve(gitDir, pointer);
  } catch {
    return gitDir;
  }
}

/** Where a control file named `name` is, for the git folder `gitDir`. */
function controlFile(gitDir: string, common: string, name: string): string {
  return name === WORKTREE_CONFIG ? path.join(gitDir, name) : path.join(common, name);
}

function fileNames(gitDir: string, common: string): string[] {
  return common === gitDir ? [...FILES] : [...FILES, WORKTREE_CONFIG];
}

export function snapshotControlFiles(gitDir: string): ControlSnapshot {
  const snapshot: ControlSnapshot = {};
  const common = commonDir(gitDir);
  const names = fileNames(gitDir, common);
  const hooksDir = path.join(common, HOOKS);
  if (isDirectory(hooksDir)) for (const name of readdirSync(hooksDir).sort()) names.push(`${HOOKS}/${name}`);
  for (const name of names) snapshot[name] = readControl(controlFile(gitDir, common, name));
  return snapshot;
}

/**
 * Puts every control file back as the snapshot has it (a hook the agent added is removed); returns
 * the names that differed, sorted.
 */
export function restoreControlFiles(gitDir: string, snapshot: ControlSnapshot): string[] {
  const changed: string[] = [];
  const common = commonDir(gitDir);
  const names = new Set([...Object.keys(snapshot), ...fileNames(gitDir, common)]);
  const hooksDir = path.join(common, HOOKS);
  if (isDirectory(hooksDir)) for (const name of readdirSync(hooksDir)) names.add(`${HOOKS}/${name}`);
  else if (existsSync(hooksDir)) names.add(HOOKS);
  for (const name of [...names].sort()) {
    const file = controlFile(gitDir, common, name);
    const before = snapshot[name] ?? null;
    const now = name === HOOKS ? { text: "(not a folder)", mode: 0 } : readControl(file);
    if (same(before, now)) continue;
    changed.push(name);
    // Something that was not a plain file before (a user's symbolic link) is reported, not rewritten.
    if (before?.mode === 0) continue;
    rmSync(file, { recursive: true, force: true });
    if (before) {
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, before.text);
      chmodSync(file, before.mode);
    }
  }
  return changed;
}

function readControl(file: string): { text: string; mode: number } | null {
  try {
    const info = lstatSync(file);
    // Anything but a plain file (a folder, a symbolic link) is kept as a marker that it changed.
    if (!info.isFile()) return { text: `(not a plain file: ${info.isSymbolicLink() ? "a symbolic link" : "a folder"})`, mode: 0 };
    return { text: readFileSync(file, "utf8"), mode: info.mode & 0o777 };
  } catch {
    return null;
  }
}

function same(a: { text: string; mode: number } | null, b: { text: string; mode: number } | null): boolean {
  return a === null || b === null ? a === b : a.text === b.text && a.mode === b.mode;
}

function isDirectory(dir: string): boolean {
  try {
    return lstatSync(dir).isDirectory();
  } catch {
    return false;
  }
}
