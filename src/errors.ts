// The runner's typed errors. Each carries the one sentence the user reads; src/exit-codes.ts maps
// them to exit codes. Anything else that is thrown is a bug (exit 2), except the file system's and
// the operating system's own errors (a full disk, a permission), which are the environment's.

export abstract class RunnerError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Bad command-line usage: a missing or malformed argument. */
export class UsageError extends RunnerError {}

/** The runner will not act in this state (main branch, dirty tree, a lock held, invalid input, ...). */
export class RefusalError extends RunnerError {}

/** A git command failed. */
export class GitError extends RunnerError {}

/** Something outside the runner failed during an iteration (recorded as a runner error, exit 1). */
export class IterationError extends RunnerError {}

/** An error the operating system reported (ENOSPC, EACCES, EIO, … and Node's ERR_FS_* for them): the environment's, not a bug. */
export function isSystemError(error: unknown): error is NodeJS.ErrnoException {
  const code = error instanceof Error ? (error as NodeJS.ErrnoException).code : undefined;
  return typeof code === "string" && (/^E[A-Z0-9]+$/.test(code) || code.startsWith("ERR_FS_"));
}

/** A programming error: neither one of the runner's own errors nor the environment's. */
export function isBug(error: unknown): boolean {
  return !(error instanceof RunnerError) && !isSystemError(error);
}

/** The message of anything thrown, for a sentence. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The sentence a bug is reported with. */
export function bugSentence(error: unknown): string {
  return `Internal error: ${errorMessage(error)}. This is a bug in the runner; rerun with --debug for the stack trace.`;
}
