// The guard's own words in a failure: the text the next iteration is told about a red guard is "The
// guard `…` exited with code N.", then "Its output:" and the output bounded as CONTRACT §9 says
// (src/core/iteration.ts guardFailure). Where a person looks (the live view, `runner log
// --iteration N`, `runner show`), the last lines of that output say what failed.

const OUTPUT_HEADING = "\nIts output:\n";

/** The guard's output as the failure quotes it (bounded), or undefined when the failure is not a red guard's. */
export function guardOutputOf(failure: string | undefined): string | undefined {
  if (failure === undefined || !failure.startsWith("The guard ")) return undefined;
  const at = failure.indexOf(OUTPUT_HEADING);
  if (at < 0) return undefined;
  const output = failure.slice(at + OUTPUT_HEADING.length).replace(/^\n/, "");
  return output.trim() === "" ? undefined : output;
}

/** The last `count` lines of `text` that are not blank, trailing spaces removed. */
export function lastLines(text: string, count: number): string[] {
  const lines = text
    .split(/\r?\n/)
    .map((line) => line.trimEnd())
    .filter((line) => line.trim() !== "");
  return lines.slice(-count);
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
 * A line that says what failed, in the words of common test runners (TAP "not ok", "FAIL", an
 * assertion error, a ✗ mark, "N failed").
 */
const FAILING_LINE = /^\s*(?:not ok\b|FAIL\b|FAILED\b|[✗✖×]\s)|AssertionError|\bError:|\bfailed\b/;

/**
 * The last lines of the guard's output a failure quotes (none when it quotes none); when the first
 * line that says what failed comes before them (a test runner's summary at the end), that line
 * first, then "…".
 */
export function guardTail(failure: string | undefined, count: number): string[] {
  const output = guardOutputOf(failure);
  if (output === undefined) return [];
  const lines = output
    .split(/\r?\n/)
    .map((line) => line.trimEnd())
    .filter((line) => line.trim() !== "");
  const tail = lines.slice(-count);
  const earlier = lines.slice(0, -count).find((line) => FAILING_LINE.test(line));
  return earlier === undefined ? tail : [earlier, "…", ...tail];
}
