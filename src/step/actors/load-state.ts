// Step 2, load: the config, the tree as it is on disk, this run's loop commits, and — when the tree
// is invalid, or was left invalid by the last iteration — the tree to check and repair it against.
import { fromPromise } from "xstate";
import { loadConfig, loadFinished, loadTree } from "../../adapters/files/project-files.js";
import { loadWrittenTree } from "../../adapters/files/tree-store.js";
import { withGuardDefinition } from "../../adapters/guard/guard-definition.js";
import { guardProgramOf, preflight } from "../../adapters/guard/preflight.js";
import { identifyFile } from "../../adapters/process/program.js";
import { keptHistory, runHistory, runIdentity } from "../../adapters/audit/run-history.js";
import { acceptedTree, lastValidTree } from "../../adapters/audit/run-trees.js";
import { checkAgentTree } from "../../core/step/iteration.js";
import { lastLeafNode, leftTreeInvalid, loopRecords } from "../../core/commit/loop-history.js";
import type { LoadedState } from "../../core/step/step-facts.js";
import type { LoadRequest } from "../../../machines/iteration-types.js";
import type { ActorDeps } from "../deps.js";

/** A loaded tree's text is kept up to this many characters (a 10,000-node tree is about 4 MB). */
export const KEPT_TREE_TEXT = 8 * 1024 * 1024;

export function loadStateActor({ root, env, git, state }: ActorDeps) {
  return fromPromise<LoadedState, LoadRequest>(async ({ input }) => {
    // The tree file of the runner's own last commit (and the work tree is clean: the safety check
    // passed) is one it wrote from a valid tree: parsed, not checked again.
    const kept = await keptHistory(state, input.runId, input.head);
    const [config, tree, history, finished] = await Promise.all([
      // (with the guard's definition at the starting commit protected too)
      loadConfig(root).then(async (loaded) =>
        loaded.ok ? { ...loaded, config: await withGuardDefinition(git, input.head, loaded.config) } : loaded,
      ),
      kept?.treeWritten ? loadWrittenTree(root) : loadTree(root),
      runHistory(git, state, input.runId, input.head, kept),
      // (the working tree is clean, and the file protected: as the starting commit has it)
      loadFinished(root),
    ]);
    const commits = history.commits;
    const records = loopRecords(commits, input.runId);
    // The programs found once, now, before the agent can change what PATH leads to; the guard is run by the file found.
    const checks = config.ok ? preflight(root, config.config, env) : [];
    const loaded: LoadedState = {
      config,
      // (the text only of a tree small enough to keep: it is copied to tree.before.json as it is)
      tree: tree.ok
        ? { ok: true, tree: tree.tree, ...(tree.text.length <= KEPT_TREE_TEXT ? { text: tree.text } : {}) }
        : { ok: false, problems: tree.problems, missing: tree.missing },
      records,
      guardProgram: identifyFile(guardProgramOf(checks)),
      preflight: checks.flatMap((check) => (check.problem ? [{ problem: check.problem, agent: check.agent === true }] : [])),
      identity: await runIdentity(git, commits, env),
      ...(finished?.ok && finished.ids.length > 0 ? { finished: finished.ids } : {}),
    };
    // After an iteration that left the tree invalid (committed as the agent wrote it), the tree must
    // be checked against the last one the runner accepted, as the agent's tree was: a changed passed
    // node or a removed selected leaf is valid on its own.
    const accepted = records[0] && leftTreeInvalid(records[0]) ? await acceptedTree(git, records) : undefined;
    if (tree.ok && accepted) {
      const { problems } = checkAgentTree(accepted, tree.tree, lastLeafNode(records));
      if (problems.length > 0) {
        loaded.tree = { ok: false, problems };
        loaded.lastValidTree = accepted;
      }
    } else if (!tree.ok) {
      // (a deleted tree file too: repaired from the last valid tree, if the history has one)
      loaded.lastValidTree = accepted ?? (await lastValidTree(git));
    }
    return loaded;
  });
}
