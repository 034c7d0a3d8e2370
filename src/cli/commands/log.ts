// `runner log [--json]`: the iterations of the current run, from the branch's loop commits and, where
// present, the local iteration logs (durations, the agent's usage, its own error, a limit it met):
// number, node, kind, agent status, guard outcome, attempts, duration, tokens, cost, summary; the
// run's usage summed at the end; a runner at work in the repository named first. One iteration
// (--iteration N) adds, for a red guard, the last lines of the guard's output: from the commit's
// failure section (so on a fresh clone too) and, where the local log has it, from guard.log.
// readRunLog and readIteration are also `runner mcp`'s log tool.
import { formatDuration } from "../../core/step/durations.js";
import { existsSync } from "node:fs";
import path from "node:path";
import { readIterationMeta } from "../../adapters/records/iteration-usage.js";
import { resolveRun, type ResolvedRun } from "../../adapters/audit/resolve-run.js";
import { parseEvents } from "../../report/local-log.js";
import { readOptional } from "../../adapters/files/project-files.js";
import { readSnapshots, type Snapshot } from "../../adapters/records/tree-snapshots.js";
import { addUsage, describeUsage, formatCost, shortCount, usageFromMeta, type UsageTotals } from "../../core/agent/agent-usage.js";
import { eventsFile, iterationDir } from "../../core/base/layout.js";
import { oneLine } from "../../core/base/text-limits.js";
import type { Highlight } from "../../diagram/render.js";
import {
  countFailures,
  describeFailures,
  failureKindOf,
  outcomeLabel,
  type FailureKind,
  type FailureCounts,
} from "../../core/commit/iteration-outcome.js";
import { commitFacts, loopRecords, recheckedOf, testsOf, type LoopRecord } from "../../core/commit/loop-history.js";
import { personEditsAmong, type PersonEditEntry } from "../../core/audit/person-edit.js";
import { runBase } from "../../adapters/audit/run-audit.js";
import { RefusalError, UsageError } from "../../errors.js";
import type { GlobalArgs } from "../command-table.js";
import { failingLines, guardOutputOf } from "../guard-tail.js";
import { printJson, printLine, printText } from "../output.js";
import { findProjectRoot } from "../repo.js";
import { describeRunInProgress, runInProgress, type RunInProgress } from "../run-in-progress.js";
import { styleFor, type Style } from "../style.js";
import { jsonObject } from "../../core/base/json-object.js";

export interface LogEntry {
  iteration: number;
  commit: string;
  node_id: string | null;
  kind: string;
  agent_status: string | null;
  guard_outcome: string;
  attempts: string | null;
  duration_ms: number | null;
  summary: string;
  failure: string | null;
  runner_error: string | null;
  /** From the local meta.json: the agent's tokens and cost. */
  usage: UsageTotals | null;
  /** The agent's own error message (also when the runner error names it). */
  agent_error: string | null;
  /** A rate or usage limit the agent met. */
  limit: { kind: string; resets_at: string | null; message: string } | null;
  /** The agent's session (Codex thread id, Claude session id). */
  session_id: string | null;
  /** The whole failure the next iteration was told, as the commit's failure section has it (bounded, CONTRACT §9). */
  failure_text: string | null;
  /** For a red guard: the last lines of its output as the failure quotes it. */
  guard_output_tail: string[];
  /** The iteration's local guard.log (repository-relative) and its last lines, when this machine ran it. */
  guard_log: { path: string; tail: string[] } | null;
  /** Where its tree snapshots are (`runner log --iteration N --tree before|after` prints them): a commit's tree file, or the local log's copy. */
  tree_before?: string | null;
  tree_after?: string | null;
  /** Test files the iteration changed (its commit's Runner-Tests; "and N more" where it lists fewer). */
  tests_changed: string[];
  /** What it came to in words: `agent said done`, `runner error (output parse)`, `interrupted`, … (src/core/commit/iteration-outcome.ts). */
  outcome: string;
  /** Why it counts as failed (`guard`, `retry`, `runner_error`, `invalid_tree`, `other`), or null. */
  failed: FailureKind | null;
}

/** How many of the guard's last lines one iteration shows. */
const GUARD_LINES = 10;

async function readRun(root: string, runIdOption: string | undefined): Promise<ResolvedRun> {
  if (!existsSync(path.join(root, ".git"))) throw new RefusalError(`${root} is not the top folder of a git repository; there is no run to show.`);
  return resolveRun(root, runIdOption);
}

/**
 * The run's iterations, oldest first, each with what its local log adds (given `nodeId`, only the
 * iterations on that node), and a person's edits among them.
 */
