// Git: one git process per call, run with node:child_process (see docs/decisions.md: simple-git
// waited 50 ms after every silent command and ran one process at a time). Reports facts (branch,
// changed paths, loop commits); core decides policy. The step counts its git processes
// (docs/performance.md).
import { spawn } from "node:child_process";
import { readFile, rm, stat } from "node:fs/promises";
import path from "node:path";
import { GitError, RefusalError } from "../errors.js";

export interface ChangedPath {
  /** Repository-relative path, as git prints it. */
  path: string;
  /** For a rename or copy, the path it came from. */
  from?: string;
  /** `?` untracked, `u` unmerged, else the two-letter XY status of porcelain v2. */
  status: string;
}

export interface RepoStatus {
  /** The checked-out branch; undefined when HEAD is detached. */
  branch: string | undefined;
  /** The HEAD commit; undefined when the branch has no commits yet. */
  head: string | undefined;
  changes: ChangedPath[];
}

export interface LoopCommit {
  sha: string;
  subject: string;
  body: string;
}

export const FALLBACK_IDENTITY = { name: "runner", email: "runner@localhost" } as const;


function asGitError(args: readonly string[], error: unknown): GitError {
  const detail = error instanceof Error ? error.message.trim().split("\n")[0] : String(error);
  return new GitError(`git ${args[0] ?? ""} failed: ${detail}`, { cause: error });
}

/** Parses `git status --porcelain=v2 --branch -z --untracked-files=all`. */
export function parsePorcelainV2(output: string): RepoStatus {
  const fields = output.split("\0");
  let branch: string | undefined;
  let head: string | undefined;
  const changes: ChangedPath[] = [];
  for (let i = 0; i < fields.length; i++) {
    const entry = fields[i]!;
    if (entry === "") continue;
    if (entry.startsWith("# branch.head ")) {
      const name = entry.slice("# branch.head ".length);
      branch = name === "(detached)" ? undefined : name;
    } else if (entry.startsWith("# branch.oid ")) {
      const oid = entry.slice("# branch.oid ".length);
      head = oid === "(initial)" ? undefined : oid;
    } else if (entry.startsWith("# ")) {
      continue;
    } else if (entry.startsWith("1 ")) {
      changes.push({ status: entry.slice(2, 4), path: afterFields(entry, 8) });
    } else if (entry.startsWith("2 ")) {
      changes.push({ status: entry.slice(2, 4), path: afterFields(entry, 9), from: fields[++i] });
    } else if (entry.startsWith("u ")) {
      changes.push({ status: "u", path: afterFields(entry, 10) });
    } else if (entry.startsWith("? ")) {
      changes.push({ status: "?", path: entry.slice(2) });
    }
  }
  return { branch, head, changes };
}

/** The rest of a line after `count` space-separated fields (a path may itself hold spaces). */
function afterFields(line: string, count: number): string {
  let at = 0;
  for (let n = 0; n < count; n++) at = line.indexOf(" ", at) + 1;
  return line.slice(at);
}

/** Every path a change touches (both sides of a rename), sorted, without repeats. */
export function changedPathList(changes: readonly ChangedPath[]): string[] {
  const paths = new Set<string>();
  for (const change of changes) {
    paths.add(change.path);
    if (change.from !== undefined) paths.add(change.from);
  }
  return [...paths].sort();
}

interface GitOutput {
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

/** Runs git in `cwd` with the runner's environment; resolves with whatever it printed. */
function runGit(cwd: string, args: readonly string[], input?: string): Promise<GitOutput> {
  return new Promise((resolve, reject) => {
    const child = spawn("git", args, { cwd, stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout?.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr?.on("data", (chunk: Buffer) => err.push(chunk));
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString("utf8") }));
    if (input !== undefined && child.stdin) {
      child.stdin.on("error", () => undefined);
      child.stdin.end(input);
    }
  });
}

export class GitRepo {
  constructor(readonly root: string) {}

  /** git's stdout; a non-zero exit is a GitError carrying git's first line of complaint. */
  async raw(args: string[]): Promise<string> {
    let result: GitOutput;
    try {
      result = await runGit(this.root, args);
    } catch (error) {
      throw asGitError(args, error);
    }
    if (result.code !== 0) throw asGitError(args, new Error(result.stderr.trim() || `exit code ${String(result.code)}`));
    return result.stdout.toString("utf8");
  }

  /** git's stdout when it exits 0, else undefined (for commands whose failure is an answer). */
  private async attempt(args: string[]): Promise<string | undefined> {
    const result = await runGit(this.root, args).catch(() => undefined);
    return result?.code === 0 ? result.stdout.toString("utf8") : undefined;
  }

  /** Branch, HEAD and every change (tracked and untracked, not ignored) in one git process. */
  async status(): Promise<RepoStatus> {
    return parsePorcelainV2(await this.raw(["status", "--porcelain=v2", "--branch", "-z", "--untracked-files=all"]));
  }

  /** This run's loop commits reachable from `tip` (default HEAD), newest first. */
  async loopCommits(subjectPattern: string, tip = "HEAD"): Promise<LoopCommit[]> {
    const out = await this.raw(["log", "-E", `--grep=${subjectPattern}`, "--format=%H%x1f%s%x1f%b%x1e", tip]);
    return out
      .split("\x1e")
      .map((record) => record.replace(/^\n/, ""))
      .filter((record) => record.length > 0)
      .map((record) => {
        const [sha = "", subject = "", body = ""] = record.split("\x1f");
        return { sha, subject, body: body.trimEnd() };
      });
  }

  /** A file's text at a revision, or undefined if it does not exist there. */
  async showFile(revision: string, path: string): Promise<string | undefined> {
    return this.attempt(["show", `${revision}:${path}`]);
  }

