// The runner's own commit object and branch move (src/adapters/git/commit-writer.ts) against git
// itself: the same commit id as `git commit-tree` for the same tree, parent, message, identity and
// time; objects git reads and fsck accepts; the move by git's lock-file protocol, refused where the
// branch moved or another process holds the lock, left to git where the ref is not a loose file.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { commitText, moveBranch, writeCommitObject, writesCommitsItself, type CommitTime } from "../../src/adapters/git/commit-writer.js";
import { createHash } from "node:crypto";
import { deflateSync } from "node:zlib";
import { mkdirSync } from "node:fs";
import { git, gitBytes, tempDir, testEnv } from "../helpers/sandbox.js";

async function repository(): Promise<{ dir: string; gitDir: string; tree: string; parent: string }> {
  const dir = tempDir();
  await git(dir, ["init", "-q", "-b", "main"]);
  writeFileSync(path.join(dir, "a.txt"), "a\n");
  await git(dir, ["add", "-A"]);
  await git(dir, ["commit", "-q", "-m", "first"]);
  await git(dir, ["checkout", "-q", "-b", "runner/x"]);
  return {
    dir,
    gitDir: path.join(dir, ".git"),
    tree: (await git(dir, ["write-tree"])).trim(),
    parent: (await git(dir, ["rev-parse", "HEAD"])).trim(),
  };
}

const zone = (minutes: number) =>
  `${minutes < 0 ? "-" : "+"}${String(Math.floor(Math.abs(minutes) / 60)).padStart(2, "0")}${String(Math.abs(minutes) % 60).padStart(2, "0")}`;

/** `git commit-tree` of the same commit, the time given as git reads it from the environment. */
async function gitCommitTree(
  dir: string,
  tree: string,
  parent: string,
  message: string,
  name: string,
  email: string,
  when: CommitTime,
): Promise<string> {
  const date = `@${when.seconds} ${zone(when.offsetMinutes)}`;
  const env = testEnv({
    GIT_AUTHOR_NAME: name,
    GIT_AUTHOR_EMAIL: email,
    GIT_COMMITTER_NAME: name,
    GIT_COMMITTER_EMAIL: email,
    GIT_AUTHOR_DATE: date,
    GIT_COMMITTER_DATE: date,
  });
  const { spawnSync } = await import("node:child_process");
  const result = spawnSync("git", ["commit-tree", tree, "-p", parent, "-F", "-"], { cwd: dir, env, input: message, encoding: "utf8" });
  if (result.status !== 0) throw new Error(result.stderr);
  return result.stdout.trim();
}

const wordChar = fc.constantFrom(..."abcXYZ019 -_+é✓\u00e9");
const plainText = fc
  .string({ unit: wordChar, minLength: 1, maxLength: 12 })
  .map((text) => text.trim())
  .filter((text) => text !== "" && !/^[-_+ ]|[-_+ ]$/.test(text));

describe("the runner's commit object", () => {
  it("has the id `git commit-tree` gives the same commit, and git reads and checks it", async () => {
    const { dir, gitDir, tree, parent } = await repository();
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: fc.constantFrom(..."ab \n\t:#é✓\u0000".replace("\u0000", "")), maxLength: 40 }),
        plainText,
        plainText.map((text) => `${text.replaceAll(" ", "")}@example.com`),
        fc.integer({ min: 0, max: 2 ** 32 }),
        fc.integer({ min: -12 * 60, max: 14 * 60 }).map((minutes) => minutes - (minutes % 15)),
        async (message, name, email, seconds, offsetMinutes) => {
          const when = { seconds, offsetMinutes };
          const ours = writeCommitObject(gitDir, tree, parent, message, { name, email }, when);
          expect(ours).toBe(await gitCommitTree(dir, tree, parent, message, name, email, when));
        },
      ),
      { numRuns: 25 },
    );
    expect(await git(dir, ["fsck", "--no-progress", "--strict", "--no-dangling"])).toBe("");
  });

  it("replaces an object file planted at its id with one that holds something else", async () => {
    const { dir, gitDir, tree, parent } = await repository();
    const identity = { name: "Runner Test", email: "runner@example.com" };
    const when = { seconds: 1_800_000_000, offsetMinutes: 60 };
    const text = commitText(tree, parent, "iteration 1\n", identity, when);
    const id = createHash("sha1")
      .update(`commit ${Buffer.byteLength(text)}\0${text}`)
      .digest("hex");
    const planted = path.join(gitDir, "objects", id.slice(0, 2), id.slice(2));
    mkdirSync(path.dirname(planted), { recursive: true });
    const forged = commitText(tree, parent, "iteration 1: passed by itself\n", identity, when);
    writeFileSync(planted, deflateSync(`commit ${Buffer.byteLength(forged)}\0${forged}`));
    expect(writeCommitObject(gitDir, tree, parent, "iteration 1\n", identity, when)).toBe(id);
    expect((await gitBytes(dir, ["cat-file", "commit", id])).toString("utf8")).toBe(text);
  });

  it("is left to git where git would write it differently", async () => {
    const { gitDir } = await repository();
    const plain = { name: "Runner Test", email: "runner@example.com" };
    expect(writesCommitsItself(gitDir, plain, {})).toBe(true);
    expect(writesCommitsItself(gitDir, { name: "Runner Test.", email: "runner@example.com" }, {})).toBe(false);
    expect(writesCommitsItself(gitDir, { name: "Runner <Test>", email: "runner@example.com" }, {})).toBe(false);
    expect(writesCommitsItself(gitDir, { name: " Runner", email: "runner@example.com" }, {})).toBe(false);
    expect(writesCommitsItself(gitDir, plain, { GIT_COMMITTER_DATE: "@0 +0000" })).toBe(false);
    writeFileSync(path.join(gitDir, "config"), `${readFileSync(path.join(gitDir, "config"), "utf8")}[core]\n\tsharedRepository = group\n`);
    expect(writesCommitsItself(gitDir, plain, {})).toBe(false);
  });
});

