// The executor interface (CONTRACT §6): one fresh agent session per iteration, the prompt on stdin,
// the RUNNER_* environment, the whole process group killed at the deadline, output capped.
import type { AgentSession } from "../../agents/agent.js";
import type { ExecutorConfig } from "../../schemas/types.generated.js";
import type { ContainmentRecord } from "../process/containment.js";

export interface ExecutorRequest {
  root: string;
  config: ExecutorConfig;
  prompt: string;
  promptFile: string;
  outputFile: string;
  /** The environment for the agent: the runner's own plus the RUNNER_* variables. */
  env: Record<string, string>;
  /** The guard's argv: an agent may run it itself (Claude gets an --allowedTools rule for it). */
  guardCommand: readonly string[];
  deadlineMs: number;
  logFile: string;
  capBytes: number;
  secrets: readonly string[];
  /** Wall clock (ms), for reset times an agent states as local clock times. */
  now: () => number;
  abortSignal?: AbortSignal;
  /** Live output: the agent's own lines, or for an agent of src/agents/ readable lines made from its events. */
  onOutput?: (chunk: string, stream: "stdout" | "stderr") => void;
  /** Sees every chunk of stdout, also beyond the cap (to find a final result line). */
  observeStdout?: (chunk: string) => void;
  /** Called right after the spawn with the containment record (for the crash journal). */
  onSpawn?: (record: ContainmentRecord) => void;
}

export interface ExecutorResult {
  exitCode: number | undefined;
  timedOut: boolean;
  aborted: boolean;
  spawnError: string | undefined;
  durationMs: number;
  /** The argv that was run (before redaction). */
  argv: string[];
  tail: string;
  /** The end of stderr as kept in the log (redacted): the agent's last words when it says nothing else. */
  stderrTail: string;
  /** What an agent's event stream said (session, usage, its own error, a limit); secrets redacted. */
  session?: AgentSession;
  /** What the session was allowed to read of the user's own setup (agents of src/agents/). */
  isolation?: "user" | "clean";
}

export interface Executor {
  run(request: ExecutorRequest): Promise<ExecutorResult>;
}
