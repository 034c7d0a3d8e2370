// The facts the iteration's actors report to the machine (seed 001 §6: adapters report facts, core
// decides). Each is what one actor found out; the verdicts in step-verdicts.ts turn them into the
// machine's decisions.
import type { AgentLimit } from "../agent/agent-limits.js";
import type { AgentOutputCheck } from "../agent/agent-output.js";
import type { AgentUsage } from "../agent/agent-usage.js";
import type { NodePolicyFacts } from "../guard/change-policy.js";
import type { ConfigResult, ResolvedConfig } from "../config/config.js";
import type { LoopRecord } from "../commit/loop-history.js";
import type { Problem } from "../base/problems.js";
import type { AgentGitFacts } from "../agent/agent-git.js";
import type { ProcessFacts } from "../process/process-facts.js";

export type { AgentGitFacts } from "../agent/agent-git.js";
export type { ProcessFacts } from "../process/process-facts.js";
export type { RunnerErrorFact } from "./runner-errors.js";
import type { TaskTree } from "../tree/tree.js";

/** A leaf iteration, a repair of the tree (both run the agent), or a person's re-check of a leaf by the guard alone. */
export type StepKind = "leaf" | "repair" | "recheck";

/** The steps that run the agent. */
export type AgentStepKind = Exclude<StepKind, "recheck">;

/** The kind of a step that runs the agent (a re-check never does). */
export function agentStepKind(stepKind: StepKind): AgentStepKind {
  if (stepKind === "recheck") throw new TypeError("an agent step in a re-check");
  return stepKind;
}

/** The guard's program as found before the agent ran (src/adapters/process/program.ts). */
export interface ProgramIdentity {
  /** The file the command's first word names, absolute; undefined when it was not found. */
  file: string | undefined;
  /** Its identity (device, inode, size, times), or undefined when it was not found. */
  signature: string | undefined;
}

/** A problem the preflight found (src/adapters/guard/preflight.ts): one sentence with the way out. */
export interface PreflightFinding {
  problem: string;
  /** It concerns the agent (a re-check runs none). */
  agent: boolean;
}

/** loadState: the config, the tree and this run's history. */
export interface LoadedState {
  config: ConfigResult;
  tree: { ok: true; tree: TaskTree; text?: string } | { ok: false; problems: Problem[]; missing?: boolean };
  /** This run's loop commits, newest first. */
  records: LoopRecord[];
  /** When the tree is invalid: the tree to repair it against (the last one the runner accepted, else the newest valid one in history). */
  lastValidTree?: TaskTree;
  /** The guard's program, found before the agent runs. */
  guardProgram: ProgramIdentity;
  /** What the preflight found wrong (the agent's program, the guard's, its recipe); empty when the config is invalid. */
  preflight: PreflightFinding[];
  /** Who the loop commit is by: the run's identity (src/adapters/audit/run-history.ts). */
  identity: { name: string; email: string };
  /** The leaves an imported plan marks finished (.runner/state/finished.json; none when it is absent or unreadable). */
  finished?: string[];
}

/** loadInterrupted: what recording an interrupted iteration needs. */
export interface InterruptedState {
  config: ResolvedConfig;
  guardProgram: ProgramIdentity;
  records: LoopRecord[];
  /** The valid tree the interrupted iteration began from (HEAD's, or the last accepted one). */
  previousTree: TaskTree;
  /** It is HEAD's tree file (which the interrupted iteration began from), not one from further back. */
  treeFromStart: boolean;
  /** Who the loop commit is by: the run's identity. */
  identity: { name: string; email: string };
}

/** preparePrompt: the prompt pack, and the selected node's policy sidecar as read. */
export interface PromptFacts {
  /** The prompt pack as the agent gets it (secrets redacted); empty when the policy sidecar is invalid (nothing was written). */
  prompt: string;
  /** The selected node's policy sidecar, when it has one. */
  policy: NodePolicyFacts | undefined;
}

/** runAgent: the agent session. */
export interface AgentRunFacts extends ProcessFacts {
  argv: string[];
  /** The iteration's deadline (ms since the epoch), set when the agent started; the guard shares it. */
  deadlineMs: number;
  /** The agent's answer file read and checked, when the session ended (src/adapters/agent/agent-answer.ts). */
  answer?: AgentOutputCheck;
  /** The agent failed on its own, without an answer (src/core/agent/agent-failure.ts): the clause for the runner error. */
  failure?: string;
  /** The agent's own error message (Codex turn.failed, Claude is_error), also when it answered anyway. */
  ownError?: string;
  /** Tokens and cost, from the agent's event stream. */
  usage?: AgentUsage;
  /** A rate or usage limit the agent met (the run loop decides whether to wait). */
  limit?: AgentLimit;
  /** The agent's session (Codex thread id, Claude session id), to resume or inspect it. */
  sessionId?: string;
  /** What the agent's session was allowed to read of the user's own setup. */
  isolation?: "user" | "clean";
}

/** The git control files (config, info/*, hooks) as they were: text and mode, null when absent. */
export type ControlSnapshot = Record<string, { text: string; mode: number } | null>;

/** collectResult: what the agent left behind. */
export interface CollectedFacts {
  /** The agent's answer, read and checked once (by the session, or here when the session did not end). */
  answer: AgentOutputCheck;
  /**
   * The tree file freshly parsed as JSON, or the parse problem; or `unchanged`: git finds the file as
   * it was when the iteration's valid tree was loaded from it (the agent left it alone), so it is
   * neither read nor checked again (step-verdicts.ts makes the fresh tree from what was loaded).
   */
  treeData: { ok: true; data: unknown } | { ok: true; unchanged: true } | { ok: false; problems: Problem[] };
  /** Changed paths (tracked and untracked, not ignored) against the starting commit, sorted. */
  changedPaths: string[];
  git: AgentGitFacts;
}

/** runGuard: the guard command. */
export interface GuardFacts extends ProcessFacts {
  /** Its output as it may be fed back to the agent (CONTRACT §9 truncation). */
  output: string;
}
