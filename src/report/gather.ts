// Gathers a run into the report's model: its loop commits (subjects, summaries, trailers), the time of
// each (its diff is read as the page is written: iterationDiffs), the tree at its newest commit, the audit of its history, the lines it added to
// questions.md and assumptions.md — all from git, so a fresh clone has them — and, where the
// machine that ran it kept them, the local iteration logs (durations, path, guard output, usage).
import path from "node:path";
import { GitRepo } from "../adapters/git/git.js";
import { readOptional } from "../adapters/files/project-files.js";
import { readAgentFile, readSmallAgentFile } from "../adapters/files/safe-files.js";
import { META_MAX_BYTES } from "../adapters/records/iteration-usage.js";
import { runBase, startAuditThread, type RunBase } from "../adapters/audit/run-audit.js";
import type { AuditReport } from "../core/audit/audit.js";
import { acceptedTree } from "../adapters/audit/run-trees.js";
import { checkTreeText } from "../adapters/files/tree-store.js";
import { eventsFile, iterationDir, LAYOUT } from "../core/base/layout.js";
import { leftTreeInvalid, loopRecords, testsOf, type LoopRecord } from "../core/commit/loop-history.js";
import { formatCommitSubject } from "../core/commit/commit-message.js";
import { resolveRun } from "../adapters/audit/resolve-run.js";
import { walkTree, type TaskTree } from "../core/tree/tree.js";
import { RefusalError } from "../errors.js";
import { boundedDiff, parseAddedLines, parseShowDiffs, RECORD } from "./git-text.js";
import { localLogFrom, parseEvents, type EventLine } from "./local-log.js";
import { guessTarget, mergeCommands } from "./merge.js";
import type { AuditResult, IterationDiff, LocalLog, NoteAddition, Report, ReportIteration } from "./model.js";
import { iterationOutcome, reportTree, runOutcome, totalsOf } from "./summarize.js";

const NOTE_FILES = { [LAYOUT.questions]: "questions", [LAYOUT.assumptions]: "assumptions" } as const;

/**
 * The ref a run is read from: the checked-out run branch, else the local `runner/<id>` branch, else a
 * remote-tracking one (a fresh clone), else HEAD.
 */

/** Commits per `git show` process (their ids are its arguments: 2,000 are 82 KB, 130 KB with SHA-256 ids, far below the kernel's limit on a command line). */
const SHOW_BATCH = 2000;

/**
 * Each iteration's files and bounded patch, the tree file left out (the report shows the tree
 * itself), in the report's order: read from `git show` as git prints them, one commit at a time, so
 * the patches of a long run are never held together (`runner report` writes each as it comes).
 */
export async function* iterationDiffs(root: string, iterations: readonly Pick<ReportIteration, "commit">[]): AsyncGenerator<IterationDiff> {
  const git = new GitRepo(root);
  for (let from = 0; from < iterations.length; from += SHOW_BATCH) {
    const batch = iterations.slice(from, from + SHOW_BATCH).map((it) => it.commit);
    const records = git.streamRecords(
      [
        "-c",
        "core.quotePath=false",
        "show",
        "--no-color",
        "--no-ext-diff",
        "--no-renames",
        `--format=${RECORD}%H`,
        "--numstat",
        "-p",
        ...batch,
        "--",
        ".",
        `:(exclude)${LAYOUT.tree}`,
      ],
      RECORD,
    );
    // A commit whose change the pathspec left empty prints nothing: its diff is empty.
    let next = await records.next();
    for (const sha of batch) {
      const parsed = next.done ? undefined : parseShowDiffs(next.value).get(sha);
      if (parsed) next = await records.next();
      yield boundedDiff(parsed?.files ?? [], parsed?.patch ?? "");
    }
    await records.return(undefined);
  }
}

/**
 * The tree at the run's newest commit, or the one the runner last accepted when that commit left it
 * invalid; for a run without iterations yet, the tree at `tip`.
 */
async function finalTree(git: GitRepo, records: readonly LoopRecord[], tip: string): Promise<{ tree?: TaskTree; note?: string }> {
  const newest = records[0];
  if (!newest) {
    const load = checkTreeText((await git.showFile(tip, LAYOUT.tree)) ?? "");
    return load.ok ? { tree: load.tree } : {};
  }
  if (leftTreeInvalid(newest)) {
    const tree = await acceptedTree(git, records);
    return { tree, note: `Iteration ${newest.subject.iteration} left the tree invalid; shown is the tree the runner last accepted.` };
  }
  const text = await git.showFile(newest.sha, LAYOUT.tree);
  const load = text === undefined ? undefined : checkTreeText(text);
  if (load?.ok) return { tree: load.tree };
  return {
    note: `The tree at iteration ${newest.subject.iteration} does not load (${load && !load.ok ? (load.problems[0]?.message ?? "invalid") : "missing"}).`,
  };
}