  /** The subset of `paths` that git ignores. */
  async ignored(paths: string[]): Promise<string[]> {
    const out = await this.attempt(["check-ignore", "--no-index", ...paths]); // exit 1: nothing ignored
    return (out ?? "").split("\n").filter((line) => line.length > 0);
  }

  /** user.name and user.email as configured, to decide on the fallback identity. */
  async identity(): Promise<{ name?: string; email?: string }> {
    const out = (await this.attempt(["config", "--get-regexp", "^user\\.(name|email)$"])) ?? ""; // exit 1: neither is set
    const found: { name?: string; email?: string } = {};
    for (const line of out.split("\n")) {
      const space = line.indexOf(" ");
      if (space < 0) continue;
      const key = line.slice(0, space);
      if (key === "user.name") found.name = line.slice(space + 1);
      if (key === "user.email") found.email = line.slice(space + 1);
    }
    return found;
  }

  async addAll(): Promise<void> {
    await this.raw(["add", "-A"]);
  }

  /** Commits whatever is staged (also nothing) with the repository's identity or the runner's fallback. */
  async commit(message: string, useFallbackIdentity: boolean): Promise<void> {
    const identity = useFallbackIdentity ? ["-c", `user.name=${FALLBACK_IDENTITY.name}`, "-c", `user.email=${FALLBACK_IDENTITY.email}`] : [];
    await this.raw([...identity, "commit", "--allow-empty", "--no-verify", "--no-gpg-sign", "-q", "-m", message]);
  }

  /**
   * The staged change against `base` as a patch (binary files included), `excludes` left out. Safe
   * to run while a commit of the same index is being made: it names its base explicitly.
   */
  async stagedPatch(base: string, excludes: readonly string[] = []): Promise<string> {
    return this.raw(["diff", "--cached", "--binary", "--no-color", "--no-ext-diff", base, "--", ".", ...excludes.map((p) => `:(exclude)${p}`)]);
  }

  /** HEAD's commit: read from the ref files where they are plain, else asked of git. */
  async headCommit(gitDirectory: string): Promise<string> {
    try {
      const head = (await readFile(path.join(gitDirectory, "HEAD"), "utf8")).trim();
      const ref = /^ref: (refs\/heads\/[^\s]+)$/.exec(head)?.[1];
      const sha = ref ? (await readFile(path.join(gitDirectory, ref), "utf8")).trim() : head;
      if (/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(sha)) return sha;
    } catch {
      // packed or reftable refs: ask git
    }
    return (await this.raw(["rev-parse", "HEAD"])).trim();
  }

  /** Commits after `base` on the first-parent line to `tip` (default HEAD), oldest first, with the paths each changed. */
  async commitsSince(base: string, tip = "HEAD"): Promise<{ sha: string; subject: string; body: string; changedPaths: string[] }[]> {
    const out = await this.raw([
      "log", "--first-parent", "--reverse", "--no-renames", "--diff-merges=first-parent",
      "--format=%x1e%H%x1f%s%x1f%b%x1f", "--name-only", `${base}..${tip}`,
    ]);
    return out
      .split("\x1e")
      .filter((record) => record.length > 0)
      .map((record) => {
        const [sha = "", subject = "", body = "", files = ""] = record.split("\x1f");
        return { sha, subject, body: body.trimEnd(), changedPaths: files.split("\n").filter((line) => line.length > 0).sort() };
      });
  }

  /** The text of `path` at each revision (undefined where it does not exist), in one git process. */
  async fileAtRevisions(revisions: readonly string[], path: string): Promise<(string | undefined)[]> {
    if (revisions.length === 0) return [];
    const result = await runGit(this.root, ["cat-file", "--batch"], revisions.map((revision) => `${revision}:${path}\n`).join(""));
    if (result.code !== 0) throw asGitError(["cat-file"], new Error(result.stderr.trim()));
    const out = result.stdout;
    const texts: (string | undefined)[] = [];
    let at = 0;
    for (let i = 0; i < revisions.length; i++) {
      const newline = out.indexOf(10, at);
      const header = out.subarray(at, newline).toString("utf8");
      at = newline + 1;
      const match = /^[0-9a-f]+ blob ([0-9]+)$/.exec(header);
      if (!match) {
        texts.push(undefined); // "<name> missing"
        continue;
      }
      const size = Number(match[1]);
      texts.push(out.subarray(at, at + size).toString("utf8"));
      at += size + 1;
    }
    return texts;
  }

  /** Puts paths back as HEAD has them: tracked ones restored, new ones removed. */
  async restorePaths(paths: readonly string[]): Promise<void> {
    if (paths.length === 0) return;
    const tracked = new Set((await this.raw(["ls-tree", "-r", "--name-only", "HEAD", "--", ...paths])).split("\n").filter(Boolean));
    const restore = paths.filter((p) => tracked.has(p));
    if (restore.length > 0) await this.raw(["checkout", "HEAD", "--", ...restore]);
    await Promise.all(paths.filter((p) => !tracked.has(p)).map((p) => rm(path.join(this.root, p), { force: true })));
  }

  async createBranch(name: string): Promise<void> {
    await this.raw(["checkout", "-q", "-b", name]);
  }
}

/** The repository's git folder (a worktree's `.git` file points elsewhere). */
export async function gitDir(root: string): Promise<string> {
  const dotGit = path.join(root, ".git");
  const info = await stat(dotGit).catch(() => undefined);
  if (!info) {
    throw new RefusalError(`${root} is not the top folder of a git repository (no .git here); run \`git init\` there and commit your project, or run the runner where .git and .runner/ sit together.`);
  }
  if (info.isDirectory()) return dotGit;
  const pointer = (await readFile(dotGit, "utf8")).trim().replace(/^gitdir: /, "");
  return path.resolve(root, pointer);
}

