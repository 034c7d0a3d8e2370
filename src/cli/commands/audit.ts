// `runner audit`: replays the current run's commits from git history and checks every transition
// against the rules; names the first commit that breaks one (exit 1), or says the run is clean (0).
// auditRun is also `runner mcp`'s audit tool.
import { existsSync } from "node:fs";
import path from "node:path";
import { replayPasses } from "../../adapters/audit/replay.js";
import { gitDir, type GitRepo } from "../../adapters/git/git.js";
import { ObjectStore } from "../../adapters/git/object-store.js";
import { auditHistory, runBase } from "../../adapters/audit/run-audit.js";
import { readRunStarts } from "../../adapters/state/run-starts.js";
import { repositoryState } from "../../adapters/state/runner-state.js";
import { loopRecords, type LoopRecord } from "../../core/commit/loop-history.js";
import type { PersonEditEntry } from "../../core/audit/person-edit.js";
import { processEnv } from "../environment.js";
import { RefusalError } from "../../errors.js";
import type { GlobalArgs } from "../command-table.js";
import { resolveRun } from "../../adapters/audit/resolve-run.js";
import { printError, printJson, printLine } from "../output.js";
import { findProjectRoot } from "../repo.js";

/** `runner audit --json` (and `runner mcp`'s audit tool). */
export interface Audit {
  run_id: string;
  clean: boolean;
  loop_commits: number;
  other_commits: number;
  /** With `replay`: how many passing commits had their guard run again. */
  replayed?: number;
  violations: { commit: string; iteration: number | null; message: string }[];
  /** Each as `runner log` lists it (core/audit/person-edit.ts), judged. */
  person_edits: (Omit<PersonEditEntry, "after_iteration"> & { valid: boolean; problems: string[] })[];
}

/** Audits the run of the repository at `folder` (the current one, or `runIdOption`); `replay` runs the guard again on every passing commit. */
export async function auditRun(folder: string, runIdOption: string | undefined, replay: boolean): Promise<Audit> {
  const root = findProjectRoot(folder);
  if (!existsSync(path.join(root, ".git"))) throw new RefusalError(`${root} is not the top folder of a git repository; there is no run to audit.`);
  const { git, runId, tip, loopCommits: loop } = await resolveRun(root, runIdOption);
  const first = loopRecords(loop.slice(-1), runId)[0];
  const dotGit = await gitDir(root);
  // The repository's object files, read without a git process where they can be (src/adapters/git/object-store.ts).
  const store = ObjectStore.open(dotGit, (tip?.length ?? 40) / 2);
  try {
    return await auditFrom(git, runId, tip, first, dotGit, store, replay);
  } finally {
    store?.close();
  }
}

async function auditFrom(
  git: GitRepo,
  runId: string,
  tip: string | undefined,
  first: LoopRecord | undefined,
  dotGit: string,
  store: ObjectStore | undefined,
  replay: boolean,
): Promise<Audit> {
  const base = await runBase(git, first, first === undefined ? readRunStarts(repositoryState(processEnv(), dotGit))[runId] : undefined, store);
  if (base === undefined || base.sha === tip) {
    if (first !== undefined) throw new RefusalError(`The run's first loop commit ${first.sha.slice(0, 7)} has no parent to start the audit from.`);
    return { run_id: runId, clean: true, loop_commits: 0, other_commits: 0, violations: [], person_edits: [] };
  }
  const report = await auditHistory(git, runId, base.sha, tip, store);
  if (base.problem !== undefined) report.violations.unshift({ sha: first!.sha, iteration: 1, message: base.problem });
  if (replay) {
    // Each commit that passed a leaf, its guard run again on exactly what was committed.
    const replays = await replayPasses(git, git.streamCommitsSince(base.sha, tip), runId, processEnv());
    for (const replayed of replays.filter((r) => !r.passed)) {
      report.violations.push({
        sha: replayed.sha,
        iteration: replayed.iteration,
        message: `guard=pass, but replayed in a clean checkout ${replayed.problem}`,
      });
    }
    report.replayed = replays.length;
  }
  return {
    run_id: runId,
    clean: report.violations.length === 0,
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
  };
}

export async function run(argv: GlobalArgs & { json?: boolean; runId?: string; replay?: boolean }): Promise<number> {
  const audit = await auditRun(argv.C, argv.runId, argv.replay === true);
  const { run_id: runId, clean } = audit;
  if (argv.json) {
    printJson(audit);
    return clean ? 0 : 1;
  }
  if (audit.loop_commits === 0 && audit.other_commits === 0) {
    printLine(`audit: run ${runId} has no commits since it started; nothing to check.`);
    return 0;
  }
  if (clean) {
    const replayed =
      audit.replayed === undefined
        ? ""
        : `; the guard passed again on all ${audit.replayed} passing commit${audit.replayed === 1 ? "" : "s"} in a clean checkout`;
    printLine(
      `audit: run ${runId} is clean: ${audit.loop_commits} loop commit${audit.loop_commits === 1 ? "" : "s"} and ${audit.other_commits} other commit${audit.other_commits === 1 ? "" : "s"} obey the rules${replayed}.`,
    );
    for (const line of personEditLines(audit.person_edits)) printLine(line);
    return 0;
  }
  const [firstViolation, ...others] = audit.violations;
  const where = `commit ${firstViolation!.commit.slice(0, 7)}${firstViolation!.iteration !== null ? ` (iteration ${firstViolation!.iteration})` : " (not a loop commit)"}`;
  printError(`audit: run ${runId} breaks the rules first at ${where}: ${firstViolation!.message}.`);
  for (const violation of others) {
    printError(
      `  also commit ${violation.commit.slice(0, 7)}${violation.iteration !== null ? ` (iteration ${violation.iteration})` : ""}: ${violation.message}`,
    );
  }
  return 1;
}

/** A person's edits, one line each: who, which commit, what; made by hand or by a runner command. */
function personEditLines(edits: Audit["person_edits"]): string[] {
  if (edits.length === 0) return [];
  return [
    `a person's edits (${edits.length}), each checked by the rules:`,
    ...edits.map(
      (edit) =>
        `  ${edit.commit.slice(0, 7)} ${edit.made === "hand" ? "a person's edit by hand" : "a person's edit"} by ${edit.author ?? "?"}: ${edit.subject}${edit.valid ? "" : " (breaks the rules)"}`,
    ),
  ];
}