async function readNotes(git: GitRepo, base: string, tip: string, iterationOf: Map<string, number>): Promise<NoteAddition[]> {
  const out = await git.raw([
    "-c",
    "core.quotePath=false",
    "log",
    "--first-parent",
    "--reverse",
    "--no-color",
    "--no-ext-diff",
    "-p",
    "--unified=0",
    `--format=${RECORD}%H`,
    `${base}..${tip}`,
    "--",
    ...Object.keys(NOTE_FILES),
  ]);
  return parseAddedLines(out)
    .filter((added) => added.file in NOTE_FILES)
    .map((added) => ({
      file: NOTE_FILES[added.file as keyof typeof NOTE_FILES],
      commit: added.commit,
      iteration: iterationOf.get(added.commit),
      lines: added.lines,
    }));
}

/**
 * One iteration's local log, read at once (a long run has thousands of small files, each costing
 * more through the thread pool than to read) and as the agent's files are read: it can write there,
 * so never through a link, from a FIFO, or meta.json beyond its bound.
 */
function readLocalLog(root: string, runId: string, record: LoopRecord, events: readonly EventLine[]): LocalLog | undefined {
  const dir = path.join(root, ...iterationDir(runId, record.subject.iteration).split("/"));
  const read = (name: string) => {
    const file = readAgentFile(path.join(dir, name));
    return file.kind === "text" ? file.text : undefined;
  };
  const meta = readSmallAgentFile(path.join(dir, "meta.json"), META_MAX_BYTES);
  if (meta === undefined) return undefined;
  return localLogFrom(
    { meta, guardLog: read("guard.log"), executorLog: () => read("executor.log"), events },
    record.sha,
    formatCommitSubject(record.subject),
  );
}

/** The iterations' local logs (one open at a time). */
async function readLocalLogs(
  root: string,
  runId: string,
  records: readonly LoopRecord[],
  events: Map<number, EventLine[]>,
): Promise<(LocalLog | undefined)[]> {
  return records.map((record) => readLocalLog(root, runId, record, events.get(record.subject.iteration) ?? []));
}

function toIteration(record: LoopRecord, committedAt: string | undefined, local: LocalLog | undefined, titles: Map<string, string>): ReportIteration {
  const subject = record.subject;
  const attempts = /^([0-9]+)\/([0-9]+)$/.exec(record.trailers.attempts ?? "");
  const it: ReportIteration = {
    iteration: subject.iteration,
    commit: record.sha,
    kind: subject.kind,
    guard: subject.kind === "repair" ? "skipped" : subject.guard,
    outcome: "other",
    summary: record.summary,
    treeLeftInvalid: leftTreeInvalid(record),
  };
  if (subject.kind !== "repair") {
    it.nodeId = subject.nodeId;
    const title = titles.get(subject.nodeId);
    if (title !== undefined) it.nodeTitle = title;
  }
  if (committedAt !== undefined) it.committedAt = committedAt;
  if (record.trailers.status !== undefined) it.agentStatus = record.trailers.status;
  if (attempts) it.attempts = { after: Number(attempts[1]), max: Number(attempts[2]) };
  // The runner's commit says what failed (its body in full, else the trailer's line); a local
  // meta.json is in the agent's reach and only adds times and paths.
  const failure = record.failure ?? record.trailers.failure;
  if (failure !== undefined) it.failure = failure;
  if (record.trailers.error !== undefined) it.runnerError = record.trailers.error;
  const tests = testsOf(record);
  if (tests.length > 0) it.testsChanged = tests;
  if (local) it.local = local;
  it.outcome = iterationOutcome(it);
  return it;
}

/**
 * The run's report. `meanwhile`: work on the iterations (the page's articles) done while the run is
 * audited on a thread of its own — everything but the outcome and the audit is known by then.
 */
