// The output of the agent (or the guard) as the live views tell it: whole lines, the agent's status
// lines (its turns and tokens so far, src/agents/agent.ts STATUS_PREFIX) kept apart, and the last few
// lines that are not blank. `runner run`'s live block and the status file `runner watch` reads
// (src/cli/live-status-view.ts) show the same lines.
import { STATUS_PREFIX } from "../agents/agent.js";

/** The longest unfinished line kept; a view shows a line clipped to the terminal's width anyway. */
const PARTIAL_CHARS = 4000;

export class AgentLines {
  /** The agent's last status line ("" when it gave none). */
  status = "";
  /** The last `keep` lines that are not blank, oldest first. */
  tail: string[] = [];
  /** Lines that are not blank so far (the status lines not counted). */
  count = 0;
  private partial = "";

  constructor(private readonly keep: number) {}

  /** Takes a chunk of output: the lines it completes are counted and kept. */
  push(text: string): void {
    const lines = (this.partial + text).split(/\r?\n/);
    // (a line that never ends is kept to its first PARTIAL_CHARS characters: memory stays bounded)
    this.partial = (lines.pop() ?? "").slice(0, PARTIAL_CHARS);
    for (const line of lines) {
      if (line.startsWith(STATUS_PREFIX)) this.status = line.slice(STATUS_PREFIX.length);
      else if (line.trim() !== "") {
        this.tail = [...this.tail, line].slice(-this.keep);
        this.count++;
      }
    }
  }

  /** A new iteration: nothing kept. */
  reset(): void {
    this.status = "";
    this.tail = [];
    this.count = 0;
    this.partial = "";
  }
}
