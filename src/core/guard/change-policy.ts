// The change policy of an iteration (CONTRACT §9): protected paths, the selected node's
// allowed_write_paths (its policy sidecar, judged before the iteration starts), and what the agent
// did to git itself. Each violation fails the guard stage.
import { isRunnerPath, pathsInside, pathsOutside } from "./path-rules.js";
import { formatProblem, type Problem } from "../base/problems.js";
import type { AgentGitFacts } from "../agent/agent-git.js";

/** The selected node's policy sidecar as read (src/adapters/files/project-files.ts loadPolicy). */
export interface NodePolicyFacts {
  file: string;
  problems: Problem[];
  allowedWritePaths?: string[];
}

export type NodePolicyVerdict = { kind: "policyInvalid"; message: string } | { kind: "policyValid"; allowedWritePaths: string[] | undefined };

/** A node's policy sidecar: valid (its allowed_write_paths, or none), or the sentence that refuses the iteration before anything is written. */
export function judgeNodePolicy(policy: NodePolicyFacts | undefined): NodePolicyVerdict {
  if (policy && policy.problems.length > 0) {
    return {
      kind: "policyInvalid",
      message: `${policy.file} is invalid: ${formatProblem(policy.problems[0]!)}; fix it (\`runner validate\` lists every problem) and run \`runner step\` again.`,
    };
  }
  return { kind: "policyValid", allowedWritePaths: policy?.allowedWritePaths };
}

export interface PolicyInput {
  changedPaths: readonly string[];
  protectedPaths: readonly string[];
  /** The selected node's allowed_write_paths, when it has a policy. */
  allowedWritePaths: readonly string[] | undefined;
  /** What the agent did to git itself (undone before the runner's own git calls). */
  git?: AgentGitFacts;
}

export interface PolicyResult {
  protectedChanged: string[];
  outsideAllowed: string[];
  /** The sentence the agent and the log get, when anything was violated. */
  failure?: string;
}

/** Protected paths apply to every iteration; allowed_write_paths to what lies outside .runner/. */
export function checkChangePolicy(input: PolicyInput): PolicyResult {
  const protectedChanged = pathsInside(input.changedPaths, input.protectedPaths);
  const outsideAllowed = input.allowedWritePaths
    ? pathsOutside(
        input.changedPaths.filter((path) => !isRunnerPath(path)),
        input.allowedWritePaths,
      )
    : [];
  const parts: string[] = [];
  const scripts = input.git?.scriptEntriesChanged ?? [];
  if (protectedChanged.length > 0 || scripts.length > 0)
    parts.push(`changed protected paths (${[...protectedChanged, ...scripts].join(", ")}), which the agent may not touch`);
  if (outsideAllowed.length > 0) parts.push(`changed paths outside the node's allowed_write_paths (${outsideAllowed.join(", ")})`);
  const git = input.git;
  if (git && git.controlChanged.length > 0)
    parts.push(`changed git's own files (${git.controlChanged.map((name) => `.git/${name}`).join(", ")}), which the runner put back`);
  if (git?.runnerFilesRestored && git.runnerFilesRestored.length > 0)
    parts.push(`changed the runner's own files (${git.runnerFilesRestored.join(", ")}), which the runner put back`);
  if (git?.guardProgramChanged) parts.push(`changed the guard's program (${git.guardProgramChanged})`);
  if (git && git.hiddenByIgnoreRules.length > 0) {
    parts.push(
      `hid files from the commit with an ignore rule it changed (${git.hiddenByIgnoreRules.join(", ")}): the guard would judge files that are not committed; commit them, or ignore them in an iteration of their own`,
    );
  }
  if (git && git.nestedRepositories.length > 0)
    parts.push(
      `created git repositories without a commit (${git.nestedRepositories.join(", ")}), which cannot be committed and were moved to the iteration's log`,
    );
  return parts.length > 0
    ? { protectedChanged, outsideAllowed, failure: `The iteration ${parts.join(" and ")}; the guard stage failed.` }
    : { protectedChanged, outsideAllowed };
}