export async function gatherReport(
  root: string,
  runIdOption: string | undefined,
  generatedAt: string,
  meanwhile?: (runId: string, iterations: readonly ReportIteration[]) => Promise<void>,
): Promise<Report> {
  // The audit's thread loads while the run is resolved here, once; it is then given the run.
  const thread = startAuditThread(root);
  let auditing: Promise<AuditReport | undefined> | undefined;
  try {
    const { git, runId, ref, tip, loopCommits } = await resolveRun(root, runIdOption, { times: true });
    if (tip === undefined) throw new RefusalError(`There is no commit to read run ${runId} from (${ref} does not name one).`);
    const records = loopRecords(loopCommits, runId); // newest first
    const first = records.at(-1);
    const start = first ? await runBase(git, first) : undefined;
    if (first !== undefined && start !== undefined) {
      auditing = thread.audit({ runId, tip, first: first.sha, start });
      auditing.catch(() => undefined); // (awaited once the rest is gathered)
    }
    // (each commit's time came with its message: no `git show` of a thousand commits for them)
    const times = new Map(loopCommits.flatMap((commit) => (commit.committedAt ? [[commit.sha, commit.committedAt] as const] : [])));
    return await gatherRun(root, { git, runId, ref, tip, times }, records, start, generatedAt, meanwhile, auditing ?? Promise.resolve(undefined));
  } finally {
    // (a thread not given a run — a refusal, a run without loop commits — is ended; one given a run ends when it answers)
    if (auditing === undefined) thread.end();
  }
}

async function gatherRun(
  root: string,
  { git, runId, ref, tip, times }: { git: GitRepo; runId: string; ref: string; tip: string; times: ReadonlyMap<string, string> },
  records: LoopRecord[],
  start: RunBase | undefined,
  generatedAt: string,
  meanwhile: ((runId: string, iterations: readonly ReportIteration[]) => Promise<void>) | undefined,
  auditing: Promise<AuditReport | undefined>,
): Promise<Report> {
  const oldestFirst = [...records].reverse();
  const base = start?.sha;
  const iterationOf = new Map(oldestFirst.map((r) => [r.sha, r.subject.iteration]));
  const eventsText = await readOptional(path.join(root, ...eventsFile(runId).split("/"))).catch(() => undefined);
  const events = new Map<number, EventLine[]>();
  for (const event of eventsText === undefined ? [] : parseEvents(eventsText)) {
    const list = events.get(event.iteration);
    if (list) list.push(event);
    else events.set(event.iteration, [event]);
  }

  const [tree, notes, locals, holders] = await Promise.all([
    finalTree(git, records, tip),
    base ? readNotes(git, base, tip, iterationOf) : Promise.resolve([]),
    readLocalLogs(root, runId, oldestFirst, events),
    base
      ? git.raw(["for-each-ref", "--format=%(refname:short)", "--contains", base, "refs/heads", "refs/remotes"]).catch(() => "")
      : Promise.resolve(""),
  ]);

  const titles = new Map(tree?.tree ? [...walkTree(tree.tree)].map(({ node }) => [node.id, node.title] as const) : []);
  const iterations = oldestFirst.map((record, i) => toIteration(record, times.get(record.sha), locals[i], titles));
  const [audit] = await Promise.all([auditing, meanwhile?.(runId, iterations)]);
  const treeRoot = tree?.tree ? reportTree(tree.tree, iterations) : undefined;
  const auditResult: AuditResult | undefined = audit && {
    clean: audit.violations.length === 0,
    violations: audit.violations.map((v) =>
      v.iteration === undefined ? { commit: v.sha, message: v.message } : { commit: v.sha, iteration: v.iteration, message: v.message },
    ),
    ...(audit.personEdits.length > 0
      ? {
          personEdits: audit.personEdits.map((edit) => ({
            commit: edit.sha,
            subject: edit.subject,
            made: edit.made,
            ...(edit.author !== undefined ? { author: edit.author } : {}),
            valid: edit.problems.length === 0,
          })),
        }
      : {}),
  };
  const target = guessTarget(holders.split("\n").filter(Boolean), `runner/${runId}`);
  const report: Report = {
    runId,
    tip,
    generatedAt,
    localLogs: locals.filter((l) => l !== undefined).length,
    outcome: runOutcome(iterations, treeRoot, auditResult),
    totals: totalsOf(iterations, treeRoot),
    iterations,
    notes,
    merge: { ref, target: target ?? base?.slice(0, 12) ?? "HEAD", commands: mergeCommands(ref, runId, target, base) },
  };
  if (base !== undefined) report.base = base;
  if (treeRoot || tree?.note) report.tree = { ...(treeRoot ? { root: treeRoot } : {}), ...(tree?.note ? { note: tree.note } : {}) };
  if (auditResult) report.audit = auditResult;
  return report;
}
