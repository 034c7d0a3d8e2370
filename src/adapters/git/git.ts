// Git: one git process per call, run with node:child_process (see docs/decisions.md: simple-git
// waited 50 ms after every silent command and ran one process at a time), except reads of files at
// a revision, which one `git cat-file --batch` kept by the process answers (GitRepo.readKept), and
// the loop commit's object and branch move, which the runner writes itself (commit-writer.ts).
// Reports facts (branch, changed paths, loop commits); core decides policy.
//
// Every git call of the runner runs no repository hook and no program named by configuration the
// agent could have written (the threat model in docs/decisions.md): hooks go to /dev/null, no
// fsmonitor, no pager, no editor, no external diff or text conversion. A step also names the git
// folder, the work tree and its own index explicitly (GitRepo.forStep), so nothing in .git/config or
// the agent's .git/index decides what the runner sees or commits.
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, writeSync } from "node:fs";
import { StringDecoder } from "node:string_decoder";
import { StreamRedactor } from "../../core/agent/stream-redactor.js";
import { openSafely } from "../files/safe-files.js";
import { holdEventLoop } from "../process/event-loop.js";
import { readFile, rm, stat } from "node:fs/promises";
import path from "node:path";
import { GitError, isSystemError, RefusalError } from "../../errors.js";

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
  /** The author, "Name <email>". */
  author?: string;
  /** The committer's date, ISO 8601 (only where asked for: `loopCommits(…, { times: true })`). */
  committedAt?: string;
}

export const FALLBACK_IDENTITY = { name: "runner", email: "runner@localhost" } as const;

/** Who a loop commit is by (author and committer). */
export interface CommitIdentity {
  name: string;
  email: string;
}

/** "Name <email>" as git prints it, split; undefined when it is not that. */
export function parseIdent(text: string | undefined): CommitIdentity | undefined {
  const match = /^(.*) <([^<>]*)>$/.exec(text ?? "");
  return match && match[1] !== "" && match[2] !== "" ? { name: match[1]!, email: match[2]! } : undefined;
}

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

/** Settings every git call carries, ahead of the command: they beat anything in .git/config. */
export const GIT_HARDENING = [
  "-c",
  "core.hooksPath=/dev/null",
  "-c",
  "core.fsmonitor=false",
  "-c",
  "core.pager=cat",
  "-c",
  "core.editor=:",
  "-c",
  "sequence.editor=:",
  "-c",
  "diff.external=",
  "-c",
  "commit.gpgSign=false",
] as const;

/**
 * Settings `git repack` reads, fixed to git's defaults for the runner's own packing (whatever a
 * repository's config says: packs of the expected shape, in the expected time, nothing else written).
 */
const PACK_SETTINGS = [
  "pack.window=10",
  "pack.depth=50",
  "pack.windowMemory=0",
  "pack.threads=0",
  "pack.compression=-1",
  "core.compression=-1",
  "pack.packSizeLimit=0",
  "core.bigFileThreshold=512m",
  "pack.deltaCacheSize=256m",
  "repack.writeBitmaps=false",
  "repack.useDeltaIslands=false",
  "repack.updateServerInfo=false",
  "repack.packKeptObjects=false",
].flatMap((setting) => ["-c", setting]);

/** Where a step's git calls point: the work tree, the git folder and the runner's own index. */
interface GitLocation {
  gitDir?: string;
  indexFile?: string;
}

interface GitCall {
  input?: string;
  /** The program that runs git (`setpriv --pdeathsig KILL --`), when git must not outlive the runner. */
  through?: readonly string[];
  /** Extra environment (an identity for commit-tree). */
  env?: Record<string, string>;
  /** Stream stdout into this file (at most `capBytes`, secret values redacted) instead of memory. */
  stdoutFile?: { path: string; capBytes: number; secrets: readonly string[] };
}