export async function runLog(
  root: string,
  run: ResolvedRun,
  nodeId?: string,
): Promise<{ runId: string; entries: LogEntry[]; personEdits: PersonEditEntry[] }> {
  const records = loopRecords(run.loopCommits, run.runId).reverse();
  // (a node a re-check passed with its own, as a plan-finished leaf, was judged by that iteration too)
  const shown =
    nodeId === undefined
      ? records
      : records.filter((record) => record.subject.kind !== "repair" && (record.subject.nodeId === nodeId || recheckedOf(record).includes(nodeId)));
  const [entries, personEdits] = await Promise.all([
    Promise.all(shown.map((record) => toEntry(root, run.runId, record))),
    runPersonEdits(run, records),
  ]);
  return { runId: run.runId, entries, personEdits };
}

/** A person's edits between the run's first loop commit's parent and the run's tip, in history order. */
async function runPersonEdits(run: ResolvedRun, records: readonly LoopRecord[]): Promise<PersonEditEntry[]> {
  const first = records[0];
  if (!first) return [];
  const base = (await runBase(run.git, first))?.sha;
  if (base === undefined) return [];
  const commits = [];
  for await (const commit of run.git.streamCommitsSince(base, run.tip)) commits.push(commit);
  return personEditsAmong(commits, run.runId);
}

/** The last lines of the local guard.log of an iteration, when the local log is this commit's (a run id used twice has another's). */
async function guardLogTail(
  root: string,
  runId: string,
  record: LoopRecord,
  meta: Record<string, unknown> | undefined,
): Promise<LogEntry["guard_log"]> {
  if (!meta || (typeof meta.commit === "string" && meta.commit !== record.sha)) return null;
  const file = `${iterationDir(runId, record.subject.iteration)}/guard.log`;
  const text = await readOptional(path.join(root, ...file.split("/"))).catch(() => undefined);
  if (text === undefined) return null;
  // The runner's own closing note (bytes per stream) is not the guard's.
  const lines = text.split("\n").filter((line) => !line.startsWith("[runner] "));
  return { path: file, tail: failingLines(lines.join("\n"), GUARD_LINES) };
}

async function toEntry(root: string, runId: string, record: LoopRecord): Promise<LogEntry> {
  const subject = record.subject;
  const meta = await readIterationMeta(root, runId, subject.iteration, record.sha);
  const guardOutput = guardOutputOf(record.failure);
  const guardFailed = guardOutput !== undefined || (subject.kind !== "repair" && subject.guard === "fail");
  const durations = object(meta?.durations);
  const executor = object(meta?.executor);
  const limit = object(meta?.limit);
  const facts = commitFacts(record);
  return {
    iteration: subject.iteration,
    commit: record.sha,
    node_id: subject.kind === "repair" ? null : subject.nodeId,
    kind: subject.kind,
    agent_status: record.trailers.status ?? null,
    guard_outcome: subject.kind === "repair" ? "skipped" : subject.guard,
    attempts: record.trailers.attempts ?? null,
    duration_ms: typeof durations?.total_ms === "number" ? durations.total_ms : null,
    summary: record.summary,
    failure: record.trailers.failure ?? null,
    runner_error: record.trailers.error ?? null,
    usage: usageFromMeta(meta?.usage) ?? null,
    agent_error: typeof executor?.error === "string" ? executor.error : null,
    limit:
      limit && (limit.kind === "rate" || limit.kind === "usage") && typeof limit.message === "string"
        ? { kind: limit.kind, resets_at: typeof limit.resets_at === "string" ? limit.resets_at : null, message: limit.message }
        : null,
    session_id: typeof executor?.session_id === "string" ? executor.session_id : null,
    failure_text: record.failure ?? null,
    guard_output_tail: guardOutput === undefined ? [] : failingLines(guardOutput, GUARD_LINES),
    guard_log: guardFailed ? await guardLogTail(root, runId, record, meta) : null,
    tests_changed: testsOf(record),
    outcome: outcomeLabel(facts),
    failed: failureKindOf(facts) ?? null,
  };
}

const object = jsonObject;

/** The run's usage: the sum over the iterations that recorded one. */
function runUsage(entries: readonly LogEntry[]): UsageTotals | undefined {
  return entries.reduce<UsageTotals | undefined>((sum, entry) => addUsage(sum, entry.usage ?? undefined), undefined);
}

/** The fields `runner log --iteration N` prints as sections of their own (after the `key: value` lines), or not at all. */
const SECTION_FIELDS = new Set(["failure_text", "guard_output_tail", "guard_log"]);

