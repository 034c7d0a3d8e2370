// The object store (src/adapters/git/object-store.ts) reads every object of a real repository as
// `git cat-file` does: loose, packed whole, packed as deltas (git's own, after `git gc` and after a
// `git repack` of a few versions), and a linked worktree's through its common folder; and says
// "not here" for what it does not read, so the caller asks git.
import { writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ObjectStore } from "../../src/adapters/git/object-store.js";
import { git, gitBytes, tempDir } from "../helpers/sandbox.js";

/** A repository where one large JSON file changed a little in every commit (as tree.json does). */
async function repoWithVersions(commits: number): Promise<string> {
  const dir = tempDir("runner-objects-");
  await git(dir, ["init", "-q", "-b", "main"]);
  const items = Array.from({ length: 400 }, (_, i) => ({ id: `n${i}`, title: `Node ${i} ${"é".repeat(i % 5)}`, passes: false }));
  for (let c = 0; c < commits; c++) {
    items[c % items.length]!.passes = true;
    writeFileSync(path.join(dir, "tree.json"), `${JSON.stringify({ items }, null, 2)}\n`);
    writeFileSync(path.join(dir, `file${c % 3}.txt`), `commit ${c}\n`);
    await git(dir, ["add", "-A"]);
    await git(dir, ["commit", "-q", "-m", `commit ${c}`]);
  }
  return dir;
}

/** Every object id of the repository, with git's own bytes for it. */
async function everyObject(dir: string): Promise<{ id: string; type: string }[]> {
  const out = await git(dir, ["cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objecttype)"]);
  return out
    .trim()
    .split("\n")
    .map((line) => {
      const [id = "", type = ""] = line.split(" ");
      return { id, type };
    });
}

async function expectSameAsGit(dir: string, gitDir = path.join(dir, ".git")): Promise<number> {
  const store = ObjectStore.open(gitDir);
  expect(store).toBeDefined();
  const objects = await everyObject(dir);
  for (const { id, type } of objects) {
    const read = store!.read(id);
    expect(read?.type, id).toBe(type);
    expect(read!.bytes.copy().equals(await gitBytes(dir, ["cat-file", type, id])), id).toBe(true);
  }
  store!.close();
  return objects.length;
}

describe("the object store reads what git reads", () => {
  it("loose objects", async () => {
    const dir = await repoWithVersions(6);
    expect(await expectSameAsGit(dir)).toBeGreaterThan(20);
  });

  it("objects packed by git gc, versions stored as deltas of each other", async () => {
    const dir = await repoWithVersions(40);
    await git(dir, ["gc", "-q", "--aggressive"]);
    expect(await git(dir, ["count-objects", "-v"])).toMatch(/count: 0\n[^]*packs: 1\n/);
    await expectSameAsGit(dir);
  });

  it("a file's versions read one after another, oldest first and newest first, as the audit reads them", async () => {
    const dir = await repoWithVersions(30);
    await git(dir, ["gc", "-q"]);
    const blobs = (await git(dir, ["log", "--reverse", "--format=", "--raw", "--no-abbrev", "--", "tree.json"]))
      .trim()
      .split("\n")
      .map((line) => line.split(" ")[3]!);
    expect(blobs.length).toBe(30);
    for (const order of [blobs, [...blobs].reverse(), [...blobs, ...blobs]]) {
      const store = ObjectStore.open(path.join(dir, ".git"))!;
      for (const id of order) {
        const bytes = store.read(id)!.bytes.copy();
        expect(bytes.equals(await gitBytes(dir, ["cat-file", "blob", id])), id).toBe(true);
      }
      store.close();
    }
  });

  it("several packs and loose objects side by side, and a linked worktree's objects in its common folder", async () => {
    const dir = await repoWithVersions(10);
    await git(dir, ["repack", "-q", "-d"]);
    for (let c = 0; c < 5; c++) {
      writeFileSync(path.join(dir, "tree.json"), `{"more": ${c}}\n`);
      await git(dir, ["commit", "-q", "-am", `more ${c}`]);
    }
    await git(dir, ["repack", "-q", "-d"]);
    writeFileSync(path.join(dir, "tree.json"), `{"loose": true}\n`);
    await git(dir, ["commit", "-q", "-am", "loose"]);
    await expectSameAsGit(dir);
    const linked = path.join(tempDir("runner-objects-wt-"), "wt");
    await git(dir, ["worktree", "add", "-q", "-b", "side", linked]);
    const linkedGitDir = path.resolve(linked, (await git(linked, ["rev-parse", "--git-dir"])).trim());
    await expectSameAsGit(linked, linkedGitDir);
  });

  it("says 'not here' for an unknown id, a malformed id and a repository with alternates", async () => {
    const dir = await repoWithVersions(2);
    const store = ObjectStore.open(path.join(dir, ".git"))!;
    expect(store.read("0".repeat(40))).toBeUndefined();
    expect(store.read("not an id")).toBeUndefined();
    store.close();
    writeFileSync(path.join(dir, ".git", "objects", "info", "alternates"), "/elsewhere\n");
    expect(ObjectStore.open(path.join(dir, ".git"))).toBeUndefined();
  });
});
