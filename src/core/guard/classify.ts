// Step 7, classify and judge (seed 001 §5, CONTRACT §7): DECOMPOSE or EXECUTE from the changed paths,
// the agent's declared status judged against what it did, and the change policy applied.
import { checkChangePolicy, type PolicyResult } from "./change-policy.js";
import { isRunnerPath, pathsOutside } from "./path-rules.js";
import type { IterationKind } from "../commit/commit-message.js";
import type { AgentStatus, GuardOutcome } from "../tree/state-update.js";
import type { AgentGitFacts } from "../agent/agent-git.js";
import { findNode, type TaskNode, type TaskTree } from "../tree/tree.js";

/** EXECUTE if any changed path lies outside `.runner/`, else DECOMPOSE (no change at all included). */
export function classifyChangedPaths(changedPaths: readonly string[]): IterationKind {
  return changedPaths.some((path) => !isRunnerPath(path)) ? "execute" : "decompose";
}

/** What the runner makes of the agent's declared status (CONTRACT §7). */
export interface AgentVerdict {
  /** The status the transition table is applied with. */
  status: AgentStatus;
  /** Whether the guard stage runs (done on an EXECUTE iteration with no violation). */
  runGuard: boolean;
  /** A broken agent contract; counts as retry and reaches the next iteration in failure.md. */
  violation?: string;
  /** Not a violation, but the agent must hear it (done on a DECOMPOSE iteration). */
  note?: string;
}

export function judgeAgentStatus(input: {
  selectedId: string;
  selectedAfter: TaskNode;
  previousChildIds: ReadonlySet<string>;
  status: AgentStatus;
  kind: IterationKind;
}): AgentVerdict {
  const { selectedId, selectedAfter, previousChildIds, status, kind } = input;
  const added = selectedAfter.children.filter((child) => !previousChildIds.has(child.id)).length;
  const name = JSON.stringify(selectedId);
  if (status === "decomposed" && added === 0) {
    return {
      status: "retry",
      runGuard: false,
      violation: `The agent said "decomposed" but added no children under ${name}. To decompose, add child nodes to it in .runner/state/tree.json; otherwise answer "done" or "retry".`,
    };
  }
  if (status !== "decomposed" && added > 0) {
    return {
      status: "retry",
      runGuard: false,
      violation: `The agent said "${status}" but added ${added} child node(s) under ${name}. Answer "decomposed" when you split a leaf into children.`,
    };
  }
  if (status === "done" && kind === "decompose") {
    return {
      status: "done",
      runGuard: false,
      note: `The agent said "done" but changed nothing outside .runner/, so the guard did not run and ${name} did not pass. A pass needs a change outside .runner/ and green guards.`,
    };
  }
  return { status, runGuard: status === "done" };
}

export interface Judgement {
  kind: IterationKind;
  verdict: AgentVerdict;
  policy: PolicyResult;
  /** Run the guard command: done, EXECUTE, no contract or policy violation. */
  runGuard: boolean;
  /** The outcome when the guard does not run. */
  outcome: { status: AgentStatus; guard: GuardOutcome };
}

/** Classification and judgement of a leaf iteration whose output and tree are valid. */
export function judgeIteration(input: {
  previousLeaf: TaskNode;
  agentTree: TaskTree;
  status: AgentStatus;
  changedPaths: readonly string[];
  protectedPaths: readonly string[];
  allowedWritePaths: readonly string[] | undefined;
  git?: AgentGitFacts;
}): Judgement {
  // Classified on what the commit will hold: protected paths are taken back before it.
  const kind = classifyChangedPaths(pathsOutside(input.changedPaths, input.protectedPaths));
  const selectedAfter = findNode(input.agentTree, input.previousLeaf.id); // ids are unique: checkAgentTree passed it
  if (!selectedAfter) throw new Error("judgeIteration needs a tree that still holds the selected node (checkAgentTree ensures it)");
  const verdict = judgeAgentStatus({
    selectedId: input.previousLeaf.id,
    selectedAfter,
    previousChildIds: new Set(input.previousLeaf.children.map((child) => child.id)),
    status: input.status,
    kind,
  });
  const policy = checkChangePolicy({
    changedPaths: input.changedPaths,
    protectedPaths: input.protectedPaths,
    allowedWritePaths: kind === "execute" ? input.allowedWritePaths : undefined,
    git: input.git,
  });
  if (policy.failure) {
    // A policy violation fails the guard stage: guard=fail after "done", else a retry. Both cost an attempt.
    const status = verdict.status === "done" ? "done" : "retry";
    return { kind, verdict, policy, runGuard: false, outcome: { status, guard: status === "done" ? "fail" : "skipped" } };
  }
  return { kind, verdict, policy, runGuard: verdict.runGuard, outcome: { status: verdict.status, guard: "skipped" } };
}