/** The last lines of a red guard's output: from the commit, then guard.log's where they say more. */
function guardSections(entry: LogEntry, style: Style): string[] {
  const lines: string[] = [];
  const indent = (text: string) => style.dim(`    ${text}`);
  if (entry.guard_output_tail.length > 0) {
    lines.push("guard output (last lines, from the commit):", ...entry.guard_output_tail.map(indent));
  }
  const log = entry.guard_log;
  if (log && log.tail.length > 0) {
    if (log.tail.join("\n") === entry.guard_output_tail.join("\n")) lines.push(style.dim(`(the same as the last lines of ${log.path})`));
    else lines.push(`guard output (last lines of ${log.path}):`, ...log.tail.map(indent));
  }
  return lines;
}

/** One field of an entry as `runner log --iteration N` prints it. */
function fieldText(key: string, value: LogEntry[keyof LogEntry]): string {
  if (value === null) return "-";
  if (key === "tests_changed") return (value as string[]).length === 0 ? "-" : (value as string[]).join(", ");
  if (key === "usage") return describeUsage(value as UsageTotals);
  if (key === "limit") {
    const limit = value as NonNullable<LogEntry["limit"]>;
    return `${limit.kind} limit${limit.resets_at ? `, resets at ${limit.resets_at}` : ""}: ${limit.message}`;
  }
  return String(value);
}

/** `runner log --json` (and `runner mcp`'s log tool without an iteration). */
export interface RunLogReport {
  run_id: string;
  iterations: LogEntry[];
  /** The failed iterations by kind (src/core/commit/iteration-outcome.ts). */
  failures: FailureCounts;
  person_edits: PersonEditEntry[];
  usage: UsageTotals | null;
  in_progress: RunInProgress | null;
}

/** The iterations of the run of the repository at `folder` (the current one, or `runIdOption`). */
export async function readRunLog(folder: string, runIdOption: string | undefined): Promise<RunLogReport> {
  const root = findProjectRoot(folder);
  const [resolved, working] = await Promise.all([readRun(root, runIdOption), runInProgress(root)]);
  const { entries, personEdits } = await runLog(root, resolved);
  return {
    run_id: resolved.runId,
    iterations: entries,
    failures: countFailures(entries.map((entry) => entry.failed)),
    person_edits: personEdits,
    usage: runUsage(entries) ?? null,
    in_progress: working ?? null,
  };
}

/** One iteration in full (`runner log --iteration N --json`, `runner mcp`'s log tool with an iteration), and its tree snapshots. */
export async function readIteration(
  folder: string,
  runIdOption: string | undefined,
  iteration: number,
): Promise<{ runId: string; entry: LogEntry; before: Snapshot | undefined; after: Snapshot | undefined }> {
  const root = findProjectRoot(folder);
  const resolved = await readRun(root, runIdOption);
  const runId = resolved.runId;
  // (oldest first, as `runner log` lists them)
  const record = loopRecords(resolved.loopCommits, runId)
    .reverse()
    .find((r) => r.subject.iteration === iteration);
  if (!record) throw new UsageError(`Run ${runId} has no iteration ${iteration}; \`runner log\` lists them.`);
  const entry = await toEntry(root, runId, record);
  const { before, after } = await readSnapshots(root, resolved.git, runId, entry.iteration);
  entry.tree_before = before?.where ?? null;
  entry.tree_after = after?.where ?? null;
  return { runId, entry, before, after };
}

