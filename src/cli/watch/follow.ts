// One run as `runner watch` follows it, read-only: the runner holding the lock of the worktree the
// run branch is checked out in (asked, never taken: workingRunner), the run's status
// file (src/core/step/live-status.ts), its journal of machine transitions (events.jsonl, followed from
// where the last look ended) and, when the branch moved, the tree at its tip, its loop commits and
// what its agents used. Each look costs a few small reads; git is asked only when a ref file or the
// worktree list changed, or every REF_CHECK_MS. Everything here is in the agent's reach and is read
// bounded (src/adapters/files/safe-files.ts): garbage shows as nothing, never as a crash or a hang.
import { statSync } from "node:fs";
import path from "node:path";
import { FileTail } from "../../adapters/files/file-tail.js";
import { gitDir, type GitRepo } from "../../adapters/git/git.js";
import { sumIterationUsage } from "../../adapters/records/iteration-usage.js";
import { liveStatusPath, readLiveStatus } from "../../adapters/records/live-status.js";
import { askHolder } from "../../adapters/state/lock.js";
import { holderAlive, LOCK_NAME, readLockRecord, type LockRecord } from "../../adapters/state/lock-holder.js";
import { checkTreeText } from "../../adapters/files/tree-store.js";
import { listRunBranches, listWorktrees } from "../../adapters/git/worktrees.js";
import type { UsageTotals } from "../../core/agent/agent-usage.js";
import { eventsFile, LAYOUT } from "../../core/base/layout.js";
import type { LiveStatus } from "../../core/step/live-status.js";
import { BRANCH_PREFIX } from "../../core/commit/run-id.js";
import { loopSubjectPattern, parseCommitSubject } from "../../core/commit/commit-message.js";
import type { TaskTree } from "../../core/tree/tree.js";
import { followMachine, type MachineStep, type MachineTrack } from "./machine.js";

/** How often the branch's tip is asked of git even when no ref file seems to have changed. */
const REF_CHECK_MS = 10_000;
/** How often the worktrees are listed again while the run is checked out nowhere. */
const PLACE_CHECK_MS = 2_000;
/** A git call the watch waits for at most (a hung git must not freeze the view). */
const GIT_TIMEOUT_MS = 20_000;

export interface RunSnapshot {
  runId: string;
  /** Where the run branch is checked out, if anywhere. */
  worktree: string | undefined;
  /** Whether the run branch exists. */
  branchExists: boolean;
  /** The runner working in that worktree now (a live lock holder), if any. */
  runner: LockRecord | undefined;
  /** The run's status file, as `runner run` last wrote it (possibly by an earlier runner). */
  live: LiveStatus | undefined;
  /** The tree at the branch's tip, or why it cannot be shown. */
  tree: TaskTree | undefined;
  treeProblem: string | undefined;
  /** Loop commits of the run at the tip, and the agents' usage over them (the local meta.json files). */
  iterations: number;
  usage: UsageTotals | undefined;
  /** The states of the newest iteration in the journal. */
  machine: MachineTrack | undefined;
  /** The transitions the journal told since the last look. */
  steps: MachineStep[];
}

/**
 * The runner holding the lock of the checkout whose git folder is `gitDir`, if any — asked, never
 * taken: on Linux the holder of the lock's socket answers with its record (a connection, not a bind:
 * a watch must never stand in the way of a runner taking the lock); elsewhere the lock file, its
 * holder checked.
 */
async function workingRunner(gitDir: string): Promise<LockRecord | undefined> {
  if (process.platform === "linux") return askHolder(gitDir);
  const lock = readLockRecord(path.join(gitDir, LOCK_NAME));
  return lock !== undefined && holderAlive(lock) ? lock : undefined;
}

/** What a file's stat says, to tell whether it changed. */
function signature(file: string): string {
  try {
    const info = statSync(file);
    return `${info.ino}:${info.size}:${info.mtimeMs}`;
  } catch {
    return "-";
  }
}

function withTimeout<T>(work: Promise<T>, fallback: T): Promise<T> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(fallback), GIT_TIMEOUT_MS);
    timer.unref();
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      () => {
        clearTimeout(timer);
        resolve(fallback);
      },
    );
  });
}

export class RunFollower {
  private worktree: string | undefined;
  private worktreeGitDir: string | undefined;
  private placeCheckedAt = 0;
  private tip: string | undefined;
  private refCheckedAt = 0;
  private refSignature = "";
  private journal: FileTail | undefined;
  private machine: MachineTrack | undefined;
  private tree: TaskTree | undefined;
  private treeProblem: string | undefined;
  private iterations = 0;
  private usage: UsageTotals | undefined;

  /**
   * `git`: any checkout of the clone; `commonDir`: the clone's common git folder (refs live there);
   * `place`: where the run is checked out, when the caller knows it already.
   */
  /** Whether the caller tells where the run is checked out (else the follower looks for it while it is nowhere). */
  private readonly placedByCaller: boolean;

  constructor(
    private readonly git: GitRepo,
    private readonly commonDir: string,
    readonly runId: string,
    place?: { worktree: string | undefined },
  ) {
    this.placedByCaller = place !== undefined;
    if (place !== undefined) this.setWorktree(place.worktree);
  }

  /** Where the run is checked out now (the list of `runner watch --all` tells it). */
  setWorktree(worktree: string | undefined): void {
    if (worktree === this.worktree && this.journal !== undefined) return;
    this.worktree = worktree;
    this.worktreeGitDir = undefined;
    this.journal = worktree === undefined ? undefined : new FileTail(path.join(worktree, ...eventsFile(this.runId).split("/")));
    this.machine = undefined;
  }

