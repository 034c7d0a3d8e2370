// The status file of a `runner run` in progress (CONTRACT §2, §8: `.runner/iterations/<run-id>/live.json`),
// what `runner watch` shows beside the journal of events, the iteration logs and the commits: the
// phase, the agent's last lines (the redacted lines `runner run` prints), the lines it printed about
// each iteration, the guard's last lines after a red guard, usage against the budgets, the iterations
// done, and the summary once it ended. Its size is fixed (LIVE_STATUS_CAP): every list and text has a
// bound, and what still does not fit is dropped, oldest first. Pure: the run writes it
// (src/adapters/records/live-status.ts), the watch reads it back as untrusted input (the agent can write
// there too): `parseLiveStatus` takes only what has the right type and size, and never throws.
import { jsonObject } from "../base/json-object.js";

/** The file's size is at most this many bytes. */
export const LIVE_STATUS_CAP = 16 * 1024;

/** Bounds of the lists and texts. */
export const LIVE_LIMITS = { lines: 8, log: 24, recent: 12, guardLines: 8, endedLines: 6, lineChars: 300, textChars: 600 } as const;

export interface LiveUsage {
  tokens: number;
  cost_usd: number | null;
}

export interface LiveStatus {
  version: 1;
  run_id: string;
  /** The `runner run` process. */
  pid: number;
  started_at: string;
  updated_at: string;
  /** working: an iteration or between two; waiting: a retry's backoff or a limit's reset; ended: the summary is in `ended`. */
  state: "working" | "waiting" | "ended";
  iteration: number | null;
  node_id: string | null;
  title: string | null;
  /** prompt, agent, guard, commit, or null between iterations. */
  phase: string | null;
  phase_since: string | null;
  /** The agent's own status line (turns, tokens so far). */
  agent_status: string | null;
  /** The last lines of the agent's (then the guard's) output in this iteration, and how many there were. */
  lines: string[];
  line_count: number;
  /** Iterations this `runner run` recorded, and how many it may take. */
  iterations_done: number;
  max_iterations: number | null;
  passes: number;
  failures: number;
  /** What this `runner run` spent (its budgets count from its start). */
  usage: LiveUsage | null;
  budgets: { seconds: number | null; tokens: number | null; cost_usd: number | null };
  /** The guard's last lines after the newest iteration whose guard ran, when it was red. */
  guard_tail: { iteration: number; lines: string[] } | null;
  /** The newest iterations of this `runner run`: how long each took, and whether it passed a leaf. */
  recent: { iteration: number; ms: number; passed: boolean }[];
  /** The lines `runner run` printed about its iterations and notices, numbered from 1. */
  log: { seq: number; text: string }[];
  wait: { until: string; message: string } | null;
  ended: { exit_code: number; reason: string; lines: string[] } | null;
}

const clip = (text: string, chars: number) => (text.length > chars ? `${text.slice(0, chars - 1)}…` : text);

/** The status bounded as the file keeps it. */
export function boundLiveStatus(status: LiveStatus): LiveStatus {
  const line = (text: string) => clip(text, LIVE_LIMITS.lineChars);
  const text = (value: string | null) => (value === null ? null : clip(value, LIVE_LIMITS.textChars));
  return {
    ...status,
    run_id: clip(status.run_id, 64),
    node_id: text(status.node_id),
    title: text(status.title),
    phase: text(status.phase),
    agent_status: text(status.agent_status),
    lines: status.lines.slice(-LIVE_LIMITS.lines).map(line),
    guard_tail: status.guard_tail && {
      iteration: status.guard_tail.iteration,
      lines: status.guard_tail.lines.slice(0, LIVE_LIMITS.guardLines).map(line),
    },
    recent: status.recent.slice(-LIVE_LIMITS.recent),
    log: status.log.slice(-LIVE_LIMITS.log).map((entry) => ({ seq: entry.seq, text: line(entry.text) })),
    wait: status.wait && { until: status.wait.until, message: clip(status.wait.message, LIVE_LIMITS.textChars) },
    ended: status.ended && {
      exit_code: status.ended.exit_code,
      reason: clip(status.ended.reason, LIVE_LIMITS.textChars),
      lines: status.ended.lines.slice(0, LIVE_LIMITS.endedLines).map((entry) => clip(entry, LIVE_LIMITS.textChars)),
    },
  };
}

