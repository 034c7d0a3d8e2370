// The safety check's git reads need nothing of the machine, so `runner step` starts them before the
// machine's modules are loaded (they take about as long to import as git takes to answer).
import type { GitRepo, RepoStatus } from "../adapters/git.js";
import { LAYOUT } from "../core/layout.js";

/** The safety check's git reads, which need nothing of the machine: started as early as possible. */
export interface EarlyReads {
  status: Promise<RepoStatus>;
  ignored: Promise<string[]>;
}

/** A promise begun ahead of its reader: its rejection is handled where it is awaited, not as unhandled. */
export function quietly<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined);
  return promise;
}

/**
 * Starts the safety check's git reads (`git status`, `git check-ignore`). The identity, needed only
 * by the commit, is asked for there, beside `git add`: at the start it would take CPU from the tree's
 * parse and check, the longest stretch before the agent starts.
 */
export function startEarlyReads(git: GitRepo): EarlyReads {
  return {
    status: quietly(git.status()),
    ignored: quietly(git.ignored([`${LAYOUT.iterations}/x`, `${LAYOUT.context}/x`])),
  };
}

