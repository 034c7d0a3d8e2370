// Files an ignore rule changed in this iteration hides from the commit: ignored now, but not by the
// rules of the commit the iteration started from. The starting commit's .gitignore files are put in
// an empty folder and git is asked, with that folder as its work tree, which of today's ignored
// paths they ignore (info/exclude and the config are the starting ones already: the runner put
// them back).
import { mkdtemp, mkdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { GitRepo } from "./git.js";

export function isIgnoreFile(relative: string): boolean {
  return relative === ".gitignore" || relative.endsWith("/.gitignore");
}

export async function hiddenByChangedIgnoreRules(git: GitRepo, gitDir: string, start: string): Promise<string[]> {
  const ignoredNow = await git.ignoredEntries();
  if (ignoredNow.length === 0) return [];
  const dir = await mkdtemp(path.join(tmpdir(), "runner-ignore-"));
  try {
    const files = (await git.raw(["ls-tree", "-r", "-z", "--name-only", start])).split("\0").filter((name) => name !== "" && isIgnoreFile(name));
    for (const name of files) {
      const target = path.join(dir, ...name.split("/"));
      await mkdir(path.dirname(target), { recursive: true });
      await writeFile(target, (await git.showFile(start, name)) ?? "");
    }
    const before = new GitRepo(dir, { gitDir, indexFile: path.join(dir, ".no-index") });
    const stillIgnored = new Set(await before.ignored(ignoredNow));
    // Folders: git answers for the folder name without its slash.
    return ignoredNow.filter((entry) => !stillIgnored.has(entry) && !stillIgnored.has(entry.replace(/\/$/, "")));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
