// `runner audit --replay`: the guard run again on the content of every commit of a run that passed
// a leaf (guard=pass), in a clean checkout of that commit, with the guard and its setup as that
// commit's config names them, the runner's own `just` first on PATH as in the step. A pass the
// committed content does not earn shows here.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseConfig } from "../../core/config/config.js";
import { LAYOUT } from "../../core/base/layout.js";
import { parseLoopCommit, recheckedOf } from "../../core/commit/loop-history.js";
import { secretValues } from "../../core/base/text-limits.js";
import { runInCleanCheckout } from "../git/clean-checkout.js";
import type { GitRepo } from "../git/git.js";
import { withRunnerJust } from "../guard/just-bin.js";

export interface ReplayResult {
  sha: string;
  iteration: number;
  nodeId: string;
  passed: boolean;
  /** Why it did not pass, in one sentence with the output's tail. */
  problem?: string;
}

export async function replayPasses(
  git: GitRepo,
  commits: Iterable<{ sha: string; subject: string; body: string }> | AsyncIterable<{ sha: string; subject: string; body: string }>,
  runId: string,
  env: Record<string, string>,
): Promise<ReplayResult[]> {
  // The guard's program found exactly as the step finds it: the runner's own `just` first on PATH.
  env = withRunnerJust(env);
  const results: ReplayResult[] = [];
  const logs = await mkdtemp(path.join(tmpdir(), "runner-replay-"));
  try {
    for await (const commit of commits) {
      const record = parseLoopCommit(commit.sha, commit.subject, commit.body, runId);
      const subject = record?.subject;
      if (!record || !subject || subject.kind === "repair" || subject.guard !== "pass") continue;
      const base = { sha: commit.sha, iteration: subject.iteration, nodeId: subject.nodeId };
      const config = parseConfig((await git.showFile(commit.sha, LAYOUT.config)) ?? "");
      if (!config.ok) {
        results.push({ ...base, passed: false, problem: `${LAYOUT.config} at that commit is invalid, so its guard cannot be known` });
        continue;
      }
      const guard = config.config.guard;
      const run = await runInCleanCheckout(git, {
        commit: commit.sha,
        guard: guard.command,
        setup: guard.setup,
        env: {
          ...env,
          RUNNER_REPLAY: "1",
          RUNNER_RUN_ID: runId,
          RUNNER_ITERATION: String(subject.iteration),
          RUNNER_NODE_ID: subject.nodeId,
          // (as the step gave it: every leaf that guard run judged)
          RUNNER_NODE_IDS: [subject.nodeId, ...recheckedOf(record)].join(" "),
        },
        deadlineMs: Date.now() + config.config.limits.iterationTimeoutSeconds * 1000,
        setupLog: path.join(logs, `${subject.iteration}-setup.log`),
        guardLog: path.join(logs, `${subject.iteration}-guard.log`),
        capBytes: config.config.limits.outputCapBytes,
        secrets: secretValues(env),
      });
      const failed = run.guard ?? run.setup!;
      const what = run.guard ? `the guard \`${guard.command.join(" ")}\`` : `the setup \`${guard.setup!.join(" ")}\``;
      if (failed.exitCode === 0 && !failed.timedOut && !failed.spawnError) {
        results.push({ ...base, passed: true });
        continue;
      }
      const how =
        failed.spawnError ??
        (failed.timedOut ? "did not finish within the iteration budget" : `exited with code ${failed.exitCode ?? failed.signal}`);
      const tail = failed.excerpt.trim().split("\n").slice(-3).join(" / ");
      results.push({ ...base, passed: false, problem: `${what} ${how} on the committed content${tail ? ` (${tail})` : ""}` });
    }
  } finally {
    await rm(logs, { recursive: true, force: true });
  }
  return results;
}