  async look(now: number): Promise<RunSnapshot> {
    if (!this.placedByCaller && this.worktree === undefined && now - this.placeCheckedAt >= PLACE_CHECK_MS) await this.findPlace(now);
    await this.checkTip(now);
    const worktree = this.worktree;
    let runner: LockRecord | undefined;
    let live: LiveStatus | undefined;
    let steps: MachineStep[] = [];
    if (worktree !== undefined) {
      this.worktreeGitDir ??= await withTimeout(gitDir(worktree), undefined);
      runner = this.worktreeGitDir === undefined ? undefined : await workingRunner(this.worktreeGitDir);
      live = readLiveStatus(liveStatusPath(worktree, this.runId));
      const followed = followMachine(this.machine, this.journal?.read() ?? []);
      this.machine = followed.track;
      steps = followed.steps;
    }
    return {
      runId: this.runId,
      worktree,
      branchExists: this.tip !== undefined,
      runner,
      live,
      tree: this.tree,
      treeProblem: this.treeProblem,
      iterations: this.iterations,
      usage: this.usage,
      machine: this.machine,
      steps,
    };
  }

  /** The git folder of the worktree the run is checked out in (where a stop request goes), once known. */
  get gitDir(): string | undefined {
    return this.worktreeGitDir;
  }

  private async findPlace(now: number): Promise<void> {
    this.placeCheckedAt = now;
    const worktrees = await withTimeout(listWorktrees(this.git), []);
    const found = worktrees.find((w) => w.branch === `${BRANCH_PREFIX}${this.runId}` && !w.prunable);
    if (found !== undefined) this.setWorktree(path.resolve(found.path));
  }

  /** Asks git for the branch's tip when a ref file changed (or it is time to); reads the run at a new tip. */
  private async checkTip(now: number): Promise<void> {
    const refs = `${signature(path.join(this.commonDir, "refs", "heads", ...`${BRANCH_PREFIX}${this.runId}`.split("/")))}|${signature(path.join(this.commonDir, "packed-refs"))}`;
    if (refs === this.refSignature && now - this.refCheckedAt < REF_CHECK_MS) return;
    this.refSignature = refs;
    this.refCheckedAt = now;
    const tip = (await withTimeout(this.git.resolve(`refs/heads/${BRANCH_PREFIX}${this.runId}`), undefined)) || undefined;
    if (tip === this.tip) return;
    this.tip = tip;
    if (tip === undefined) {
      this.tree = undefined;
      this.treeProblem = `there is no branch ${BRANCH_PREFIX}${this.runId}`;
      this.iterations = 0;
      this.usage = undefined;
      return;
    }
    const [treeText, heads] = await Promise.all([
      withTimeout(this.git.showFile(tip, LAYOUT.tree), undefined),
      withTimeout(this.git.loopCommitHeads(loopSubjectPattern(this.runId), tip), []),
    ]);
    const load = treeText === undefined ? undefined : checkTreeText(treeText);
    this.tree = load?.ok ? load.tree : undefined;
    this.treeProblem =
      load === undefined
        ? `${LAYOUT.tree} is missing at the branch's tip`
        : load.ok
          ? undefined
          : `${LAYOUT.tree} at the branch's tip is not a valid tree`;
    const commits = heads
      .map(({ sha, subject }) => {
        const parsed = parseCommitSubject(subject);
        return parsed?.runId === this.runId ? { iteration: parsed.iteration, commit: sha } : undefined;
      })
      .filter((c) => c !== undefined);
    this.iterations = commits.length;
    this.usage = this.worktree === undefined ? undefined : await sumIterationUsage(this.worktree, this.runId, commits);
  }
}

/** How often the run branches and worktrees are listed again even when no ref file seems to have changed. */
const LIST_CHECK_MS = 10_000;

/** Every run of the clone (each `runner/*` branch, as `runner runs` lists them), each followed. */
export class CloneRuns {
  private readonly followers = new Map<string, RunFollower>();
  private signature = "";
  private listedAt = 0;

  constructor(
    private readonly git: GitRepo,
    private readonly commonDir: string,
  ) {}

  /** The runs by id, each as its follower sees it now. */
  async look(now: number): Promise<RunSnapshot[]> {
    const changed = ["refs/heads/runner", "packed-refs", "worktrees"].map((name) => signature(path.join(this.commonDir, name))).join("|");
    if (changed !== this.signature || now - this.listedAt >= LIST_CHECK_MS) {
      this.signature = changed;
      this.listedAt = now;
      const [branches, worktrees] = await Promise.all([
        withTimeout(listRunBranches(this.git), undefined),
        withTimeout(listWorktrees(this.git), undefined),
      ]);
      if (branches !== undefined && worktrees !== undefined) {
        const ids = new Set<string>();
        for (const { branch } of branches) {
          const runId = branch.slice(BRANCH_PREFIX.length);
          ids.add(runId);
          const checkout = worktrees.find((w) => w.branch === branch && !w.prunable);
          const worktree = checkout === undefined ? undefined : path.resolve(checkout.path);
          const follower = this.followers.get(runId);
          if (follower === undefined) this.followers.set(runId, new RunFollower(this.git, this.commonDir, runId, { worktree }));
          else follower.setWorktree(worktree);
        }
        for (const runId of [...this.followers.keys()]) if (!ids.has(runId)) this.followers.delete(runId);
      }
    }
    const snapshots: RunSnapshot[] = [];
    for (const runId of [...this.followers.keys()].sort()) snapshots.push(await this.followers.get(runId)!.look(now));
    return snapshots;
  }

  follower(runId: string): RunFollower | undefined {
    return this.followers.get(runId);
  }
}
