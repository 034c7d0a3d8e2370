// `runner log [--json]`: the iterations of the current run, from the branch's loop commits and, where
// present, the local iteration logs (durations, the agent's usage, its own error, a limit it met):
// number, node, kind, agent status, guard outcome, attempts, duration, tokens, cost, summary; the
// run's usage summed at the end.
import { existsSync } from "node:fs";
import path from "node:path";
import { GitRepo } from "../../adapters/git.js";
import { readIterationMeta } from "../../adapters/iteration-usage.js";
import { readOptional } from "../../adapters/project-files.js";
import { addUsage, describeUsage, formatCost, shortCount, usageFromMeta, type UsageTotals } from "../../core/agent-usage.js";
import { eventsFile, iterationDir } from "../../core/layout.js";
import type { Highlight } from "../../diagram/render.js";
import { loopRecords, type LoopRecord } from "../../core/loop-history.js";
import { loopSubjectPattern, runIdFromBranch, runIdProblem } from "../../core/run-id.js";
import { RefusalError, UsageError } from "../../errors.js";
import type { GlobalArgs } from "../command-table.js";
import { printJson, printLine } from "../output.js";
import { findProjectRoot } from "../repo.js";

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
}

export async function readRunLog(root: string, runIdOption: string | undefined): Promise<{ runId: string; entries: LogEntry[] }> {
  if (!existsSync(path.join(root, ".git"))) throw new RefusalError(`${root} is not the top folder of a git repository; there is no run to show.`);
  const git = new GitRepo(root);
  const status = await git.status();
  const runId = runIdOption ?? runIdFromBranch(status.branch);
  if (runId === undefined) {
    throw new RefusalError(`Branch ${status.branch ?? "(detached)"} is not a runner/<run-id> branch; check out a run branch or pass --run-id.`);
  }
  if (status.head === undefined) return { runId, entries: [] };
  const commits = await git.loopCommits(loopSubjectPattern(runId));
  const records = loopRecords(commits, runId).reverse();
  const entries = await Promise.all(records.map((record) => toEntry(root, runId, record)));
  return { runId, entries };
}

async function toEntry(root: string, runId: string, record: LoopRecord): Promise<LogEntry> {
  const subject = record.subject;
  const meta = await readIterationMeta(root, runId, subject.iteration);
  const durations = object(meta?.durations);
  const executor = object(meta?.executor);
  const limit = object(meta?.limit);
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
  };
}

function object(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** The run's usage: the sum over the iterations that recorded one. */
export function runUsage(entries: readonly LogEntry[]): UsageTotals | undefined {
  return entries.reduce<UsageTotals | undefined>((sum, entry) => addUsage(sum, entry.usage ?? undefined), undefined);
}

/** One field of an entry as `runner log --iteration N` prints it. */
function fieldText(key: string, value: LogEntry[keyof LogEntry]): string {
  if (value === null) return "-";
  if (key === "usage") return describeUsage(value as UsageTotals);
  if (key === "limit") {
    const limit = value as NonNullable<LogEntry["limit"]>;
    return `${limit.kind} limit${limit.resets_at ? `, resets at ${limit.resets_at}` : ""}: ${limit.message}`;
  }
  return String(value);
}

export async function run(
  argv: GlobalArgs & { json?: boolean; runId?: string; iteration?: number; diagram?: boolean; format?: "dot" | "svg"; output?: string },
): Promise<number> {
  if (argv.runId !== undefined) {
    const problem = runIdProblem(argv.runId);
    if (problem) throw new UsageError(`${problem[0]!.toUpperCase()}${problem.slice(1)}.`);
  }
  const root = findProjectRoot(argv.C);
  const { runId, entries } = await readRunLog(root, argv.runId);
  if (argv.diagram) {
    if (argv.iteration === undefined) throw new UsageError("--diagram needs --iteration N: the iteration whose path to highlight.");
    const highlight = await iterationPath(root, runId, argv.iteration);
    const { renderMachine, emit } = await import("./diagram.js");
    await emit(await renderMachine(argv.format ?? "dot", highlight), argv.output);
    return 0;
  }
  if (argv.iteration !== undefined) {
    const entry = entries.find((e) => e.iteration === argv.iteration);
    if (!entry) throw new UsageError(`Run ${runId} has no iteration ${argv.iteration}; \`runner log\` lists them.`);
    if (argv.json) printJson(entry);
    else for (const [key, value] of Object.entries(entry)) printLine(`${key}: ${fieldText(key, value as LogEntry[keyof LogEntry])}`);
    return 0;
  }
  const usage = runUsage(entries);
  if (argv.json) {
    printJson({ run_id: runId, iterations: entries, usage: usage ?? null });
    return 0;
  }
  if (entries.length === 0) {
    printLine(`run ${runId}: no iterations yet (\`runner step\` makes the first).`);
    return 0;
  }
  printLine(`run ${runId}: ${entries.length} iteration${entries.length === 1 ? "" : "s"}`);
  const rows = entries.map((e) => [
    String(e.iteration),
    e.node_id ?? "(repair)",
    e.kind,
    e.runner_error ? "error" : (e.agent_status ?? "-"),
    e.guard_outcome,
    e.attempts ?? "-",
    e.duration_ms === null ? "-" : `${(e.duration_ms / 1000).toFixed(1)}s`,
    e.usage ? `${shortCount(e.usage.input_tokens)}/${shortCount(e.usage.output_tokens)}` : "-",
    e.usage?.cost_usd != null ? formatCost(e.usage.cost_usd) : "-",
    oneLine(e.runner_error ?? e.summary),
  ]);
  const header = ["iter", "node", "kind", "status", "guard", "attempts", "time", "tokens in/out", "cost", "summary"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const format = (row: string[]) =>
    row.map((cell, i) => (i === row.length - 1 ? cell : i === 0 ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!))).join("  ");
  printLine(format(header));
  for (const row of rows) printLine(format(row));
  if (usage) printLine(`usage: ${describeUsage(usage)}`);
  return 0;
}

/** The states and transitions one iteration took, from its local meta.json and events.jsonl. */
async function iterationPath(root: string, runId: string, iteration: number): Promise<Highlight> {
  const metaText = await readOptional(path.join(root, ...`${iterationDir(runId, iteration)}/meta.json`.split("/")));
  if (metaText === undefined) {
    throw new RefusalError(`No local log for iteration ${iteration} of run ${runId} (.runner/iterations/ is local to the machine that ran it); the path cannot be shown here.`);
  }
  const meta = JSON.parse(metaText) as { path?: string[] };
  const eventsText = (await readOptional(path.join(root, ...eventsFile(runId).split("/")))) ?? "";
  const transitions = eventsText
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as { iteration: number; from: string; event: string; to: string })
    .filter((event) => event.iteration === iteration);
  return { states: meta.path ?? [], transitions };
}

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}
