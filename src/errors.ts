// The runner's typed errors. Each carries the one sentence the user reads and the exit code the CLI
// maps it to (CONTRACT §4): 1 for refusals and bad input, 2 for internal errors (bugs).

export abstract class RunnerError extends Error {
  abstract readonly exitCode: 1 | 2 | 3;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Bad command-line usage: a missing or malformed argument. */
export class UsageError extends RunnerError {
  readonly exitCode = 1;
}

/** The runner will not act in this state (main branch, dirty tree, a lock held, ...). */
export class RefusalError extends RunnerError {
  readonly exitCode = 1;
}

/** A file the user owns (tree, config, policy, output) is invalid. */
export class InvalidInputError extends RunnerError {
  readonly exitCode = 1;
  constructor(
    message: string,
    readonly problems: readonly { path: string; message: string }[] = [],
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** An iteration ended in a runner error after it was persisted and committed (seed 002 recovery). */
export class IterationFailedError extends RunnerError {
  readonly exitCode = 1;
}

/** A git command failed. */
export class GitError extends RunnerError {
  readonly exitCode = 1;
}

/** A bug: something the runner's own logic should have prevented. */
export class InternalError extends RunnerError {
  readonly exitCode = 2;
}