export async function run(
  argv: GlobalArgs & {
    json?: boolean;
    runId?: string;
    iteration?: number;
    diagram?: boolean;
    tree?: "before" | "after";
    format?: "dot" | "svg";
    output?: string;
  },
): Promise<number> {
  const style = styleFor(process.stdout);
  if (argv.diagram) {
    if (argv.iteration === undefined) throw new UsageError("--diagram needs --iteration N: the iteration whose path to highlight.");
    const root = findProjectRoot(argv.C);
    const { runId } = await readRun(root, argv.runId);
    const highlight = await iterationPath(root, runId, argv.iteration);
    const { renderMachine, emit } = await import("./diagram.js");
    await emit(await renderMachine(argv.format ?? "dot", highlight), argv.output);
    return 0;
  }
  if (argv.tree !== undefined && argv.iteration === undefined) throw new UsageError("--tree needs --iteration N: the iteration whose tree to print.");
  if (argv.iteration !== undefined) {
    const { runId, entry, before, after } = await readIteration(argv.C, argv.runId, argv.iteration);
    if (argv.tree !== undefined) {
      const snapshot = argv.tree === "before" ? before : after;
      if (!snapshot)
        throw new RefusalError(
          `Iteration ${entry.iteration} of run ${runId} has no tree ${argv.tree} snapshot here (.runner/iterations/ is local to the machine that ran it).`,
        );
      printText(await snapshot.text());
      return 0;
    }
    if (argv.json) {
      printJson(entry);
      return 0;
    }
    for (const [key, value] of Object.entries(entry)) {
      if (!SECTION_FIELDS.has(key)) printLine(`${key}: ${fieldText(key, value as LogEntry[keyof LogEntry])}`);
    }
    for (const line of guardSections(entry, style)) printLine(line);
    return 0;
  }
  const report = await readRunLog(argv.C, argv.runId);
  if (argv.json) {
    printJson(report);
    return 0;
  }
  const { run_id: runId, iterations: entries, person_edits: personEdits, usage } = report;
  if (report.in_progress) printLine(style.warning(describeRunInProgress(report.in_progress, Date.now())));
  if (entries.length === 0) {
    printLine(`run ${runId}: no iterations yet (\`runner step\` makes the first).`);
    return 0;
  }
  printLine(`run ${runId}: ${entries.length} iteration${entries.length === 1 ? "" : "s"}, ${describeFailures(report.failures)}`);
  const rows = entries.map((e) => [
    String(e.iteration),
    e.node_id ?? "(repair)",
    // A runner error was not judged: no kind, and its words instead of the retry the runner records for it.
    e.runner_error && e.kind !== "interrupted" ? "-" : e.kind,
    e.runner_error ? e.outcome : (e.agent_status ?? "-"),
    e.guard_outcome,
    e.attempts ?? "-",
    e.duration_ms === null ? "-" : formatDuration(e.duration_ms, "timer"),
    e.usage ? `${shortCount(e.usage.input_tokens)}/${shortCount(e.usage.output_tokens)}` : "-",
    e.usage?.cost_usd != null ? formatCost(e.usage.cost_usd) : "-",
    oneLine(e.runner_error ?? e.summary, 80),
  ]);
  const header = ["iter", "node", "kind", "status", "guard", "attempts", "time", "tokens in/out", "cost", "summary"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const format = (row: string[]) =>
    row.map((cell, i) => (i === row.length - 1 ? cell : i === 0 ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!))).join("  ");
  printLine(style.dim(format(header)));
  for (const [i, row] of rows.entries()) printLine(style.tone(rowTone(entries[i]!), format(row)));
  // A reviewer sees where the agent changed tests (weakened, perhaps), protected or not.
  for (const entry of entries.filter((e) => e.tests_changed.length > 0)) {
    printLine(style.warning(`iteration ${entry.iteration} changed tests: ${entry.tests_changed.join(", ")}`));
  }
  if (usage) printLine(`usage: ${describeUsage(usage)}`);
  if (personEdits.length > 0) {
    printLine(`a person's edits (${personEdits.length}), not iterations:`);
    for (const edit of personEdits)
      printLine(
        `  after iteration ${edit.after_iteration}: ${edit.commit.slice(0, 7)} ${edit.subject} (${edit.made === "hand" ? "by hand, " : ""}by ${edit.author ?? "?"})`,
      );
  }
  return 0;
}

/** The states and transitions one iteration took, from its local meta.json and events.jsonl. */
async function iterationPath(root: string, runId: string, iteration: number): Promise<Highlight> {
  const meta = await readIterationMeta(root, runId, iteration);
  if (meta === undefined) {
    throw new RefusalError(
      `No local log for iteration ${iteration} of run ${runId} (.runner/iterations/ is local to the machine that ran it, and its meta.json must be readable); the path cannot be shown here.`,
    );
  }
  const eventsText = (await readOptional(path.join(root, ...eventsFile(runId).split("/")))) ?? "";
  // (a torn last line, left by a runner killed while appending, is skipped)
  const transitions = parseEvents(eventsText).flatMap((event) =>
    event.iteration === iteration && event.from !== undefined && event.event !== undefined
      ? [{ from: event.from, event: event.event, to: event.to }]
      : [],
  );
  const states = Array.isArray(meta.path) ? meta.path.filter((state): state is string => typeof state === "string") : [];
  return { states, transitions };
}

/** A row's colour: red for a failed iteration, green for a green guard. */
function rowTone(entry: LogEntry): "failed" | "passed" | undefined {
  if (entry.failed) return "failed";
  return entry.guard_outcome === "pass" ? "passed" : undefined;
}
