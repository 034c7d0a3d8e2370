// What `runner run` publishes for `runner watch` while it works (src/core/step/live-status.ts): a view of
// the run like the terminal's live block, written to the run's status file instead of the screen.
// Output (many small chunks) is written at most every WRITE_EVERY_MS; a new phase and the end of an
// iteration at once unless the last write was less than that ago; a notice and the summary at once. The writes are small and synchronous and never wait for a reader:
// a watch cannot slow the run down.
import type { LiveStatusFile } from "../adapters/records/live-status.js";
import { totalsOf } from "../core/agent/agent-usage.js";
import type { LiveStatus } from "../core/step/live-status.js";
import { LIVE_LIMITS } from "../core/step/live-status.js";
import { AgentLines } from "./agent-lines.js";
import { guardTail } from "./guard-tail.js";
import { reportLine, summaryLines, shownAsLine, type ProgressView } from "./progress.js";
import { GUARD_TAIL_LINES, iterationLines } from "./step-report.js";

const WRITE_EVERY_MS = 250;

export interface LiveStatusFacts {
  runId: string;
  /** When the run began, epoch ms. */
  startedAt: number;
  maxIterations: number | undefined;
  budgets: LiveStatus["budgets"];
}

/** The view, and `note`: a line of the run's own for the watch (not an iteration's, not a notice's). */
export function liveStatusView(file: LiveStatusFile, now: () => number, facts: LiveStatusFacts): ProgressView & { note(line: string): void } {
  const iso = (ms: number) => new Date(ms).toISOString();
  const output = new AgentLines(LIVE_LIMITS.lines);
  let seq = 0;
  const status: LiveStatus = {
    version: 1,
    run_id: facts.runId,
    pid: process.pid,
    started_at: iso(facts.startedAt),
    updated_at: iso(now()),
    state: "working",
    iteration: null,
    node_id: null,
    title: null,
    phase: null,
    phase_since: null,
    agent_status: null,
    lines: [],
    line_count: 0,
    iterations_done: 0,
    max_iterations: facts.maxIterations ?? null,
    passes: 0,
    failures: 0,
    usage: null,
    budgets: facts.budgets,
    guard_tail: null,
    recent: [],
    log: [],
    wait: null,
    ended: null,
  };
  let timer: NodeJS.Timeout | undefined;
  let written = Number.NEGATIVE_INFINITY;
  const write = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    written = now();
    status.updated_at = iso(written);
    status.lines = output.tail;
    status.line_count = output.count;
    status.agent_status = output.status || null;
    file.write(status);
  };
  const soon = () => {
    timer ??= setTimeout(write, WRITE_EVERY_MS);
    timer.unref();
  };
  // A new phase or the end of an iteration: at once, unless the file was written a moment ago (an
  // iteration of a fast agent has five of them in 100 ms: one write then, the rest with the next).
  const promptly = () => (now() - written >= WRITE_EVERY_MS ? write() : soon());
  const log = (lines: readonly string[]) => {
    for (const text of lines) status.log.push({ seq: ++seq, text });
    status.log = status.log.slice(-LIVE_LIMITS.log);
  };
  return {
    progress(event) {
      if (event.type === "phase") {
        if (event.iteration !== status.iteration) output.reset();
        status.state = "working";
        status.wait = null;
        status.iteration = event.iteration ?? null;
        status.node_id = event.nodeId ?? null;
        // (the title comes with the phases of a leaf; the commit's phase names the node alone)
        if (event.title !== undefined || event.nodeId === undefined) status.title = event.title ?? null;
        status.phase = event.phase;
        status.phase_since = iso(now());
        promptly();
      } else if (event.text) {
        output.push(event.text);
        soon();
      }
    },
    step(result) {
      log(iterationLines(result));
      const record = result.record;
      if (record) {
        status.iterations_done += 1;
        const passed = record.passesAfter === true && record.guard === "pass";
        if (passed) status.passes += 1;
        if (record.runnerError || record.guard === "fail" || record.failure) status.failures += 1;
        if (result.usage) {
          const usage = totalsOf(result.usage);
          status.usage = {
            tokens: (status.usage?.tokens ?? 0) + usage.input_tokens + usage.output_tokens,
            cost_usd: usage.cost_usd === null ? (status.usage?.cost_usd ?? null) : (status.usage?.cost_usd ?? 0) + usage.cost_usd,
          };
        }
        status.recent = [...status.recent, { iteration: record.iteration, ms: result.durations.totalMs, passed }].slice(-LIVE_LIMITS.recent);
        if (record.guard !== "skipped") {
          const lines = guardTail(record.failure, GUARD_TAIL_LINES);
          status.guard_tail = record.guard === "fail" && lines.length > 0 ? { iteration: record.iteration, lines } : null;
        }
      }
      status.phase = null;
      status.phase_since = iso(now());
      output.reset();
      promptly();
    },
    notice(notice) {
      if (shownAsLine(notice)) log([notice.message]);
      if (notice.type === "wait") {
        status.state = "waiting";
        status.wait = { until: iso(notice.until), message: notice.message };
      }
      write();
    },
    summary(summary) {
      const lines = summaryLines(summary);
      const id = summary.runId ?? facts.runId;
      status.state = "ended";
      status.phase = null;
      status.wait = null;
      status.ended = { exit_code: summary.exitCode, reason: summary.reason, lines: [...lines, reportLine(id)] };
      // A run refused before its first iteration (preflight, a bad tree) leaves no file behind: nothing happened to watch.
      if (status.iterations_done === 0) file.remove();
      else write();
    },
    note(line) {
      log([line]);
      write();
    },
    close() {
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
    },
  };
}
