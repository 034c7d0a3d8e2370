// The run's history as the branch records it: loop commits (subject + body + trailers). The runner
// reads it to number iterations, count repairs, and give the agent its node's earlier summaries.
import type { IterationFacts } from "./iteration-outcome.js";
import type { AgentStatus } from "../tree/state-update.js";
import { formatCommitSubject, parseCommitSubject, splitTrailers, trailerRecord, type CommitSubject } from "./commit-message.js";
import { clip, oneLine, safeText, truncateForAgent } from "../base/text-limits.js";

export interface LoopRecord {
  sha: string;
  subject: CommitSubject;
  summary: string;
  trailers: Record<string, string>;
  /** The failure the runner told the next iteration, in full (bounded), when there was one. */
  failure?: string;
}

export interface CommitDetails {
  summary: string;
  status?: AgentStatus;
  attempts?: { after: number; max: number };
  runnerError?: string;
  /** What the next iteration is told (CONTRACT §9-bounded): its first line becomes the Runner-Failure trailer, the whole of it a section of the body. */
  failure?: string;
  /** What the agent did to git itself, in one line (Runner-Git). */
  gitNote?: string;
  /** The runner did not accept the tree the iteration commits (left as the agent wrote it, for a repair). */
  treeLeftInvalid?: boolean;
  /** Test files the commit changes (Runner-Tests). */
  tests?: readonly string[];
  /** The run's first loop commit: the commit the run began at (Runner-Start), which audit judges every commit after. */
  runStart?: string;
  /** Plan-finished leaves the re-check's green guard passed besides its own (Runner-Rechecked). */
  rechecked?: readonly string[];
}

/** The heading of the failure section of a loop commit's body; its lines follow, indented by four spaces. */
export const FAILURE_HEADING = "Failure (told to the next iteration):";

/** The trailer value (`Runner-Tree: invalid`) of an iteration that committed a tree the runner did not accept. */
export const TREE_LEFT_INVALID = "invalid";

/** Whether a loop commit holds a tree the runner did not accept (see CommitDetails.treeLeftInvalid). */
export function leftTreeInvalid(record: LoopRecord): boolean {
  return record.trailers.tree === TREE_LEFT_INVALID;
}

const SUMMARY_LIMIT = 2000;

/** The agent's summary as the runner keeps it (commit message, meta.json): at most SUMMARY_LIMIT characters; output.json keeps it whole. */
export function keptSummary(summary: string): string {
  const trimmed = summary.trim();
  return trimmed.length <= SUMMARY_LIMIT ? trimmed : `${clip(trimmed, SUMMARY_LIMIT - 1)}…`;
}

/** The full commit message: the CONTRACT §7 subject, the agent's summary, then Runner-* trailers; free text made safe by safeText. */
export function formatCommitMessage(subject: CommitSubject, given: CommitDetails): string {
  // Everything but the subject may hold what the agent or the guard printed: made safe first (a NUL byte is refused by git).
  const details: CommitDetails = {
    ...given,
    summary: safeText(keptSummary(given.summary)),
    ...(given.runnerError !== undefined ? { runnerError: safeText(given.runnerError) } : {}),
    ...(given.failure !== undefined ? { failure: safeText(given.failure) } : {}),
    ...(given.gitNote !== undefined ? { gitNote: safeText(given.gitNote) } : {}),
  };
  const summary = details.summary.trim();
  const trailers: string[] = [];
  if (details.status) trailers.push(`Runner-Status: ${details.status}`);
  if (details.attempts) trailers.push(`Runner-Attempts: ${details.attempts.after}/${details.attempts.max}`);
  if (details.runnerError) trailers.push(`Runner-Error: ${oneLine(details.runnerError)}`);
  const failure = details.failure?.trim();
  if (failure) trailers.push(`Runner-Failure: ${oneLine(failure.split("\n")[0]!)}`);
  if (details.gitNote) trailers.push(`Runner-Git: ${oneLine(details.gitNote, 600)}`);
  if (details.treeLeftInvalid) trailers.push(`Runner-Tree: ${TREE_LEFT_INVALID}`);
  if (details.tests && details.tests.length > 0) trailers.push(`Runner-Tests: ${testsTrailer(details.tests)}`);
  if (details.runStart) trailers.push(`Runner-Start: ${details.runStart}`);
  if (details.rechecked && details.rechecked.length > 0) trailers.push(`Runner-Rechecked: ${details.rechecked.join(", ")}`);
  const parts = [formatCommitSubject(subject)];
  if (summary) parts.push(keptSummary(summary));
  // Indented, so that blank lines of the guard's output do not end the section.
  if (failure)
    parts.push(
      `${FAILURE_HEADING}\n${truncateForAgent(failure)
        .split("\n")
        .map((line) => `    ${line}`.trimEnd() || "    ")
        .join("\n")}`,
    );
  if (trailers.length > 0) parts.push(trailers.join("\n"));
  return `${parts.join("\n\n")}\n`;
}

