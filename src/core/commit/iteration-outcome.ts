// What an iteration came to, in words a person reads in the morning, and what "failed" counts —
// one rule for `runner run`'s summary, `runner log`, `runner show`, `runner status` and the report
// (docs/contract.md §8). A runner error outranks the status the runner records for it: seed 002
// records every runner error as `retry` (guard skipped, attempts unchanged), which is the runner's
// recovery, not something the agent said.

/** The facts of one iteration, from its commit (subject and trailers) or from the step that made it. */
export interface IterationFacts {
  /** The commit subject's kind: decompose, execute, repair, recheck, interrupted. */
  kind: string;
  guard: string;
  /** The recorded status (Runner-Status). */
  status?: string | undefined;
  /** The runner error as the Runner-Error trailer holds it: `<kind>: <message>`. */
  runnerError?: string | undefined;
  /** The failure told to the next iteration (Runner-Failure). */
  failure?: string | undefined;
  /** The commit holds a tree the runner did not accept (Runner-Tree: invalid). */
  treeLeftInvalid?: boolean;
}

/**
 * Why an iteration failed: a runner error (no attempt spent), a tree left invalid, a red guard, the
 * agent's retry (an attempt spent; an answer that broke the contract counts as one), or `other`
 * (a failure told to the next iteration that none of these is: the agent said done but changed
 * nothing outside .runner/).
 */
export type FailureKind = "runner_error" | "invalid_tree" | "guard" | "retry" | "other";

export function failureKindOf(facts: IterationFacts): FailureKind | undefined {
  if (facts.runnerError !== undefined) return "runner_error";
  if (facts.treeLeftInvalid) return "invalid_tree";
  if (facts.guard === "fail") return "guard";
  if (facts.status === "retry") return "retry";
  if (facts.failure !== undefined) return "other";
  return undefined;
}

/** A Runner-Error trailer (`output_parse_error: the output file … is not valid JSON`) split into its kind and message. */
export function splitRunnerError(trailer: string): { kind: string | undefined; message: string } {
  const match = /^([a-z_]+): ([^]*)$/.exec(trailer);
  return match ? { kind: match[1], message: match[2]! } : { kind: undefined, message: trailer };
}

/** A runner error's kind in words (`output_parse_error` → `output parse`). */
const ERROR_WORDS: Record<string, string> = {
  output_parse_error: "output parse",
  executor_timeout: "timeout",
  guard_error: "guard error",
  agent_failed: "agent failed",
  agent_limit: "agent limit",
  other: "other",
};

/**
 * The iteration in a few words: `runner error (output parse)`, `interrupted`, `tree left invalid`,
 * `agent said retry`, … (the guard's outcome is told beside it).
 */
export function outcomeLabel(facts: IterationFacts): string {
  if (facts.runnerError !== undefined) {
    const { kind } = splitRunnerError(facts.runnerError);
    if (facts.kind === "interrupted" || kind === "interrupted" || kind === "runner_stopped") return "interrupted";
    const words = kind === undefined ? undefined : (ERROR_WORDS[kind] ?? kind.replace(/_/g, " "));
    return words === undefined ? "runner error" : `runner error (${words})`;
  }
  if (facts.kind === "repair") return facts.treeLeftInvalid ? "repair left the tree invalid" : "repaired the tree";
  if (facts.kind === "recheck") return "re-checked by a person";
  if (facts.treeLeftInvalid) return `agent said ${facts.status ?? "?"}, tree left invalid`;
  return `agent said ${facts.status ?? "?"}`;
}

export interface FailureCounts {
  total: number;
  guard: number;
  retry: number;
  runner_error: number;
  invalid_tree: number;
  other: number;
}

/** The failures among iterations, given each one's kind of failure (failureKindOf; none: it did not fail). */
export function countFailures(kinds: readonly (FailureKind | null | undefined)[]): FailureCounts {
  const counts: FailureCounts = { total: 0, guard: 0, retry: 0, runner_error: 0, invalid_tree: 0, other: 0 };
  for (const kind of kinds) {
    if (kind === undefined || kind === null) continue;
    counts.total += 1;
    counts[kind] += 1;
  }
  return counts;
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** The kinds of failure that occurred, e.g. ["1 runner error", "2 agent retries"] (in a fixed order). */
export function failureParts(counts: FailureCounts): string[] {
  return [
    counts.guard > 0 ? plural(counts.guard, "red guard", "red guards") : "",
    counts.retry > 0 ? plural(counts.retry, "agent retry", "agent retries") : "",
    counts.runner_error > 0 ? plural(counts.runner_error, "runner error", "runner errors") : "",
    counts.invalid_tree > 0 ? plural(counts.invalid_tree, "tree left invalid", "trees left invalid") : "",
    counts.other > 0 ? plural(counts.other, "other", "other") : "",
  ].filter(Boolean);
}

/** `3 failed (1 runner error, 2 agent retries)`, or `0 failed`. */
export function describeFailures(counts: FailureCounts): string {
  const parts = failureParts(counts);
  return parts.length === 0 ? `${counts.total} failed` : `${counts.total} failed (${parts.join(", ")})`;
}