/** The file's text: the status bounded, and within LIVE_STATUS_CAP bytes (the oldest log lines, then output lines, dropped). */
export function liveStatusText(status: LiveStatus): string {
  const bounded = boundLiveStatus(status);
  const encoder = new TextEncoder();
  for (;;) {
    const text = `${JSON.stringify(bounded)}\n`;
    if (encoder.encode(text).length <= LIVE_STATUS_CAP) return text;
    if (bounded.log.length > 0) bounded.log = bounded.log.slice(1);
    else if (bounded.lines.length > 0) bounded.lines = bounded.lines.slice(1);
    else if (bounded.guard_tail && bounded.guard_tail.lines.length > 0)
      bounded.guard_tail = { ...bounded.guard_tail, lines: bounded.guard_tail.lines.slice(1) };
    else return `${JSON.stringify({ ...bounded, title: null, agent_status: null, ended: bounded.ended && { ...bounded.ended, lines: [] } })}\n`;
  }
}

type Json = Record<string, unknown>;
const object = (value: unknown): Json | undefined => jsonObject(value);
const string = (value: unknown, chars: number): string | null => (typeof value === "string" ? clip(value, chars) : null);
const count = (value: unknown): number | null => (typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : null);
const amount = (value: unknown): number | null => (typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : null);
const strings = (value: unknown, max: number, chars: number): string[] =>
  Array.isArray(value)
    ? value
        .slice(-max)
        .filter((entry): entry is string => typeof entry === "string")
        .map((entry) => clip(entry, chars))
    : [];
const objects = (value: unknown, max: number): Json[] =>
  Array.isArray(value) ? value.slice(-max).flatMap((entry) => (object(entry) ? [object(entry)!] : [])) : [];

/**
 * The status file's text read back, or undefined when it is not one. Untrusted: every field is taken
 * only with its type, texts and lists cut to their bounds, what is wrong left out.
 */
export function parseLiveStatus(text: string): LiveStatus | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const raw = object(value);
  if (!raw || raw.version !== 1) return undefined;
  const runId = string(raw.run_id, 64);
  const pid = count(raw.pid);
  if (runId === null || pid === null) return undefined;
  const state = raw.state === "working" || raw.state === "waiting" || raw.state === "ended" ? raw.state : "working";
  const usage = object(raw.usage);
  const budgets = object(raw.budgets) ?? {};
  const guardTail = object(raw.guard_tail);
  const wait = object(raw.wait);
  const ended = object(raw.ended);
  const lineChars = LIVE_LIMITS.lineChars;
  const textChars = LIVE_LIMITS.textChars;
  return {
    version: 1,
    run_id: runId,
    pid,
    started_at: string(raw.started_at, 40) ?? "",
    updated_at: string(raw.updated_at, 40) ?? "",
    state,
    iteration: count(raw.iteration),
    node_id: string(raw.node_id, textChars),
    title: string(raw.title, textChars),
    phase: string(raw.phase, 40),
    phase_since: string(raw.phase_since, 40),
    agent_status: string(raw.agent_status, textChars),
    lines: strings(raw.lines, LIVE_LIMITS.lines, lineChars),
    line_count: count(raw.line_count) ?? 0,
    iterations_done: count(raw.iterations_done) ?? 0,
    max_iterations: count(raw.max_iterations),
    passes: count(raw.passes) ?? 0,
    failures: count(raw.failures) ?? 0,
    usage: usage && count(usage.tokens) !== null ? { tokens: count(usage.tokens)!, cost_usd: amount(usage.cost_usd) } : null,
    budgets: { seconds: amount(budgets.seconds), tokens: amount(budgets.tokens), cost_usd: amount(budgets.cost_usd) },
    guard_tail:
      guardTail && count(guardTail.iteration) !== null
        ? { iteration: count(guardTail.iteration)!, lines: strings(guardTail.lines, LIVE_LIMITS.guardLines, lineChars) }
        : null,
    recent: objects(raw.recent, LIVE_LIMITS.recent).flatMap((entry) => {
      const iteration = count(entry.iteration);
      const ms = amount(entry.ms);
      return iteration !== null && ms !== null ? [{ iteration, ms, passed: entry.passed === true }] : [];
    }),
    log: objects(raw.log, LIVE_LIMITS.log).flatMap((entry) => {
      const seq = count(entry.seq);
      const line = string(entry.text, lineChars);
      return seq !== null && line !== null ? [{ seq, text: line }] : [];
    }),
    wait: wait && typeof wait.until === "string" ? { until: clip(wait.until, 40), message: string(wait.message, textChars) ?? "" } : null,
    ended:
      ended && count(ended.exit_code) !== null
        ? {
            exit_code: count(ended.exit_code)!,
            reason: string(ended.reason, textChars) ?? "",
            lines: strings(ended.lines, LIVE_LIMITS.endedLines, textChars),
          }
        : null,
  };
}
