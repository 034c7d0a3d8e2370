// How a child process (the agent, the guard) ended, as the process runner reports it.

/** How a child process (agent or guard) ended. */
export interface ProcessFacts {
  exitCode: number | undefined;
  timedOut: boolean;
  aborted: boolean;
  spawnError: string | undefined;
  durationMs: number;
}
