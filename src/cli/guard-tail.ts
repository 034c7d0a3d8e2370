// The guard's own words in a failure: the text the next iteration is told about a red guard is "The
// guard `…` exited with code N.", then "Its output:" and the output bounded as CONTRACT §9 says
// (src/core/step/iteration.ts guardFailure). Where a person looks (the live view, `runner log
// --iteration N`, `runner show`), the last lines of that output say what failed.

import { FAILING_LINE } from "../core/base/text-limits.js";

const OUTPUT_HEADING = "\nIts output:\n";

/** The guard's output as the failure quotes it (bounded), or undefined when the failure is not a red guard's. */
export function guardOutputOf(failure: string | undefined): string | undefined {
  if (failure === undefined || !failure.startsWith("The guard ")) return undefined;
  const at = failure.indexOf(OUTPUT_HEADING);
  if (at < 0) return undefined;
  const output = failure.slice(at + OUTPUT_HEADING.length).replace(/^\n/, "");
  return output.trim() === "" ? undefined : output;
}

/** The first `count` lines of `text` that are not blank. */
export function firstLines(text: string, count: number): string[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trimEnd())
    .filter((line) => line.trim() !== "")
    .slice(0, count);
}

/**
 * The last lines of the guard's output a failure quotes (none when it quotes none); when the first
 * line that says what failed comes before them (a test runner's summary at the end), that line
 * first, then "…".
 */
export function guardTail(failure: string | undefined, count: number): string[] {
  const output = guardOutputOf(failure);
  return output === undefined ? [] : failingLines(output, count);
}

/**
 * The lines of a guard's output a person is shown (the live view, `runner log`, `runner show`): the
 * last `count` lines that are not blank, after the first line that says what failed when that comes
 * before them, and "…".
 */
export function failingLines(output: string, count: number): string[] {
  const lines = output
    .split(/\r?\n/)
    .map((line) => line.trimEnd())
    .filter((line) => line.trim() !== "");
  const tail = lines.slice(-count);
  const earlier = lines.slice(0, -count).find((line) => FAILING_LINE.test(line));
  return earlier === undefined ? tail : [earlier, "…", ...tail];
}
