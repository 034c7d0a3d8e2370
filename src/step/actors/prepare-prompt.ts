// Step 4, build the prompt pack (or 5.1, the repair prompt): the selected node's policy is checked
// first (an invalid one refuses the iteration before anything is written); then the iteration is
// journaled, `.runner/context/` written, and prompt.md and tree.before.json logged.
import { readFile } from "node:fs/promises";
import { fromPromise } from "xstate";
import { clearContext, writeContext } from "../../adapters/context-writer.js";
import { loadPolicy, projectPath, readOptional } from "../../adapters/project-files.js";
import { LAYOUT } from "../../core/layout.js";
import { lastFailure, renderHistory } from "../../core/loop-history.js";
import { formatProblem } from "../../core/problems.js";
import { BUILTIN_TEMPLATES, buildLeafPrompt, buildRepairPrompt, renderNodeContext, repairContextFiles } from "../../core/prompt-pack.js";
import { selectLeftmostOpenLeaf } from "../../core/select.js";
import { serializeTree } from "../../core/serialize.js";
import type { PromptFacts } from "../../core/step-facts.js";
import { redactSecrets } from "../../core/text-limits.js";
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
  return fromPromise<PromptFacts, PromptRequest>(async ({ input }) => {
    const selected = input.stepKind === "leaf" ? selectLeftmostOpenLeaf(input.previousTree) : undefined;
    const leaf = selected?.kind === "leaf" ? selected : undefined;
    if (input.stepKind === "leaf" && !leaf) throw new Error("buildPrompt without an open leaf");
    const policy = leaf ? await loadPolicy(root, leaf.leaf.id) : undefined;
    if (policy && policy.problems.length > 0) {
      return {
        prompt: "",
        allowedWritePaths: undefined,
        policyProblem: `${policy.file} is invalid: ${formatProblem(policy.problems[0]!)}; fix it (\`runner validate\` lists every problem) and run \`runner step\` again.`,
      };
    }
    // From here on the iteration changes things: journal it.
    const log = await beginIteration(deps, input, input.stepKind, leaf ? leaf.leaf.id : null);
    onProgress?.({ type: "phase", phase: "prompt", iteration: input.iteration, nodeId: leaf?.leaf.id, title: leaf?.leaf.title });

    const [goalText, templateText] = await Promise.all([
      readOptional(file(LAYOUT.goal)),
      readOptional(file(`${LAYOUT.prompts}/${input.stepKind}.md`)),
      clearContext(root),
    ]);
    const goal = goalText ?? "";
    const template = templateText ?? BUILTIN_TEMPLATES[input.stepKind];
    const outputFile = log.file("output.json");
    let prompt: string;
    if (!leaf) {
      prompt = buildRepairPrompt({ goal, problems: input.treeProblems, lastValidTree: input.previousTree, outputFile }, template);
      await writeContext(root, repairContextFiles(goal, input.treeProblems), secrets);
    } else {
      const [failure, nodeContext, notes] = await Promise.all([
        lastFailure(
          input.records,
          leaf.leaf.id,
          leaf.path.slice(0, -1).map((node) => node.id),
        ),
        readOptional(file(`${LAYOUT.nodes}/${leaf.leaf.id}/context.md`)),
        Promise.all(NOTES.map(async ([name, relative]) => ({ name: `${name} (${relative})`, text: await readOptional(file(relative)) }))),
      ]);
      const history = renderHistory(input.records, leaf.leaf.id);
      prompt = buildLeafPrompt(
        {
          tree: input.previousTree,
          path: leaf.path,
          stuck: leaf.stuck,
          goal,
          history,
          failure: failure ?? "",
          nodeContext,
          notes,
          guardCommand: input.config.guard.command,
          // (the guard's script entries too: "package.json scripts.test")
          protectedPaths: [
            ...input.config.guard.protectedPaths,
            ...(input.config.guard.protectedScripts ?? []).flatMap((s) => Object.keys(s.entries).map((name) => `${s.manifest} scripts.${name}`)),
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
    if (!leaf) log.write("tree.before.json", serializeTree(input.previousTree));
    else if (secrets.length === 0 || (input.previousTreeText !== undefined && !log.redacts(input.previousTreeText)))
      log.copyFile("tree.before.json", file(LAYOUT.tree));
    else log.write("tree.before.json", input.previousTreeText ?? (await readFile(file(LAYOUT.tree), "utf8")));
    return { prompt: redacted, allowedWritePaths: policy?.allowedWritePaths };
  });
}
