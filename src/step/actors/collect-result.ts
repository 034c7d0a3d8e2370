// Step 6, re-load: first what the agent did to git itself is undone (control files, operations in
// progress, HEAD and the run branch back on the starting commit, the runner's own files under
// .runner/), and a changed script entry of the guard's definition taken back; then what it left —
// its answer, the tree file freshly parsed, the paths changed against the starting commit (through
// the runner's own index), files hidden by an ignore rule it changed, repositories it created that
// cannot be committed, whether the guard's program is still the one found before it ran. Also what
// the recovery of a runner error collects. core decides what it all means.
import { readFile, stat } from "node:fs/promises";
import { fromPromise } from "xstate";
import { readAgentAnswer } from "../../adapters/agent/agent-answer.js";
import { restoreRunnerFiles, undoAgentControl, undoAgentRefs } from "../../adapters/git/agent-git.js";
import { changedPathList } from "../../adapters/git/git.js";
import { takeBackScriptEntries } from "../../adapters/guard/guard-definition.js";
import { hiddenByChangedIgnoreRules, isIgnoreFile } from "../../adapters/git/ignore-rules.js";
import { IterationLog } from "../../adapters/records/iteration-log.js";
import { moveAside, uncommittableRepositories } from "../../adapters/git/nested-repositories.js";
import { signatureOf } from "../../adapters/process/program.js";
import { projectPath } from "../../adapters/files/project-files.js";
import { treeSizeProblem } from "../../adapters/files/tree-store.js";
import { LAYOUT } from "../../core/base/layout.js";
import { jsonSyntaxMessage } from "../../core/base/problems.js";
import type { CollectedFacts } from "../../core/step/step-facts.js";
import type { CollectRequest } from "../../../machines/iteration-types.js";
import type { ActorDeps } from "../deps.js";

export function collectResultActor({ root, git, gitDir, secrets }: ActorDeps) {
  return fromPromise<CollectedFacts, CollectRequest>(async ({ input: { start, answer } }) => {
    const control = undoAgentControl(gitDir, start.control);
    const log = new IterationLog(root, start.runId, start.iteration, secrets);
    // Usually the agent left HEAD alone: the status taken beside the check is the one; else again.
    const [refs, runnerFilesRestored, first] = await Promise.all([
      undoAgentRefs(git, start.from),
      restoreRunnerFiles(root, git, start.from),
      git.status(),
    ]);
    const status = refs.moved || runnerFilesRestored.length > 0 ? await git.status() : first;
    const { moved: _moved, ...undone } = { ...control, ...refs, ...(runnerFilesRestored.length > 0 ? { runnerFilesRestored } : {}) };
    let changedPaths = changedPathList(status.changes);
    const nestedRepositories = await uncommittableRepositories(root, changedPaths);
    if (nestedRepositories.length > 0) {
      await moveAside(root, nestedRepositories, log.dir);
      changedPaths = changedPaths.filter((relative) => !nestedRepositories.includes(relative));
    }
    // A changed script entry of the guard's definition is taken back now; a manifest left as it was is no change.
    const scripts = await takeBackScriptEntries(root, git, start.from.head, start.config.guard.protectedScripts ?? [], changedPaths, log);
    changedPaths = changedPaths.filter((relative) => !scripts.unchanged.includes(relative));
    const hiddenByIgnoreRules = changedPaths.some(isIgnoreFile) ? await hiddenByChangedIgnoreRules(git, gitDir, start.from.head) : [];
    const program = start.guardProgram;
    const guardProgramChanged = program.file !== undefined && signatureOf(program.file) !== program.signature ? program.file : undefined;
    // A tree file git finds unchanged since the iteration's valid tree was loaded from it is neither read nor checked again.
    const treeUnchanged = start.treeFromStart && !changedPaths.includes(LAYOUT.tree);
    // The answer as the agent's session read it; read here only when the session did not end (a runner error's recovery).
    const [checked, treeData] = await Promise.all([
      answer ?? readAgentAnswer(log),
      treeUnchanged ? ({ ok: true, unchanged: true } as const) : readTreeData(projectPath(root, LAYOUT.tree)),
    ]);
    return {
      answer: checked,
      treeData,
      changedPaths: [...changedPaths, ...nestedRepositories].sort(),
      git: {
        ...undone,
        hiddenByIgnoreRules,
        nestedRepositories,
        ...(guardProgramChanged ? { guardProgramChanged } : {}),
        ...(scripts.named.length > 0 ? { scriptEntriesChanged: scripts.named } : {}),
      },
    };
  });
}

/** The tree file parsed as JSON (size-limited), or the parse problem; schema checks come later. */
async function readTreeData(treeFile: string): Promise<CollectedFacts["treeData"]> {
  const info = await stat(treeFile).catch(() => undefined);
  if (!info) return { ok: false, problems: [{ path: "$", message: "the file was deleted" }] };
  const tooLarge = treeSizeProblem(info.size);
  if (tooLarge) return { ok: false, problems: [tooLarge] };
  const text = await readFile(treeFile, "utf8");
  try {
    return { ok: true, data: JSON.parse(text) };
  } catch (error) {
    return { ok: false, problems: [{ path: "$", message: jsonSyntaxMessage(text, error) }] };
  }
}
