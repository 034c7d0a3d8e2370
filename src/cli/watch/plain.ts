// `runner watch` into a pipe or a plain terminal (or with --plain): one line per event, for `| tee` and
// CI logs — a runner starting and ending, each state the iteration machine enters (with the time
// spent in the one it left), the agent's and the guard's lines, the lines `runner run` prints about
// each iteration (the guard's last lines after a red one) and its summary. Made by comparing what
// the follower sees now with what was already told.
import { formatDuration } from "../../core/step/durations.js";
import { printable } from "../display-width.js";
import { PLAIN, type Style } from "../style.js";
import type { RunSnapshot } from "./follow.js";
import { START, trackEnded } from "./machine.js";

interface Told {
  /** What was last said of the run's place (waiting for it, checked out nowhere, …). */
  place?: string;
  runnerPid?: number;
  /** The newest iteration whose machine states were told. */
  iteration?: number;
  /** The output lines told: for which runner and iteration, and how many. */
  lines?: { pid: number; iteration: number | null; count: number };
  /** The log lines told: for which runner, up to which number. */
  log?: { pid: number; seq: number };
  /** The runner whose end was told. */
  ended?: number;
  /** Whether "waiting for `runner run`" was told since the last runner. */
  idle?: boolean;
}

export class PlainWatch {
  private readonly told = new Map<string, Told>();

  constructor(
    private readonly write: (line: string) => void,
    private readonly options: { prefix: boolean; style?: Style } = { prefix: false },
  ) {}

  /** Tells what is new about the run. Returns true when a runner it saw working has ended since. */
  see(run: RunSnapshot): boolean {
    const told = this.told.get(run.runId) ?? {};
    this.told.set(run.runId, told);
    const style = this.options.style ?? PLAIN;
    const say = (text: string, tone?: "dim" | "failed" | "warning" | "passed") =>
      this.write(`${this.options.prefix ? `[${run.runId}] ` : ""}${tone ? style[tone](text) : text}\n`);

    const place = !run.branchExists
      ? `waiting for run ${run.runId} to begin (\`runner start --run-id ${run.runId}\`)`
      : run.worktree === undefined
        ? `run ${run.runId} is checked out nowhere: waiting for it to be checked out`
        : `watching run ${run.runId} in ${run.worktree}`;
    if (place !== told.place) {
      say(place, "dim");
      told.place = place;
      told.idle = false;
    }
    let ended = false;
    const runner = run.runner;
    const track = run.machine;
    /** Tells what runner `pid` did since the last look: states entered, output lines, printed lines, its end. */
    const tell = (pid: number, firstSight: boolean) => {
      const live = run.live !== undefined && run.live.run_id === run.runId && run.live.pid === pid ? run.live : undefined;
      const logs = () => {
        if (live === undefined) return;
        const seq = told.log?.pid === live.pid ? told.log.seq : 0;
        for (const entry of live.log) if (entry.seq > seq) say(printable(entry.text), entry.text.startsWith("    ") ? "failed" : undefined);
        told.log = { pid: live.pid, seq: Math.max(seq, ...live.log.map((entry) => entry.seq)) };
      };
      // At first sight, the journal read so far is history, but for the iteration under way.
      const steps = firstSight
        ? run.steps.filter((step) => track !== undefined && !trackEnded(track) && step.iteration === track.iteration)
        : run.steps;
      for (const step of steps) {
        // What the run printed about the iteration before comes before the next one's first state.
        if (step.iteration > (told.iteration ?? 0)) {
          logs();
          told.iteration = step.iteration;
        }
        const spent =
          step.from === START
            ? step.to
            : step.spentMs === undefined
              ? `${step.from} → ${step.to}`
              : `${step.to} (${step.from} ${formatDuration(step.spentMs, "timer")})`;
        say(`iteration ${step.iteration} · ${spent}`, "dim");
      }
      if (live === undefined) return;
      const lines = told.lines?.pid === live.pid && told.lines.iteration === live.iteration ? told.lines.count : 0;
      const fresh = live.line_count - lines;
      if (fresh > 0) {
        const shown = live.lines.slice(-fresh);
        if (fresh > shown.length) say(`  │ … ${fresh - shown.length} more line${fresh - shown.length === 1 ? "" : "s"}`, "dim");
        for (const line of shown) say(`  │ ${printable(line)}`, "dim");
      }
      told.lines = { pid: live.pid, iteration: live.iteration, count: Math.max(lines, live.line_count) };
      logs();
      if (live.ended && told.ended !== live.pid) {
        for (const line of endedLines(run, live.pid)) say(line);
        told.ended = live.pid;
        ended = true;
      }
    };

    const current = told.runnerPid;
    if (current !== undefined) {
      tell(current, false);
      // Gone (or another took its place): its end, when its summary was not told.
      if (runner?.pid !== current) {
        if (told.ended !== current) {
          for (const line of endedLines(run, current)) say(line, "warning");
          told.ended = current;
          ended = true;
        }
        told.runnerPid = undefined;
        told.idle = false;
      }
    }
    if (runner !== undefined && told.runnerPid === undefined) {
      say(`${printable(runner.command)} (pid ${runner.pid}) is working on run ${run.runId} since ${printable(runner.since)}`);
      told.runnerPid = runner.pid;
      told.iteration = track?.iteration;
      tell(runner.pid, true);
    }
    if (!ended && run.worktree !== undefined && runner === undefined && !told.idle) {
      say("no runner works on it now: waiting for `runner run`", "dim");
      told.idle = true;
    }
    return ended;
  }
}

/** How the run of runner `pid` ended, as its status file tells it: the reason, then the summary `runner run` printed. */
export function endedLines(run: RunSnapshot, pid = run.runner?.pid ?? run.live?.pid): string[] {
  const live = run.live;
  const ended = live !== undefined && live.pid === pid && live.run_id === run.runId ? live.ended : null;
  if (ended === null)
    return [`Run ${run.runId}: its runner (pid ${pid ?? "?"}) is gone without a summary (killed?); \`runner run\` continues the run.`];
  return [...(ended.reason !== "" && !ended.lines.includes(ended.reason) ? [ended.reason] : []), ...ended.lines].map(printable);
}
