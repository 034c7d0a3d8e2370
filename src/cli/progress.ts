// Live progress of `runner run`: on a terminal a redrawn block (run, iteration, node, elapsed time,
// phase, the agent's turns and tokens so far, the last lines of output — for Codex and Claude the
// commands they run, the files they edit and their messages, made from their events by
// src/core/agent-events.ts); otherwise one plain line per iteration; with --json one event object
// per line. The summary adds the run's tokens and cost.
import { STATUS_PREFIX } from "../core/agent-events.js";
import { describeUsage } from "../core/agent-usage.js";
import type { RunNotice, RunSummary } from "../run/run-loop.js";
import type { StepResult } from "../step/run-step.js";
import type { ProgressEvent } from "../step/deps.js";
import { EXIT } from "../exit-codes.js";
import { describeIteration } from "./commands/step.js";
import { iterationEvent, noticeEvent, summaryEvent } from "./run-events.js";

export interface ProgressView {
  progress(event: ProgressEvent): void;
  step(result: StepResult): void;
  /** A wait (a retry's backoff, a limit's reset) or a stuck leaf. */
  notice(notice: RunNotice, runId: string | undefined): void;
  summary(summary: RunSummary): void;
  close(): void;
}

const TAIL_LINES = 3;

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}

/**
 * The run's last lines on stdout: how it ended when it ended well or stopped early (an error's
 * sentence goes to stderr, once: src/cli/commands/run.ts), then the counts and times.
 */
export function summaryLines(summary: RunSummary): string[] {
  const counts = [
    `${summary.iterations} iteration${summary.iterations === 1 ? "" : "s"}, ${summary.passes} passed, ${summary.failures} failed; time: agent ${seconds(summary.agentMs)}, guard ${seconds(summary.guardMs)}${summary.waitMs > 0 ? `, waiting ${seconds(summary.waitMs)}` : ""}, runner ${seconds(summary.runnerMs)} (total ${seconds(summary.totalMs)})`,
    ...(summary.usage ? [`usage: ${describeUsage(summary.usage)}`] : []),
  ];
  if (summary.exitCode === EXIT.ok || summary.exitCode === EXIT.stoppedEarly) return [summary.reason, ...counts];
  // A refusal before any iteration: the sentence on stderr is all there is to say.
  return summary.iterations > 0 ? counts : [];
}

/** One JSON object per line on stdout. */
export function jsonView(write: (line: string) => void, now: () => number): ProgressView {
  const emit = (value: object) => write(`${JSON.stringify(value)}\n`);
  return {
    progress(event) {
      if (event.type === "phase") emit({ type: "phase", phase: event.phase, iteration: event.iteration ?? null, node_id: event.nodeId ?? null, time: new Date(now()).toISOString() });
    },
    step(result) {
      emit(iterationEvent(result, now()));
    },
    notice(notice, runId) {
      emit(noticeEvent(notice, runId, now()));
    },
    summary(summary) {
      emit(summaryEvent(summary, now()));
    },
    close() {},
  };
}

/** One plain line per iteration (stdout is not a terminal). */
export function plainView(write: (line: string) => void): ProgressView {
  return {
    progress() {},
    step(result) {
      const line = describeIteration(result);
      if (line) write(`${line}\n`);
    },
    notice(notice) {
      write(`${notice.message}\n`);
    },
    summary(summary) {
      for (const line of summaryLines(summary)) write(`${line}\n`);
    },
    close() {},
  };
}

/** A block redrawn in place on a terminal. */
export function terminalView(stream: NodeJS.WriteStream, now: () => number, runLabel: string): ProgressView {
  let phase = "starting";
  let iteration: number | undefined;
  let node = "";
  let iterationStart = now();
  let partial = "";
  let tail: string[] = [];
  /** The agent's turns and tokens so far (its status lines), shown in the head line. */
  let agentStatus = "";
  let drawn = 0;
  // A pseudo-terminal without a size reports 0 columns.
  const width = () => Math.max(40, (stream.columns || 100) - 1);
  const clip = (line: string) => (line.length > width() ? `${line.slice(0, width() - 1)}…` : line);
  const erase = () => {
    if (drawn > 0) stream.write(`\x1b[${drawn}A\x1b[J`);
    drawn = 0;
  };
  const draw = () => {
    erase();
    // Phase and elapsed time before the node's title, which is the part clipped on a narrow terminal.
    const status = agentStatus ? ` · ${agentStatus}` : "";
    const head = `▶ run ${runLabel} · iteration ${iteration ?? "…"} · ${phase} · ${seconds(now() - iterationStart)}${status} · ${node || "…"}`;
    const lines = [clip(head), ...tail.map((line) => clip(`  │ ${line}`))];
    stream.write(`${lines.join("\n")}\n`);
    drawn = lines.length;
  };
  const timer = setInterval(draw, 250);
  timer.unref();
  return {
    progress(event) {
      if (event.type === "phase") {
        if (event.iteration !== iteration) {
          iteration = event.iteration;
          iterationStart = now();
          tail = [];
          partial = "";
          agentStatus = "";
        }
        phase = event.phase === "prompt" ? "preparing" : event.phase;
        node = event.nodeId ? `${event.nodeId}${event.title ? ` “${event.title}”` : ""}` : "repair";
      } else if (event.text) {
        const lines = (partial + event.text).split(/\r?\n/);
        partial = lines.pop() ?? "";
        for (const line of lines) {
          if (line.startsWith(STATUS_PREFIX)) agentStatus = line.slice(STATUS_PREFIX.length);
          else if (line.trim() !== "") tail = [...tail, line].slice(-TAIL_LINES);
        }
      }
      draw();
    },
    step(result) {
      erase();
      const line = describeIteration(result);
      if (line) stream.write(`${line}\n`);
      phase = "starting";
      tail = [];
      agentStatus = "";
    },
    notice(notice) {
      erase();
      stream.write(`${notice.message}\n`);
      if (notice.type === "wait") {
        phase = `waiting until ${new Date(notice.until).toLocaleTimeString("en-GB")}`;
        iterationStart = now();
      }
      draw();
    },
    summary(summary) {
      erase();
      for (const line of summaryLines(summary)) stream.write(`${line}\n`);
    },
    close() {
      clearInterval(timer);
      erase();
    },
  };
}
