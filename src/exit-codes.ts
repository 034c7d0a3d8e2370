// Exit codes (CONTRACT §4), decided here and nowhere else.
import { isBug } from "./errors.js";

export const EXIT = {
  /** Done: the command did what it was asked (a step committed, or nothing was left to do). */
  ok: 0,
  /** Refused, bad input, or an iteration that ended in a runner error after it was committed. */
  failed: 1,
  /** A bug in the runner. */
  bug: 2,
  /** `runner run` stopped early (max iterations, a stuck leaf, a budget, no progress). */
  stoppedEarly: 3,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** The exit code of one step, by how it ended. */
export function exitCodeOfStep(outcome: "committed" | "nothing-to-do" | "refused" | "failed" | "crashed"): ExitCode {
  switch (outcome) {
    case "committed":
    case "nothing-to-do":
      return EXIT.ok;
    case "refused":
    case "failed":
      return EXIT.failed;
    case "crashed":
      return EXIT.bug;
  }
}

/** The exit code for an error that reached the CLI. */
export function exitCodeOfError(error: unknown): ExitCode {
  return isBug(error) ? EXIT.bug : EXIT.failed;
}
