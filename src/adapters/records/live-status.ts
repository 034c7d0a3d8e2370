// The status file of a `runner run` in progress (src/core/step/live-status.ts): written by the run, each
// time whole and at once, never through a link the agent planted (the folder is in its reach); read
// by `runner watch` as untrusted input, at most its fixed size.
import { rmSync } from "node:fs";
import path from "node:path";
import { liveStatusFile } from "../../core/base/layout.js";
import { LIVE_STATUS_CAP, liveStatusText, parseLiveStatus, type LiveStatus } from "../../core/step/live-status.js";
import { redactSecrets } from "../../core/base/text-limits.js";
import { ensureRealFolder, readSmallAgentFile, replaceSafely } from "../files/safe-files.js";

/** The status file's path in the checkout at `root`. */
export function liveStatusPath(root: string, runId: string): string {
  return path.join(root, ...liveStatusFile(runId).split("/"));
}

/** Writes a run's status file; a write that fails (a full disk, a folder in the way) is left for the next. */
export class LiveStatusFile {
  readonly file: string;

  constructor(
    private readonly root: string,
    runId: string,
    private readonly secrets: readonly string[],
  ) {
    this.file = liveStatusPath(root, runId);
  }

  write(status: LiveStatus): void {
    try {
      ensureRealFolder(this.root, path.dirname(this.file));
      // (the lines are the run's redacted output; redacted once more, as every log the runner writes)
      replaceSafely(this.file, redactSecrets(liveStatusText(status), this.secrets));
    } catch {
      // Best effort: the status is for a person watching; the run goes on without it.
    }
  }

  /** Removes the file (a link the agent put in its place is removed, never followed). */
  remove(): void {
    rmSync(this.file, { force: true });
  }
}

/** A run's status file read back: undefined when there is none, or it is not one (too big, not JSON, not a regular file). */
export function readLiveStatus(file: string): LiveStatus | undefined {
  const text = readSmallAgentFile(file, LIVE_STATUS_CAP);
  return text === undefined ? undefined : parseLiveStatus(text);
}