/** The test files, comma-separated, at most about 600 characters: "a.test.ts, b.test.ts and 12 more". */
function testsTrailer(tests: readonly string[]): string {
  const shown: string[] = [];
  let length = 0;
  for (const file of tests) {
    const name = oneLine(file, 200);
    if (shown.length > 0 && length + name.length > 600) break;
    shown.push(name);
    length += name.length + 2;
  }
  const more = tests.length - shown.length;
  return `${shown.join(", ")}${more > 0 ? ` and ${more} more` : ""}`;
}

/** The facts of a loop commit, as src/core/commit/iteration-outcome.ts names and counts them. */
export function commitFacts(record: LoopRecord): IterationFacts {
  const subject = record.subject;
  return {
    kind: subject.kind,
    guard: subject.kind === "repair" ? "skipped" : subject.guard,
    status: record.trailers.status,
    runnerError: record.trailers.error,
    failure: record.trailers.failure,
    treeLeftInvalid: leftTreeInvalid(record),
  };
}

/** The test files a loop commit's Runner-Tests trailer names, "and N more" last when it names fewer than it changed. */
export function testsOf(record: LoopRecord): string[] {
  const value = record.trailers.tests;
  if (value === undefined) return [];
  const more = /^(.*) and ([0-9]+) more$/.exec(value);
  const files = (more ? more[1]! : value).split(", ").filter(Boolean);
  return more ? [...files, `and ${more[2]} more`] : files;
}

/** The plan-finished leaves a re-check's Runner-Rechecked trailer says its green guard passed besides its own node. */
export function recheckedOf(record: LoopRecord): string[] {
  const value = record.trailers.rechecked;
  return value === undefined ? [] : value.split(", ").filter(Boolean);
}

/** The loop records of `runId` among commits (in their order); other commits are left out. */
export function loopRecords(commits: readonly { sha: string; subject: string; body: string }[], runId: string): LoopRecord[] {
  const records: LoopRecord[] = [];
  for (const commit of commits) {
    const record = parseLoopCommit(commit.sha, commit.subject, commit.body, runId);
    if (record) records.push(record);
  }
  return records;
}

/** Parses one commit (subject and body); undefined when the subject is not a loop subject of `runId`. */
export function parseLoopCommit(sha: string, subjectLine: string, body: string, runId: string): LoopRecord | undefined {
  const subject = parseCommitSubject(subjectLine);
  return subject && subject.runId === runId ? loopRecordOf(sha, subject, body) : undefined;
}

/** A loop commit's record from its parsed subject and its body: the summary, the failure section, the trailers. */
export function loopRecordOf(sha: string, subject: CommitSubject, body: string): LoopRecord {
  const split = splitTrailers(body);
  const paragraphs = split.paragraphs;
  const trailers = trailerRecord(split.trailers);
  // The failure section is the runner's only where its trailer says there was a failure; the last one is the runner's.
  let failure: string | undefined;
  const at = trailers.failure === undefined ? -1 : paragraphs.map((p) => p.startsWith(`${FAILURE_HEADING}\n`)).lastIndexOf(true);
  if (at >= 0) {
    failure = paragraphs[at]!.slice(FAILURE_HEADING.length + 1)
      .split("\n")
      .map((line) => line.replace(/^ {4}/, ""))
      .join("\n")
      .trimEnd();
    paragraphs.splice(at, 1);
  }
  return { sha, subject, summary: paragraphs.join("\n\n").trim(), trailers, ...(failure !== undefined ? { failure } : {}) };
}

