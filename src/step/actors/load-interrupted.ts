// Recording an interrupted iteration: the config, the run's history, and the tree the interrupted
// iteration began from (HEAD's, if the runner accepted it; else the last tree it accepted).
import { readdir, rm } from "node:fs/promises";
import path from "node:path";
import { fromPromise } from "xstate";
import { withGuardDefinition } from "../../adapters/guard/guard-definition.js";
import { identifyProgram } from "../../adapters/process/program.js";
import { loadConfig, projectPath } from "../../adapters/files/project-files.js";
import { runHistory, runIdentity } from "../../adapters/audit/run-history.js";
import { acceptedTree, lastValidTree } from "../../adapters/audit/run-trees.js";
import { checkTreeText } from "../../adapters/files/tree-store.js";
import { LAYOUT } from "../../core/base/layout.js";
import { leftTreeInvalid, loopRecords } from "../../core/commit/loop-history.js";
import { formatProblem } from "../../core/base/problems.js";
import type { InterruptedState } from "../../core/step/step-facts.js";
import { IterationError } from "../../errors.js";
import type { LoadRequest } from "../../../machines/iteration-types.js";
import type { ActorDeps } from "../deps.js";

export function loadInterruptedActor({ root, env, git, state }: ActorDeps) {
  return fromPromise<InterruptedState, LoadRequest>(async ({ input }) => {
    const [config, commits, headText] = await Promise.all([
      loadConfig(root),
      runHistory(git, state, input.runId, input.head).then((history) => history.commits),
      git.showFile("HEAD", LAYOUT.tree),
    ]);
    if (!config.ok) throw new IterationError(`${LAYOUT.config} is invalid: ${formatProblem(config.problems[0]!)}`);
    const records = loopRecords(commits, input.runId);
    const head = headText === undefined ? undefined : checkTreeText(headText);
    const accepted = records[0] && leftTreeInvalid(records[0]) ? undefined : head?.ok ? head.tree : undefined;
    const previousTree = accepted ?? (await acceptedTree(git, records)) ?? (await lastValidTree(git));
    if (!previousTree) throw new IterationError("no valid task tree exists in this branch's history");
    // A temp file of an atomic write the kill cut short must not be committed.
    await removeStaleTempFiles(path.dirname(projectPath(root, LAYOUT.tree)));
    return {
      // (an interrupted agent's change of the guard's definition is taken back too)
      config: await withGuardDefinition(git, input.head, config.config),
      records,
      previousTree,
      treeFromStart: accepted !== undefined,
      guardProgram: identifyProgram(config.config.guard.command[0]!, env, root),
      identity: await runIdentity(git, commits, env),
    };
  });
}

/** Removes temp files of atomic writes (`.<name>.<pid>.tmp`) a killed runner left in a folder. */
async function removeStaleTempFiles(dir: string): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[]);
  await Promise.all(names.filter((name) => /^\..+\.[0-9]+\.tmp$/.test(name)).map((name) => rm(path.join(dir, name), { force: true })));
}
