// Step 4, build the prompt pack (or 5.1, the repair prompt): the selected node's policy is checked
// first (an invalid one refuses the iteration before anything is written); then the iteration is
// journaled, `.runner/context/` written, and prompt.md and tree.before.json logged.
import { readFile } from "node:fs/promises";
import { fromPromise } from "xstate";
import { answerFile } from "../../adapters/agent/agent-answer.js";
import { clearContext, writeContext } from "../../adapters/records/context-writer.js";
import { loadPolicy, projectPath, readOptional } from "../../adapters/files/project-files.js";
import { referToCommittedTree } from "../../adapters/records/tree-snapshots.js";
import { LAYOUT } from "../../core/base/layout.js";
import { lastFailure, renderHistory } from "../../core/commit/loop-history.js";
import { BUILTIN_TEMPLATES, buildLeafPrompt, buildRepairPrompt, renderNodeContext, repairContextFiles } from "../../core/step/prompt-pack.js";
import { serializeTree } from "../../core/tree/serialize.js";
import { agentStepKind, type PromptFacts } from "../../core/step/step-facts.js";
import { redactSecrets } from "../../core/base/text-limits.js";
import type { PromptRequest } from "../../../machines/iteration-types.js";
import type { ActorDeps } from "../deps.js";
import { beginIteration } from "./begin-iteration.js";

const NOTES = [
  ["Assumptions", LAYOUT.assumptions],
  ["Open questions", LAYOUT.questions],
  ["Feedback", LAYOUT.feedback],
  ["Improvements", LAYOUT.improvements],
] as const;

export function preparePromptActor(deps: ActorDeps) {
  const { root, secrets, onProgress } = deps;
  const file = (relative: string) => projectPath(root, relative);
  return fromPromise<PromptFacts, PromptRequest>(async ({ input: { start, leaf } }) => {
    const stepKind = agentStepKind(start.stepKind);
    const policy = leaf ? await loadPolicy(root, leaf.leaf.id) : undefined;
    // An invalid policy sidecar refuses the iteration (core's verdict) before anything is written.
    if (policy && policy.problems.length > 0) return { prompt: "", policy };
    // From here on the iteration changes things: journal it.
    const log = await beginIteration(deps, start, leaf ? leaf.leaf.id : null);
    onProgress?.({ type: "phase", phase: "prompt", iteration: start.iteration, nodeId: leaf?.leaf.id, title: leaf?.leaf.title });

    const [goalText, templateText] = await Promise.all([
      readOptional(file(LAYOUT.goal)),
      readOptional(file(`${LAYOUT.prompts}/${stepKind}.md`)),
      clearContext(root),
    ]);
    const goal = goalText ?? "";
    const template = templateText ?? BUILTIN_TEMPLATES[stepKind];
    const outputFile = answerFile(log);
    let prompt: string;
    if (!leaf) {
      const problems = start.repair?.treeProblems ?? [];
      prompt = buildRepairPrompt({ goal, problems, lastValidTree: start.previousTree, outputFile }, template);
      await writeContext(root, repairContextFiles(goal, problems), secrets);
    } else {
      const [failure, nodeContext, notes] = await Promise.all([
        lastFailure(
          start.records,
          leaf.leaf.id,
          leaf.path.slice(0, -1).map((node) => node.id),
        ),
        readOptional(file(`${LAYOUT.nodes}/${leaf.leaf.id}/context.md`)),
        Promise.all(NOTES.map(async ([name, relative]) => ({ name: `${name} (${relative})`, text: await readOptional(file(relative)) }))),
      ]);
      const history = renderHistory(start.records, leaf.leaf.id);
      prompt = buildLeafPrompt(
        {
          tree: start.previousTree,
          path: leaf.path,
          stuck: leaf.stuck,
          goal,
          history,
          failure: failure ?? "",
          nodeContext,
          notes,
          guardCommand: start.config.guard.command,
          // (the guard's script entries too: "package.json scripts.test")
          protectedPaths: [
            ...start.config.guard.protectedPaths,
            ...(start.config.guard.protectedScripts ?? []).flatMap((s) => Object.keys(s.entries).map((name) => `${s.manifest} scripts.${name}`)),
          ],
          allowedWritePaths: policy?.allowedWritePaths,
          outputFile,
        },
        template,
      );
      await writeContext(
        root,
        {
          "goal.md": goal,
          "node.md": renderNodeContext(leaf.leaf, leaf.path, leaf.stuck),
          "history.md": history,
          "failure.md": failure ?? "No failure recorded for this node.\n",
        },
        secrets,
      );
    }
    // The agent's stdin and RUNNER_PROMPT_FILE carry the same text, secrets redacted (CONTRACT §6, §9).
    const redacted = redactSecrets(prompt, secrets);
    log.write("prompt.md", redacted);
    // A leaf step starts from the tree file as loaded (the working tree was clean): tree.before.json
    // is that file as it is. A repair starts from the tree it repairs against, in canonical form.
    // HEAD holds that file: the log refers to it (tree-snapshots.ts) rather than copying it.
    if (!leaf) log.write("tree.before.json", serializeTree(start.previousTree));
    else if (secrets.length === 0 || (start.previousTreeText !== undefined && !log.redacts(start.previousTreeText)))
      await referToCommittedTree(log, "before", file(LAYOUT.tree), start.from.head);
    else log.write("tree.before.json", start.previousTreeText ?? (await readFile(file(LAYOUT.tree), "utf8")));
    return { prompt: redacted, policy };
  });
}
