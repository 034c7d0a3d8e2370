// Live progress of `runner run` and `runner step`: on a terminal a redrawn block (run, iteration,
// node, elapsed time, phase, the agent's turns and tokens so far, the last lines of output — for
// Codex and Claude the commands they run, the files they edit and their messages, made from their
// events by src/agents/event-reader.ts — and a progress line: leaves passed, iteration n of max, the
// run's elapsed time); otherwise one plain line per iteration; with --json one event object per
// line. After an iteration whose guard failed, the last lines of the guard's output. The summary
// adds the run's tokens and cost, and names the report command.
import { describeUsage } from "../core/agent/agent-usage.js";
import { describeFailures } from "../core/commit/iteration-outcome.js";
import type { RunNotice, RunSummary } from "../run/run-loop.js";
import type { StepResult } from "../step/run-step.js";
import type { ProgressEvent } from "../step/deps.js";
import { EXIT } from "../exit-codes.js";
import { AgentLines } from "./agent-lines.js";
import { iterationLines } from "./step-report.js";
import { clipToWidth, printable, rowsOf } from "./display-width.js";
import { leafCount, type LeafCount } from "./progress-facts.js";
import { formatDuration } from "../core/step/durations.js";
import { iterationEvent, noticeEvent, summaryEvent } from "./run-events.js";
import { PLAIN, type Style } from "./style.js";

export interface ProgressView {
  progress(event: ProgressEvent): void;
  step(result: StepResult): void;
  /** A wait (a retry's backoff, a limit's reset) or a stuck leaf. */
  notice(notice: RunNotice, runId: string | undefined): void;
  summary(summary: RunSummary): void;
  close(): void;
}

/** What the progress line of the live block is made of, besides what the steps tell. */
export interface RunFacts {
  /** When this run (this invocation of `run` or `step`) began, epoch ms. */
  startedAt: number;
  /** The iterations it may take (1 for `runner step`). */
  maxIterations?: number;
  /** Leaves passed and in all, as the tree stood when it began (undefined: unknown, an invalid tree). */
  leaves?: LeafCount;
}

export interface ViewOptions {
  style?: Style;
  /** The run's id where known before its first step (from the branch or --run-id), for the report line. */
  runId?: string;
}

const TAIL_LINES = 3;

function seconds(ms: number): string {
  return formatDuration(ms, "timer");
}

/**
 * The run's last lines on stdout: how it ended when it ended well or stopped early (an error's
 * sentence goes to stderr, once: src/cli/commands/run.ts), then the counts and times.
 */
export function summaryLines(summary: RunSummary): string[] {
  const counts = [
    `${summary.iterations} iteration${summary.iterations === 1 ? "" : "s"}, ${summary.passes} passed, ${describeFailures(summary.failures)}; time: agent ${seconds(summary.agentMs)}, guard ${seconds(summary.guardMs)}${summary.waitMs > 0 ? `, waiting ${seconds(summary.waitMs)}` : ""}, runner ${seconds(summary.runnerMs)} (total ${seconds(summary.totalMs)})`,
    ...(summary.usage ? [`usage: ${describeUsage(summary.usage)}`] : []),
  ];
  if (summary.exitCode === EXIT.ok || summary.exitCode === EXIT.stoppedEarly) return [summary.reason, ...counts];
  // A refusal before any iteration: the sentence on stderr is all there is to say.
  return summary.iterations > 0 ? counts : [];
}

/** The line that names the report command, for a run whose id is known. */
export function reportLine(runId: string): string {
  return `Report: runner report (writes .runner/iterations/${runId}/report.html)`;
}

/** The summary as the plain and terminal views print it: coloured, then the report command. */
function styledSummary(summary: RunSummary, style: Style, runId: string | undefined): string[] {
  const lines = summaryLines(summary);
  if (lines.length === 0) return [];
  const reasonTone = summary.exitCode === EXIT.ok ? style.passed : summary.exitCode === EXIT.stoppedEarly ? style.warning : (text: string) => text;
  const hasReason = summary.exitCode === EXIT.ok || summary.exitCode === EXIT.stoppedEarly;
  const styled = lines.map((line, i) => (i === 0 && hasReason ? reasonTone(line) : line));
  const id = summary.runId ?? runId;
  return id === undefined ? styled : [...styled, style.dim(reportLine(id))];
}

function noticeLine(notice: RunNotice, style: Style): string {
  return notice.type === "stuck" ? style.warning(notice.message) : style.dim(notice.message);
}

/** A notice that ends the run (a stall, a stuck leaf under --halt-on-stuck) is the summary's first sentence: a person reads it once (the JSON events keep both). */
export function shownAsLine(notice: RunNotice): boolean {
  return !(notice.type === "stuck" && notice.endsRun);
}