/** The number the next iteration gets: 1 + this run's loop commits on the branch (CONTRACT §7). */
export function nextIterationNumber(records: readonly LoopRecord[]): number {
  return records.length + 1;
}

/** How many repair steps in a row the branch ends with (records newest first). */
export function trailingRepairs(records: readonly LoopRecord[]): number {
  let count = 0;
  for (const record of records) {
    if (record.subject.kind !== "repair") break;
    count++;
  }
  return count;
}

/** The node of the newest leaf iteration (the one a repair step follows), records newest first. */
export function lastLeafNode(records: readonly LoopRecord[]): string | undefined {
  for (const record of records) if (record.subject.kind !== "repair") return record.subject.nodeId;
  return undefined;
}

/** This node's earlier iterations, oldest first, runner errors left out (seed 002). */
export function nodeRecords(records: readonly LoopRecord[], nodeId: string): LoopRecord[] {
  return records.filter((r) => r.subject.kind !== "repair" && r.subject.nodeId === nodeId && r.trailers.error === undefined).reverse();
}

/** `context/history.md`: this node's earlier summaries, bounded. */
export function renderHistory(records: readonly LoopRecord[], nodeId: string): string {
  const own = nodeRecords(records, nodeId);
  if (own.length === 0) return `No earlier iterations on ${nodeId} in this run.\n`;
  const lines = own.map((record) => {
    const s = record.subject;
    const head =
      s.kind === "repair"
        ? `iteration ${s.iteration}`
        : s.kind === "recheck"
          ? `iteration ${s.iteration} (a person had the guard re-check it, guard=${s.guard})`
          : `iteration ${s.iteration} (${s.kind}, agent said ${record.trailers.status ?? "?"}, guard=${s.guard})`;
    const failure = record.trailers.failure ? `\n  failure: ${record.trailers.failure}` : "";
    return `- ${head}: ${record.summary.replace(/\n/g, "\n  ") || "(no summary)"}${failure}`;
  });
  return truncateForAgent(`# Earlier iterations on ${nodeId}\n\n${lines.join("\n")}\n`);
}

/**
 * The iteration whose failure the next iteration on `nodeId` must hear: the newest of the node's own
 * iterations (runner errors left out) if it failed; but when the run's previous iteration (runner
 * errors and repairs left out) was on an ancestor and failed — `done`/`retry` that added children,
 * which are kept — that one (CONTRACT §7: the reason reaches the next iteration). Records newest first.
 */
export function lastFailureRecord(records: readonly LoopRecord[], nodeId: string, ancestorIds: readonly string[]): LoopRecord | undefined {
  const own = nodeRecords(records, nodeId);
  let latest = own[own.length - 1];
  const previous = records.find((record) => record.subject.kind !== "repair" && record.trailers.error === undefined);
  if (previous && previous.subject.kind !== "repair" && ancestorIds.includes(previous.subject.nodeId) && previous.trailers.failure) latest = previous;
  return latest?.trailers.failure ? latest : undefined;
}

/**
 * `context/failure.md`'s text: that iteration's failure as its commit tells it (the runner's own
 * words in the runner's own commit; never a local log file the agent could have rewritten).
 */
export function lastFailure(records: readonly LoopRecord[], nodeId: string, ancestorIds: readonly string[]): string | undefined {
  const latest = lastFailureRecord(records, nodeId, ancestorIds);
  return latest ? `Iteration ${latest.subject.iteration}: ${latest.failure ?? latest.trailers.failure}\n` : undefined;
}
