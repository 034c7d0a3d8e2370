// Whether a runner is working in this repository right now, for `runner status` and `runner log`:
// the repository lock (.git/runner.lock, src/adapters/state/lock.ts: pid, the process's start time, host,
// command, since) says who; the journal in the runner's state folder (src/adapters/records/journal.ts) says
// which iteration and node are under way. A lock whose process has ended (a runner that was killed)
// is stale and says nothing: the next step takes it over.
import { formatDuration } from "../core/step/durations.js";
import { existsSync } from "node:fs";
import { hostname } from "node:os";
import path from "node:path";
import { gitDir } from "../adapters/git/git.js";
import { probeLock } from "../adapters/state/lock.js";
import { holderAlive, LOCK_NAME, type LockRecord, readLockRecord } from "../adapters/state/lock-holder.js";

export interface RunInProgress {
  command: string;
  pid: number;
  host: string;
  /** When the holder took the lock (ISO time). */
  since: string;
  /** Whether the holder is known to be alive (false: on another host, which cannot be checked). */
  checked: boolean;
  /** The iteration under way, from the journal; null between iterations. */
  iteration: { run_id: string; number: number; node_id: string | null; step_kind: string; started_at: string } | null;
}

/** The runner working in the repository at `root`, or undefined when none is (no lock, or a stale one). */
export async function runInProgress(
  root: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<RunInProgress | undefined> {
  const dotGit = path.join(root, ".git");
  if (!existsSync(dotGit)) return undefined;
  let dir: string;
  try {
    dir = await gitDir(root);
  } catch {
    return undefined; // not a repository: nothing can run here
  }
  // Linux: the holder of the lock's socket says who it is (the lock file may have been deleted or
  // rewritten by an agent); elsewhere the lock file, with its holder checked.
  const probe = await probeLock(dir);
  let lock: LockRecord | undefined;
  if (probe?.held === false) return undefined;
  if (probe?.held === true) {
    lock = probe.holder ?? { pid: 0, start: null, host: hostname(), command: "a runner (it did not say which)", since: "" };
  } else {
    lock = readLockRecord(path.join(dir, LOCK_NAME));
    if (!lock) return undefined;
  }
  const local = lock.host === hostname();
  if (probe === undefined && local && !holderAlive(lock)) return undefined;
  // Loaded only now: runner-state names the state folder with node:crypto, whose import costs about
  // 4 ms; a lock is rare, `runner status` is not. (The state folder exists: the holder made it.)
  const [{ readJournal }, { repositoryState }] = await Promise.all([
    import("../adapters/records/journal.js"),
    import("../adapters/state/runner-state.js"),
  ]);
  const journal = await readJournal(repositoryState(env, dir).journal);
  return {
    command: lock.command,
    pid: lock.pid,
    host: lock.host,
    since: lock.since,
    checked: local,
    iteration: journal
      ? { run_id: journal.runId, number: journal.iteration, node_id: journal.nodeId, step_kind: journal.stepKind, started_at: journal.startedAt }
      : null,
  };
}

/** One line: who works here, since when, on what. */
export function describeRunInProgress(run: RunInProgress, now: number): string {
  const since = Date.parse(run.since);
  const age = Number.isFinite(since) ? ` (${formatDuration(now - since, "clock")} ago)` : "";
  const where = run.checked ? "" : ` on host ${run.host}`;
  const head = `in progress: \`${run.command}\`, pid ${run.pid}${where}, since ${run.since}${age}`;
  const it = run.iteration;
  if (!it) return `${head}; between iterations`;
  const on =
    it.step_kind === "repair"
      ? "repairing the task tree"
      : it.node_id
        ? `node ${it.node_id}${it.step_kind === "recheck" ? " (re-check)" : ""}`
        : it.step_kind;
  return `${head}; iteration ${it.number} of run ${it.run_id}, ${on}`;
}