function gitEnv(cwd: string, where: GitLocation, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, GIT_TERMINAL_PROMPT: "0", GIT_PAGER: "cat", LC_ALL: "C", ...extra };
  delete env.GIT_INDEX_FILE;
  if (where.gitDir !== undefined) {
    env.GIT_DIR = where.gitDir;
    env.GIT_WORK_TREE = cwd;
  }
  if (where.indexFile !== undefined) env.GIT_INDEX_FILE = where.indexFile;
  return env;
}

/** Runs git in `cwd`, hardened; resolves with whatever it printed (stdout kept in memory unless streamed to a file). */
function runGit(cwd: string, args: readonly string[], where: GitLocation = {}, call: GitCall = {}): Promise<GitOutput> {
  return new Promise((resolve, reject) => {
    const input = call.input;
    const argv = [...(call.through ?? []), "git", ...GIT_HARDENING, ...args];
    const child = spawn(argv[0]!, argv.slice(1), {
      cwd,
      env: gitEnv(cwd, where, call.env),
      stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const file = call.stdoutFile;
    const sink = file
      ? { fd: openSafely(file.path), room: file.capBytes, decoder: new StringDecoder("utf8"), redactor: new StreamRedactor(file.secrets) }
      : undefined;
    // A write that fails (a full disk) ends the file there; the call then rejects with that error.
    let writeError: unknown;
    const write = (text: string) => {
      if (!sink || writeError !== undefined) return;
      try {
        writeSync(sink.fd, text);
      } catch (error) {
        writeError = error;
      }
    };
    // Once the file has all it may keep, git is stopped: the rest would be read only to be dropped
    // (a 450 MB binary file is a 560 MB patch that git deflates and encodes, seconds of work).
    let full = false;
    child.stdout?.on("data", (chunk: Buffer) => {
      if (!sink) return void out.push(chunk);
      const kept = chunk.subarray(0, Math.max(0, sink.room));
      sink.room -= kept.length;
      if (kept.length > 0) write(sink.redactor.push(sink.decoder.write(kept)));
      if (kept.length < chunk.length && !full) {
        full = true;
        child.kill("SIGKILL");
      }
    });
    child.stderr?.on("data", (chunk: Buffer) => err.push(chunk));
    child.once("error", reject);
    child.once("close", (code) => {
      if (sink) {
        write(sink.redactor.push(sink.decoder.end()) + sink.redactor.end());
        closeSync(sink.fd);
      }
      if (writeError !== undefined) reject(writeError);
      else resolve({ code: full ? 0 : code, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString("utf8") });
    });
    if (input !== undefined && child.stdin) {
      child.stdin.on("error", () => undefined);
      child.stdin.end(input);
    }
  });
}

/** The `git cat-file --batch` this process keeps for reads at a revision (GitRepo.readKept): one repository's at a time. */
let kept: { key: string; reader: ObjectReader } | undefined;

export class GitRepo {
  /**
   * `gitDir` and `indexFile` (GitRepo.forStep) name the git folder and an index explicitly; without
   * them git finds the repository from `root` and uses its own index (read-only commands).
   */
  constructor(
    readonly root: string,
    private readonly where: GitLocation = {},
  ) {}

  /** A step's repository: the git folder named, the runner's own index, not the agent's. */
  static forStep(root: string, gitDir: string, indexFile: string): GitRepo {
    return new GitRepo(root, { gitDir, indexFile });
  }

  /** git's stdout; a non-zero exit is a GitError carrying git's first line of complaint. */
  async raw(args: string[], call: GitCall = {}): Promise<string> {
    let result: GitOutput;
    try {
      result = await runGit(this.root, args, this.where, call);
    } catch (error) {
      throw asGitError(args, error);
    }
    if (result.code !== 0) throw asGitError(args, new Error(result.stderr.trim() || `exit code ${String(result.code)}`));
    return result.stdout.toString("utf8");
  }

  /** git's stdout when it exits 0, else undefined (for commands whose failure is an answer). */
  private async attempt(args: string[]): Promise<string | undefined> {
    const result = await runGit(this.root, args, this.where).catch(() => undefined);
    return result?.code === 0 ? result.stdout.toString("utf8") : undefined;
  }

  /** Branch, HEAD and every change (tracked and untracked, not ignored) in one git process. */
  async status(): Promise<RepoStatus> {
    return parsePorcelainV2(await this.raw(["status", "--porcelain=v2", "--branch", "-z", "--untracked-files=all"]));
  }

  /** This run's loop commits reachable from `tip` (default HEAD), newest first; with `times`, each one's committer date. */
  async loopCommits(subjectPattern: string, tip = "HEAD", { times = false } = {}): Promise<LoopCommit[]> {
    const out = await this.raw(["log", "-E", `--grep=${subjectPattern}`, `--format=%H%x1f%an <%ae>%x1f%s%x1f${times ? "%cI%x1f" : ""}%b%x1e`, tip]);
    return out
      .split("\x1e")
      .map((record) => record.replace(/^\n/, ""))
      .filter((record) => record.length > 0)
      .map((record) => {
        const [sha = "", author = "", subject = "", ...rest] = record.split("\x1f");
        const committedAt = times ? (rest.shift() ?? "") : undefined;
        const commit: LoopCommit = { sha, subject, body: (rest[0] ?? "").trimEnd(), author };
        if (committedAt !== undefined) commit.committedAt = committedAt;
        return commit;
      });
  }

  /** The loop commits of a run as `runner runs` and `runner watch` list them: sha, subject and committer date, newest first. */
  async loopCommitHeads(subjectPattern: string, tip: string): Promise<{ sha: string; subject: string; committedAt: string }[]> {
    const out = await this.raw(["log", "-E", `--grep=${subjectPattern}`, "--format=%H%x1f%s%x1f%cI", tip]);
    return out
      .split("\n")
      .filter((line) => line.length > 0)
      .map((line) => {
        const [sha = "", subject = "", committedAt = ""] = line.split("\x1f");
        return { sha, subject, committedAt };
      });
  }

  /** Whether `path` exists in the tree of `revision`. */
  async hasFile(revision: string, path: string): Promise<boolean> {
    return (await this.attempt(["cat-file", "-e", `${revision}:${path}`])) !== undefined;
  }

  /** Whether a local branch of that name exists. */
  async branchExists(branch: string): Promise<boolean> {
    return (await this.resolve(`refs/heads/${branch}`)) !== undefined;
  }

  /** Deletes a local branch, merged or not (the caller decides whether its commits may go). */
  async deleteBranch(branch: string): Promise<void> {
    await this.raw(["branch", "-q", "-D", branch]);
  }

  /** Checks out a new branch at `from`; `back` (a branch or commit) is checked out again if `check` then throws, and the branch deleted. */
  async checkoutNewBranch(branch: string, from: string, back: string, check: () => Promise<void>): Promise<void> {
    await this.raw(["checkout", "-q", "-b", branch, from]);
    try {
      await check();
    } catch (error) {
      await this.raw(["checkout", "-q", back]);
      await this.deleteBranch(branch);
      throw error;
    }
  }

  /** How many commits of `tip` no other branch (local or remote-tracking) than `branch` holds; undefined when git cannot say. */
  async commitsOnlyOn(branch: string, tip: string): Promise<number | undefined> {
    const out = await this.attempt(["rev-list", "--count", tip, "--not", `--exclude=${branch}`, "--branches", "--remotes"]);
    return out === undefined ? undefined : Number(out.trim());
  }

  /** The repository's top folder, or undefined outside a repository. */
  async topLevel(): Promise<string | undefined> {
    return (await this.attempt(["rev-parse", "--show-toplevel"]))?.trim() || undefined;
  }

  /** A new repository here, its first branch named `branch`. */
  async init(branch: string): Promise<void> {
    await this.raw(["init", "-q", "-b", branch]);
  }

  /** Commits what is staged with `message` (porcelain, for a repository the runner sets up itself: the demo); `identity` where git has none. */
  async commitStagedAs(message: string, identity: CommitIdentity | undefined): Promise<void> {
    const as = identity === undefined ? [] : ["-c", `user.name=${identity.name}`, "-c", `user.email=${identity.email}`];
    await this.raw([...as, "commit", "-q", "-m", message]);
  }

  /** `git log --oneline` of a range, as git prints it. */
  async onelineLog(range: string): Promise<string> {
    return (await this.raw(["log", "--oneline", "--no-decorate", range])).trimEnd();
  }

  /** A file's text at a revision, or undefined if it does not exist there. */
  async showFile(revision: string, path: string): Promise<string | undefined> {
    return (await this.readKept(`${revision}:${path}`))?.toString("utf8");
  }

  /** The subset of `paths` that git ignores. */
  async ignored(paths: readonly string[]): Promise<string[]> {
    if (paths.length === 0) return [];
    // exit 1: nothing ignored
    const result = await runGit(this.root, ["check-ignore", "--no-index", "-z", "--stdin"], this.where, { input: `${paths.join("\0")}\0` }).catch(
      () => undefined,
    );
    return (result?.code === 0 ? result.stdout.toString("utf8") : "").split("\0").filter((line) => line.length > 0);
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

  /** Stages exactly these paths (as they are in the work tree). */
  async stagePaths(paths: readonly string[]): Promise<void> {
    await this.raw(["add", "--", ...paths]);
  }

  /** Stages every change of the work tree (tracked and untracked, not ignored), `excludes` left out. */
  async addAll(excludes: readonly string[] = []): Promise<void> {
    await this.raw(["add", "-A", "--", ".", ...excludes.map((p) => `:(exclude,literal)${p}`)]);
  }

  /** The index as a tree object. */
  async writeTree(): Promise<string> {
    return (await this.raw(["write-tree"])).trim();
  }

  /** The index made to hold `revision`'s tree (stat information is gathered again by the next status). */
  async readTree(revision: string): Promise<void> {
    await this.raw(["read-tree", revision]);
  }

  /**
   * A commit of `tree` with exactly `parent`, `message` verbatim (no hook, no cleanup, no
   * signature), by `identity` (author and committer).
   */
  async commitTree(tree: string, parent: string, message: string, identity: CommitIdentity): Promise<string> {
    const env = {
      GIT_AUTHOR_NAME: identity.name,
      GIT_AUTHOR_EMAIL: identity.email,
      GIT_COMMITTER_NAME: identity.name,
      GIT_COMMITTER_EMAIL: identity.email,
    };
    return (await this.raw(["commit-tree", tree, "-p", parent, "-F", "-"], { input: message, env })).trim();
  }

  /** Points `ref` at `sha`; with `old`, only if it still points at `old` (else git refuses). */
  async updateRef(ref: string, sha: string, old?: string): Promise<void> {
    await this.raw(["update-ref", "-m", "runner", ref, sha, ...(old === undefined ? [] : [old])]);
  }

  /** HEAD made a symbolic ref to `ref` again (a branch), whatever it was. */
  async pointHeadAt(ref: string): Promise<void> {
    await this.raw(["symbolic-ref", "-m", "runner", "HEAD", ref]);
  }

  /** Where HEAD points: the branch (undefined when detached) and the commit (undefined on an unborn branch). */
  async head(): Promise<{ branch: string | undefined; sha: string | undefined }> {
    const [ref, sha] = await Promise.all([this.attempt(["symbolic-ref", "-q", "HEAD"]), this.attempt(["rev-parse", "-q", "--verify", "HEAD"])]);
    const branch = ref?.trim().replace(/^refs\/heads\//, "");
    return { branch: branch === "" ? undefined : branch, sha: sha?.trim() || undefined };
  }

  /**
   * Where HEAD and the branch `branch` point, in one git process (the two calls it replaces when a
   * name does not resolve): HEAD's branch (undefined when detached), HEAD's commit, the branch's commit.
   */
  async headAndBranch(branch: string): Promise<{ head: { branch: string | undefined; sha: string | undefined }; branchSha: string | undefined }> {
    const read = await this.headOnBranchFromFiles(branch);
    if (read !== undefined) return { head: { branch, sha: read }, branchSha: read };
    const out = await this.attempt(["rev-parse", "HEAD", `refs/heads/${branch}`, "--symbolic-full-name", "HEAD"]);
    const [sha, branchSha, symbolic] = (out ?? "").split("\n");
    if (out !== undefined && sha && branchSha && symbolic) {
      return { head: { branch: symbolic.startsWith("refs/heads/") ? symbolic.slice("refs/heads/".length) : undefined, sha }, branchSha };
    }
    const [head, tip] = await Promise.all([this.head(), this.resolve(`refs/heads/${branch}`)]);
    return { head, branchSha: tip };
  }

  /**
   * Without a process, the usual case after an iteration: HEAD is exactly `ref: refs/heads/<branch>`
   * and the branch a loose ref holding a commit id. Anything else — a detached or elsewhere HEAD, a
   * packed or symbolic ref, a linked worktree, a reftable — is left to git (undefined).
   */
  private async headOnBranchFromFiles(branch: string): Promise<string | undefined> {
    const gitDir = this.where.gitDir;
    if (gitDir === undefined) return undefined;
    const [head, tip, common] = await Promise.all([
      readFile(path.join(gitDir, "HEAD"), "utf8").catch(() => ""),
      readFile(path.join(gitDir, "refs", "heads", ...branch.split("/")), "utf8").catch(() => ""),
      stat(path.join(gitDir, "commondir")).then(
        () => true,
        () => false,
      ),
    ]);
    if (common || head !== `ref: refs/heads/${branch}\n` || !/^[0-9a-f]{40}\n$/.test(tip)) return undefined;
    return tip.trim();
  }

  /** Whether commit `ancestor` is `descendant` or in its history. */
  async isAncestor(ancestor: string, descendant: string): Promise<boolean> {
    return (await this.attempt(["merge-base", "--is-ancestor", ancestor, descendant])) !== undefined;
  }

  /** A ref's commit, or undefined. */
  async resolve(ref: string): Promise<string | undefined> {
    return (await this.attempt(["rev-parse", "-q", "--verify", "--end-of-options", `${ref}^{commit}`]))?.trim() || undefined;
  }

  /** Commits reachable from `tip` but not from `base`, oldest first: sha and subject. */
  async commitsBetween(base: string, tip: string): Promise<{ sha: string; subject: string }[]> {
    const out = await this.raw(["log", "--reverse", "--format=%H%x1f%s", `${base}..${tip}`]);
    return out
      .split("\n")
      .filter(Boolean)
      .map((line) => {
        const [sha = "", subject = ""] = line.split("\x1f");
        return { sha, subject };
      });
  }

  /**
   * The patch from `base` to `target` (a commit; "index": what is staged; binary files included),
   * `excludes` left out, streamed into `file` up to `capBytes` and redacted (a file of hundreds of MB
   * never passes through one string).
   */
  async diffToFile(
    base: string,
    target: string,
    excludes: readonly string[],
    file: string,
    capBytes: number,
    secrets: readonly string[],
  ): Promise<void> {
    const to = target === "index" ? ["--cached", base] : [base, target];
    await this.raw(["diff", "--binary", "--no-color", "--no-ext-diff", "--no-textconv", ...to, "--", ".", ...excludes.map((p) => `:(exclude)${p}`)], {
      stdoutFile: { path: file, capBytes, secrets },
    }).catch((error: unknown) => {
      // A file that cannot be written (a full disk) is the file system's error, not git's.
      throw error instanceof GitError && isSystemError(error.cause) ? error.cause : error;
    });
  }

  /** The paths (folders end in /) that git ignores in the work tree, not descending into ignored folders. */
  async ignoredEntries(): Promise<string[]> {
    const out = await this.raw(["ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"]);
    return out.split("\0").filter(Boolean).sort();
  }

  /**
   * Commits after `base` on the first-parent line to `tip` (default HEAD), oldest first, with the paths
   * each changed and the blob each holds after it: read as git prints them, one commit at a time from
   * one `git log` process, so a run of thousands of commits is never held whole (`runner audit`,
   * `runner report`).
   */
  async *streamCommitsSince(base: string, tip = "HEAD"): AsyncGenerator<HistoryCommit> {
    const args = [
      "log",
      "--first-parent",
      "--reverse",
      "--no-renames",
      "--diff-merges=first-parent",
      "--format=%x1e%H%x1f%s%x1f%an <%ae>%x1f%cn <%ce>%x1f%P%x1f%b%x1f",
      "--raw",
      "--no-abbrev",
      `${base}..${tip}`,
    ];
    for await (const record of this.streamRecords(args, "\x1e")) yield parseHistoryRecord(record);
  }

  /** git's stdout cut at `separator`, each piece yielded as soon as it is whole (empty pieces skipped). */
  async *streamRecords(args: string[], separator: string): AsyncGenerator<string> {
    const child = spawn("git", [...GIT_HARDENING, ...args], {
      cwd: this.root,
      env: gitEnv(this.root, this.where),
      stdio: ["ignore", "pipe", "pipe"],
    });
    const err: Buffer[] = [];
    child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
    const closed = new Promise<number | null>((resolve, reject) => {
      child.once("error", reject);
      child.once("close", resolve);
    });
    const decoder = new StringDecoder("utf8");
    let pending = "";
    let done = false;
    try {
      for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
        pending += decoder.write(chunk);
        let at = pending.indexOf(separator);
        while (at >= 0) {
          const record = pending.slice(0, at);
          pending = pending.slice(at + separator.length);
          if (record.length > 0) yield record;
          at = pending.indexOf(separator);
        }
      }
      pending += decoder.end();
      if (pending.length > 0) yield pending;
      done = true;
    } finally {
      if (!done) child.kill();
    }
    let code: number | null;
    try {
      code = await closed;
    } catch (error) {
      throw asGitError(args, error);
    }
    if (code !== 0) throw asGitError(args, new Error(Buffer.concat(err).toString("utf8").trim() || `exit code ${String(code)}`));
  }

  /** The text of each of `paths` at `revision` (undefined where it is not a file there), read by the kept `git cat-file --batch`. */
  async filesAtRevision(revision: string, paths: readonly string[]): Promise<(string | undefined)[]> {
    const bytes = await Promise.all(paths.map((file) => this.readKept(`${revision}:${file}`)));
    return bytes.map((read) => read?.toString("utf8"));
  }

  /**
   * A file's bytes (`<revision>:<path>`; undefined where there is no file) from the `git cat-file
   * --batch` this process keeps for its repository: a step reads the guard's definition before the
   * agent and `.runner/.gitignore` after it, and `runner run` does so every iteration — one process
   * for all of them instead of one per read. A reader that died (an agent can kill the runner's
   * processes) is replaced once.
   */
  private async readKept(name: string): Promise<Buffer | undefined> {
    const key = `${this.root}\0${this.where.gitDir ?? ""}`;
    for (let attempt = 0; ; attempt++) {
      if (kept === undefined || kept.key !== key || kept.reader.failed) {
        kept?.reader.close();
        kept = { key, reader: this.objectReader(true) };
      }
      try {
        return await kept.reader.read(name, true);
      } catch (error) {
        if (attempt > 0 || !kept.reader.failed) throw error;
      }
    }
  }

  /** One `git cat-file --batch` process for reading many objects one after another (close it after use). */
  objectReader(idle = false): ObjectReader {
    return new ObjectReader(
      spawn("git", [...GIT_HARDENING, "cat-file", "--batch"], {
        cwd: this.root,
        env: gitEnv(this.root, this.where),
        stdio: ["pipe", "pipe", "ignore"],
      }),
      idle,
    );
  }

  /**
   * Packs the loose objects into a pack, and packs into fewer (`--geometric`: each at least twice
   * the size of the next smaller), then removes what a pack now holds (`-d`). Nothing that is in no
   * pack is removed: a packing killed half-way leaves objects loose, or in both places.
   */
  async packLooseObjects(through: readonly string[] = [], onStarted?: () => void): Promise<void> {
    const done = this.raw([...PACK_SETTINGS, "repack", "-d", "-l", "-q", "--geometric=2"], { through });
    onStarted?.();
    await done;
  }

  /** Puts paths back as `revision` has them: tracked ones restored (in the index too), new ones removed. */
  async restorePaths(paths: readonly string[], revision: string): Promise<void> {
    if (paths.length === 0) return;
    const tracked = new Set((await this.raw(["ls-tree", "-r", "--name-only", revision, "--", ...paths])).split("\n").filter(Boolean));
    const restore = paths.filter((p) => tracked.has(p));
    if (restore.length > 0) await this.raw(["checkout", revision, "--", ...restore]);
    await Promise.all(paths.filter((p) => !tracked.has(p)).map((p) => rm(path.join(this.root, p), { force: true, recursive: true })));
  }

  async createBranch(name: string): Promise<void> {
    await this.raw(["checkout", "-q", "-b", name]);
  }
}

/** A commit of a run's history as `runner audit` reads it. */
export interface HistoryCommit {
  sha: string;
  subject: string;
  body: string;
  author: string;
  committer: string;
  parents: string[];
  changedPaths: string[];
  /** The blob each changed path holds after the commit (absent: the commit deleted it, or it is no file). */
  blobs: ReadonlyMap<string, string>;
}

/** One record of streamCommitsSince's `git log` format: its fields, then `--raw` lines (`:<modes> <old> <new> <status>\t<path>`). */
function parseHistoryRecord(record: string): HistoryCommit {
  const [sha = "", subject = "", author = "", committer = "", parents = "", body = "", files = ""] = record.split("\x1f");
  const changedPaths: string[] = [];
  const blobs = new Map<string, string>();
  for (const line of files.split("\n")) {
    if (!line.startsWith(":")) continue;
    const tab = line.indexOf("\t");
    const [, mode = "", , blob = ""] = line.slice(1, tab).split(" ");
    const file = line.slice(tab + 1);
    changedPaths.push(file);
    if (mode !== "160000" && !/^0+$/.test(blob)) blobs.set(file, blob);
  }
  return {
    sha,
    subject,
    body: body.trimEnd(),
    author,
    committer,
    parents: parents.split(" ").filter(Boolean),
    changedPaths: changedPaths.sort(),
    blobs,
  };
}

/**
 * Answers of one `git cat-file --batch` process, in the order asked: an object's bytes, or undefined
 * when it is missing. Requests may be made ahead of the answers (git works on the next object while
 * the caller looks at this one); each object is copied once, into a buffer of its size, as its
 * pieces arrive.
 */
export class ObjectReader {
  private readonly waiting: { resolve: (value: Buffer | undefined) => void; reject: (error: unknown) => void; blobOnly: boolean }[] = [];
  private failure: unknown;
  /** The start of a header line not yet whole. */
  private headerPart: Buffer | undefined;
  /** The object being read: its bytes so far, and how many (the newline after it included); whether it is a blob. */
  private object: { bytes: Buffer; filled: number; size: number; blob: boolean } | undefined;

  /**
   * With `idle`, the process does not keep the runner alive while nothing is asked of it (it ends
   * when the runner does: its input closes).
   */
  constructor(
    private readonly child: ChildProcess,
    private readonly idle = false,
  ) {
    child.stdout!.on("data", (chunk: Buffer) => this.take(chunk));
    const fail = (error: unknown) => {
      this.failure ??= error;
      for (const waiter of this.waiting.splice(0)) waiter.reject(this.failure);
    };
    child.once("error", (error) => fail(asGitError(["cat-file"], error)));
    child.once("close", () => fail(asGitError(["cat-file"], new Error("git cat-file ended early"))));
    child.stdin!.on("error", () => undefined);
  }

  /** The object `name` names (`<rev>:<path>`, a sha), or undefined when there is none. */
  read(name: string, blobOnly = false): Promise<Buffer | undefined> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    if (this.idle && this.waiting.length === 0) this.hold(true);
    return new Promise((resolve, reject) => {
      this.waiting.push({ resolve, reject, blobOnly });
      this.child.stdin!.write(`${name}\n`);
    });
  }

  /** Whether the process failed or ended: it answers nothing more. */
  get failed(): boolean {
    return this.failure !== undefined;
  }

  private hold(on: boolean): void {
    holdEventLoop(this.child, on);
  }

  /** The text of each of `paths` at `revision` (undefined where it is not a file there), as GitRepo.filesAtRevision, through this process. */
  async filesAtRevision(revision: string, paths: readonly string[]): Promise<(string | undefined)[]> {
    const bytes = await Promise.all(paths.map((file) => this.read(`${revision}:${file}`, true)));
    return bytes.map((read) => read?.toString("utf8"));
  }

  close(): void {
    this.child.stdin!.end();
    this.child.kill();
  }

  private take(chunk: Buffer): void {
    let at = 0;
    while (at < chunk.length) {
      const object = this.object;
      if (object === undefined) {
        const newline = chunk.indexOf(10, at);
        if (newline < 0) {
          this.headerPart = Buffer.concat([this.headerPart ?? Buffer.alloc(0), chunk.subarray(at)]);
          return;
        }
        const line = Buffer.concat([this.headerPart ?? Buffer.alloc(0), chunk.subarray(at, newline)]).toString("utf8");
        this.headerPart = undefined;
        at = newline + 1;
        const match = /^[0-9a-f]+ ([a-z]+) ([0-9]+)$/.exec(line);
        if (!match) {
          this.waiting.shift()?.resolve(undefined); // "<name> missing"
          if (this.idle && this.waiting.length === 0) this.hold(false);
          continue;
        }
        const size = Number(match[2]);
        this.object = { bytes: Buffer.allocUnsafe(size), filled: 0, size, blob: match[1] === "blob" };
        continue;
      }
      // The object's bytes, then the newline git prints after them.
      const room = object.size - object.filled;
      const take = Math.min(room, chunk.length - at);
      chunk.copy(object.bytes, object.filled, at, at + take);
      object.filled += take;
      at += take;
      if (object.filled < object.size || at >= chunk.length) continue;
      at++; // (the newline)
      this.object = undefined;
      const waiter = this.waiting.shift();
      // (a folder is a tree object: not a file, for a reader of files)
      waiter?.resolve(waiter.blobOnly && !object.blob ? undefined : object.bytes);
      if (this.idle && this.waiting.length === 0) this.hold(false);
    }
  }
}

/** The repository's git folder (a worktree's `.git` file points elsewhere). */
export async function gitDir(root: string): Promise<string> {
  const dotGit = path.join(root, ".git");
  const info = await stat(dotGit).catch(() => undefined);
  if (!info) {
    throw new RefusalError(
      `${root} is not the top folder of a git repository (no .git here); run \`git init\` there and commit your project, or run the runner where .git and .runner/ sit together.`,
    );
  }
  if (info.isDirectory()) return dotGit;
  const pointer = (await readFile(dotGit, "utf8")).trim().replace(/^gitdir: /, "");
  return path.resolve(root, pointer);
}
