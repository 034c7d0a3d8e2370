// The executor interface (CONTRACT §6): one fresh agent session per iteration, the prompt on stdin,
// the RUNNER_* environment, the whole process group killed at the deadline, output capped.
import type { ExecutorConfig } from "../../schemas/types.generated.js";
import type { ContainmentRecord } from "../containment.js";

export interface ExecutorRequest {
  root: string;
  config: ExecutorConfig;
  prompt: string;
  promptFile: string;
  outputFile: string;
  /** The environment for the agent: the runner's own plus the RUNNER_* variables. */
  env: Record<string, string>;
  deadlineMs: number;
  logFile: string;
  capBytes: number;
  secrets: readonly string[];
  abortSignal?: AbortSignal;
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
}

export interface Executor {
  run(request: ExecutorRequest): Promise<ExecutorResult>;
}