describe("the runner's move of a branch", () => {
  const identity = { name: "Runner Test", email: "runner@example.com" };
  const when = { seconds: 1_800_000_000, offsetMinutes: -90 };

  it("moves the branch from its parent, with a line in the branch's and HEAD's reflogs as git writes them", async () => {
    const { dir, gitDir, tree, parent } = await repository();
    const commit = writeCommitObject(gitDir, tree, parent, "iteration 1\n", identity, when)!;
    expect(moveBranch(gitDir, "runner/x", commit, parent, identity, when)).toBe(true);
    expect((await git(dir, ["rev-parse", "runner/x"])).trim()).toBe(commit);
    expect(existsSync(path.join(gitDir, "refs", "heads", "runner", "x.lock"))).toBe(false);
    const line = `${parent} ${commit} Runner Test <runner@example.com> 1800000000 -0130\trunner\n`;
    expect(readFileSync(path.join(gitDir, "logs", "refs", "heads", "runner", "x"), "utf8").endsWith(line)).toBe(true);
    expect(readFileSync(path.join(gitDir, "logs", "HEAD"), "utf8").endsWith(line)).toBe(true);
    expect((await git(dir, ["reflog", "-1", "--format=%H %gs", "runner/x"])).trim()).toBe(`${commit} runner`);
    expect(await git(dir, ["fsck", "--no-progress", "--strict", "--no-dangling"])).toBe("");
  });

  it("moves nothing where the branch no longer points at the parent, or another process holds its lock", async () => {
    const { dir, gitDir, tree, parent } = await repository();
    const commit = writeCommitObject(gitDir, tree, parent, "iteration 1\n", identity, when)!;
    writeFileSync(path.join(dir, "b.txt"), "b\n");
    await git(dir, ["add", "-A"]);
    await git(dir, ["commit", "-q", "-m", "a person's commit"]);
    const moved = (await git(dir, ["rev-parse", "HEAD"])).trim();
    expect(() => moveBranch(gitDir, "runner/x", commit, parent, identity, when)).toThrow(/expected/);
    expect((await git(dir, ["rev-parse", "runner/x"])).trim()).toBe(moved);
    expect(existsSync(path.join(gitDir, "refs", "heads", "runner", "x.lock"))).toBe(false);
    const lock = path.join(gitDir, "refs", "heads", "runner", "x.lock");
    writeFileSync(lock, "held\n");
    // (a runner killed while it held the lock leaves it, as git does: the sentence names the way out)
    expect(() => moveBranch(gitDir, "runner/x", commit, moved, identity, when)).toThrow(
      /x\.lock exists \(another git process is updating it, or one was stopped while it did: then remove that file\)/,
    );
    expect(readFileSync(lock, "utf8")).toBe("held\n"); // someone else's lock is left alone
    expect((await git(dir, ["rev-parse", "runner/x"])).trim()).toBe(moved);
  });

  it("waits on no FIFO the agent planted as a reflog or at the commit's object file", async () => {
    const { dir, gitDir, tree, parent } = await repository();
    const reflog = path.join(gitDir, "logs", "refs", "heads", "runner", "x");
    rmSync(reflog);
    execFileSync("mkfifo", [reflog]);
    const text = commitText(tree, parent, "iteration 1\n", identity, when);
    const id = createHash("sha1")
      .update(`commit ${Buffer.byteLength(text)}\0${text}`)
      .digest("hex");
    mkdirSync(path.join(gitDir, "objects", id.slice(0, 2)), { recursive: true });
    execFileSync("mkfifo", [path.join(gitDir, "objects", id.slice(0, 2), id.slice(2))]);
    expect(writeCommitObject(gitDir, tree, parent, "iteration 1\n", identity, when)).toBe(id);
    expect(moveBranch(gitDir, "runner/x", id, parent, identity, when)).toBe(true);
    expect((await git(dir, ["rev-parse", "runner/x"])).trim()).toBe(id);
    expect((await gitBytes(dir, ["cat-file", "commit", id])).toString("utf8")).toBe(text);
  });

  it("is left to git where the branch is not a loose ref", async () => {
    const { dir, gitDir, tree, parent } = await repository();
    await git(dir, ["pack-refs", "--all"]);
    const commit = writeCommitObject(gitDir, tree, parent, "iteration 1\n", identity, when)!;
    expect(moveBranch(gitDir, "runner/x", commit, parent, identity, when)).toBeUndefined();
    expect((await git(dir, ["rev-parse", "runner/x"])).trim()).toBe(parent);
  });
});
