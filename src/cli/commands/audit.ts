// `runner audit`: replays the current run's commits from git history and checks every transition
// against the rules; names the first commit that breaks one (exit 1), or says the run is clean (0).
import { existsSync } from "node:fs";
import path from "node:path";
import { replayPasses } from "../../adapters/replay.js";
import { gitDir, type GitRepo, type LoopCommit } from "../../adapters/git.js";
import { ObjectStore } from "../../adapters/object-store.js";
import { auditHistory, runBase } from "../../adapters/run-audit.js";
import { readRunStarts } from "../../adapters/run-starts.js";
import { repositoryState } from "../../adapters/runner-state.js";
import { loopRecords, type LoopRecord } from "../../core/loop-history.js";
import type { PersonEditFinding } from "../../core/person-edit.js";
import { processEnv } from "../environment.js";
import { RefusalError } from "../../errors.js";
import type { GlobalArgs } from "../command-table.js";
import { resolveRun } from "../../adapters/resolve-run.js";
import { printError, printJson, printLine } from "../output.js";
import { findProjectRoot } from "../repo.js";

export async function run(argv: GlobalArgs & { json?: boolean; runId?: string; replay?: boolean }): Promise<number> {
  const root = findProjectRoot(argv.C);
  if (!existsSync(path.join(root, ".git"))) throw new RefusalError(`${root} is not the top folder of a git repository; there is no run to audit.`);
  const { git, runId, tip, loopCommits: loop } = await resolveRun(root, argv.runId);
  const first = loopRecords(loop.slice(-1), runId)[0];
  const dotGit = await gitDir(root);
  // The repository's object files, read without a git process where they can be (src/adapters/object-store.ts).
  const store = ObjectStore.open(dotGit, (tip?.length ?? 40) / 2);
  try {
    return await audit(argv, git, runId, tip, loop, first, dotGit, store);
  } finally {
    store?.close();
  }
}

async function audit(
  argv: GlobalArgs & { json?: boolean; replay?: boolean },
  git: GitRepo,
  runId: string,
  tip: string | undefined,
  loop: LoopCommit[],
  first: LoopRecord | undefined,
  dotGit: string,
  store: ObjectStore | undefined,
): Promise<number> {
  const base = await runBase(git, first, first === undefined ? readRunStarts(repositoryState(processEnv(), dotGit))[runId] : undefined, store);
  if (base === undefined || base.sha === tip) {
    if (first !== undefined) throw new RefusalError(`The run's first loop commit ${first.sha.slice(0, 7)} has no parent to start the audit from.`);
    if (argv.json) printJson({ run_id: runId, clean: true, loop_commits: 0, other_commits: 0, violations: [], person_edits: [] });
    else printLine(`audit: run ${runId} has no commits since it started; nothing to check.`);
    return 0;
  }
  const report = await auditHistory(git, runId, base.sha, tip, store);
  if (base.problem !== undefined) report.violations.unshift({ sha: first!.sha, iteration: 1, message: base.problem });
  if (argv.replay) {
    // Each commit that passed a leaf, its guard run again on exactly what was committed.
    const replays = await replayPasses(git, git.streamCommitsSince(base.sha, tip), runId, processEnv());
    for (const replay of replays.filter((r) => !r.passed)) {
      report.violations.push({
        sha: replay.sha,
        iteration: replay.iteration,
        message: `guard=pass, but replayed in a clean checkout ${replay.problem}`,
      });
    }
    report.replayed = replays.length;
  }
  const clean = report.violations.length === 0;
  if (argv.json) {
    printJson({
      run_id: runId,
      clean,
      loop_commits: report.loopCommits,
      other_commits: report.otherCommits,
      ...(report.replayed !== undefined ? { replayed: report.replayed } : {}),
      violations: report.violations.map((v) => ({ commit: v.sha, iteration: v.iteration ?? null, message: v.message })),
      person_edits: report.personEdits.map((edit) => ({
        commit: edit.sha,
        subject: edit.subject,
        made: edit.made,
        verb: edit.verb ?? null,
        target: edit.target ?? null,
        author: edit.author ?? null,
        valid: edit.problems.length === 0,
        problems: edit.problems,
      })),
    });
    return clean ? 0 : 1;
  }
  if (clean) {
    const replayed =
      report.replayed === undefined
        ? ""
        : `; the guard passed again on all ${report.replayed} passing commit${report.replayed === 1 ? "" : "s"} in a clean checkout`;
    printLine(
      `audit: run ${runId} is clean: ${report.loopCommits} loop commit${report.loopCommits === 1 ? "" : "s"} and ${report.otherCommits} other commit${report.otherCommits === 1 ? "" : "s"} obey the rules${replayed}.`,
    );
    for (const line of personEditLines(report.personEdits)) printLine(line);
    return 0;
  }
  const firstViolation = report.violations[0]!;
  const where = `commit ${firstViolation.sha.slice(0, 7)}${firstViolation.iteration !== undefined ? ` (iteration ${firstViolation.iteration})` : " (not a loop commit)"}`;
  printError(`audit: run ${runId} breaks the rules first at ${where}: ${firstViolation.message}.`);
  for (const violation of report.violations.slice(1)) {
    printError(
      `  also commit ${violation.sha.slice(0, 7)}${violation.iteration !== undefined ? ` (iteration ${violation.iteration})` : ""}: ${violation.message}`,
    );
  }
  return 1;
}

/** A person's edits, one line each: who, which commit, what; made by hand or by a runner command. */
function personEditLines(edits: readonly PersonEditFinding[]): string[] {
  if (edits.length === 0) return [];
  return [
    `a person's edits (${edits.length}), each checked by the rules:`,
    ...edits.map(
      (edit) =>
        `  ${edit.sha.slice(0, 7)} ${edit.made === "hand" ? "a person's edit by hand" : "a person's edit"} by ${edit.author ?? "?"}: ${edit.subject}${edit.problems.length > 0 ? " (breaks the rules)" : ""}`,
    ),
  ];
}