/** One JSON object per line on stdout. */
export function jsonView(write: (line: string) => void, now: () => number): ProgressView {
  const emit = (value: object) => write(`${JSON.stringify(value)}\n`);
  return {
    progress(event) {
      if (event.type === "phase")
        emit({
          type: "phase",
          phase: event.phase,
          iteration: event.iteration ?? null,
          node_id: event.nodeId ?? null,
          time: new Date(now()).toISOString(),
        });
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

/** One plain line per iteration (stdout is not a terminal), the guard's last lines after a red guard. */
export function plainView(write: (line: string) => void, options: ViewOptions = {}): ProgressView {
  const style = options.style ?? PLAIN;
  return {
    progress() {},
    step(result) {
      for (const line of iterationLines(result, style)) write(`${line}\n`);
    },
    notice(notice) {
      if (shownAsLine(notice)) write(`${noticeLine(notice, style)}\n`);
    },
    summary(summary) {
      for (const line of styledSummary(summary, style, options.runId)) write(`${line}\n`);
    },
    close() {},
  };
}

/** A block redrawn in place on a terminal. */
export function terminalView(
  stream: NodeJS.WriteStream,
  now: () => number,
  runLabel: string,
  options: ViewOptions & { facts?: RunFacts } = {},
): ProgressView {
  const style = options.style ?? PLAIN;
  const facts: RunFacts = options.facts ?? { startedAt: now() };
  let leaves = facts.leaves;
  /** Iterations this view has seen recorded. */
  let recorded = 0;
  let phase = "starting";
  let iteration: number | undefined;
  let node = "";
  let iterationStart = now();
  /** The last lines, and the agent's turns and tokens so far (its status lines) for the head line. */
  const output = new AgentLines(TAIL_LINES);
  /** Terminal rows the block took when drawn: what the next draw erases. */
  let drawn = 0;
  // A pseudo-terminal without a size reports 0 columns.
  const columns = () => stream.columns || 100;
  // One column short of the width: a line that fills the last column makes some terminals wrap.
  const clip = (line: string) => clipToWidth(line, Math.max(40, columns() - 1));
  const erase = () => {
    if (drawn > 0) stream.write(`\x1b[${drawn}A\x1b[J`);
    drawn = 0;
  };
  const progressLine = () => {
    const parts = [
      leaves ? `${leaves.passed}/${leaves.total} ${leaves.total === 1 ? "leaf" : "leaves"} passed` : "leaves: …",
      `iteration ${recorded + 1}${facts.maxIterations !== undefined ? ` of ${facts.maxIterations}` : ""}`,
      `${formatDuration(now() - facts.startedAt, "clock")} elapsed`,
    ];
    return `  ${parts.join(" · ")}`;
  };
  const draw = () => {
    erase();
    // Phase and elapsed time before the node's title, which is the part clipped on a narrow terminal.
    const status = output.status ? ` · ${output.status}` : "";
    const head = `▶ run ${runLabel} · iteration ${iteration ?? "…"} · ${phase} · ${seconds(now() - iterationStart)}${status} · ${node || "…"}`;
    // Clipped before it is coloured: the colour codes are never cut.
    const lines = [clip(printable(head)), style.dim(clip(progressLine())), ...output.tail.map((line) => style.dim(clip(`  │ ${printable(line)}`)))];
    stream.write(`${lines.join("\n")}\n`);
    drawn = lines.reduce((rows, line) => rows + rowsOf(line, columns()), 0);
  };
  const timer = setInterval(draw, 250);
  timer.unref();
  return {
    progress(event) {
      if (event.type === "phase") {
        if (event.iteration !== iteration) {
          iteration = event.iteration;
          iterationStart = now();
          output.reset();
        }
        phase = event.phase === "prompt" ? "preparing" : event.phase;
        node = event.nodeId ? `${event.nodeId}${event.title ? ` “${event.title}”` : ""}` : "repair";
      } else if (event.text) output.push(event.text);
      draw();
    },
    step(result) {
      erase();
      for (const line of iterationLines(result, style)) stream.write(`${line}\n`);
      if (result.record) recorded++;
      if (result.record?.treeToWrite) leaves = leafCount(result.record.treeToWrite);
      phase = "starting";
      output.reset();
    },
    notice(notice) {
      erase();
      if (shownAsLine(notice)) stream.write(`${noticeLine(notice, style)}\n`);
      if (notice.type === "wait") {
        phase = `waiting until ${new Date(notice.until).toLocaleTimeString("en-GB")}`;
        iterationStart = now();
      }
      draw();
    },
    summary(summary) {
      erase();
      for (const line of styledSummary(summary, style, options.runId)) stream.write(`${line}\n`);
    },
    close() {
      clearInterval(timer);
      erase();
    },
  };
}
