// Reads one iteration's local log (meta.json, its lines of events.jsonl, guard.log, executor.log)
// into the report's LocalLog. Defensive: every field is optional, a field of the wrong type is left
// out, unknown fields are ignored, and a log that belongs to another commit (a run id used twice) is
// not used. Pure: gather.ts reads the files.
import { tailOf } from "./git-text.js";
import { USAGE_FIELDS, type LocalLog, type StateVisit, type Usage } from "./model.js";
import { jsonObject } from "../core/base/json-object.js";

export interface EventLine {
  iteration: number;
  from?: string;
  event?: string;
  to: string;
  time?: string;
}

export interface LocalLogFiles {
  meta?: string;
  /** This iteration's transitions from events.jsonl, in order. */
  events: readonly EventLine[];
  guardLog?: string;
  /** The agent's output, or how to read it (read only where it is shown: an iteration that ended in a runner error). */
  executorLog?: string | (() => string | undefined);
}

type Json = Record<string, unknown>;

const object = (value: unknown): Json | undefined => jsonObject(value);
const text = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);
const count = (value: unknown): number | undefined => (typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : undefined);
const strings = (value: unknown): string[] | undefined =>
  Array.isArray(value) && value.every((v) => typeof v === "string") ? (value as string[]) : undefined;

export function usageFrom(value: unknown): Usage | undefined {
  const raw = object(value);
  if (!raw) return undefined;
  const usage: Usage = {};
  for (const name of USAGE_FIELDS) {
    const n = count(raw[name]);
    if (n !== undefined) usage[name] = n;
  }
  return Object.keys(usage).length > 0 ? usage : undefined;
}

/**
 * The states the iteration went through, with the time in each from the transitions' stamps when
 * they agree with meta.path: the last step that worked on the iteration (from its `(start)` line),
 * its entries into states (an actor's result recorded as a transition to the same state is not one).
 */
function visits(path: string[] | undefined, events: readonly EventLine[]): StateVisit[] | undefined {
  const start = events.map((e) => e.from).lastIndexOf("(start)");
  const entries = events.slice(Math.max(0, start)).filter((e, i) => i === 0 || e.from !== e.to);
  const states = entries.map((e) => e.to);
  if (entries.length > 0 && (path === undefined || states.join(" ") === path.join(" "))) {
    // (each stamp parsed once: it ends one state and begins the next)
    const times = entries.map((event) => Date.parse(event.time ?? ""));
    return entries.map((event, i) => {
      const here = times[i]!;
      const next = i + 1 < times.length ? times[i + 1]! : NaN;
      return Number.isFinite(here) && Number.isFinite(next) ? { state: event.to, ms: next - here } : { state: event.to };
    });
  }
  return path?.map((state) => ({ state }));
}

/** The local log of an iteration committed as `commit` with subject `subject`; undefined when there is none, or it is another commit's. */
export function localLogFrom(files: LocalLogFiles, commit: string, subject: string): LocalLog | undefined {
  if (files.meta === undefined) return undefined;
  let meta: Json | undefined;
  try {
    meta = object(JSON.parse(files.meta));
  } catch {
    meta = undefined;
  }
  if (!meta) return undefined;
  const metaCommit = text(meta.commit);
  if (metaCommit !== undefined ? metaCommit !== commit : text(meta.subject) !== subject) return undefined;

  const log: LocalLog = {};
  const durations = object(meta.durations) ?? {};
  const executor = object(meta.executor) ?? {};
  const guard = object(meta.guard) ?? {};
  const assign = <K extends keyof LocalLog>(key: K, value: LocalLog[K] | undefined) => {
    if (value !== undefined) log[key] = value;
  };
  assign("startedAt", text(meta.started_at));
  assign("finishedAt", text(meta.finished_at));
  assign("agentMs", count(durations.agent_ms));
  assign("guardMs", count(durations.guard_ms));
  assign("totalMs", count(durations.total_ms));
  assign("path", visits(strings(meta.path), files.events));
  assign("guardCommand", strings(guard.command));
  assign("guardExitCode", typeof guard.exit_code === "number" ? guard.exit_code : undefined);
  assign("guardTail", files.guardLog ? tailOf(files.guardLog) : undefined);
  assign("agentExitCode", typeof executor.exit_code === "number" ? executor.exit_code : undefined);
  assign("agentTimedOut", typeof executor.timed_out === "boolean" ? executor.timed_out : undefined);
  assign("agentError", text(executor.error)?.trim() ? text(executor.error) : undefined);
  if (meta.runner_error !== null && meta.runner_error !== undefined) {
    const executorLog = typeof files.executorLog === "function" ? files.executorLog() : files.executorLog;
    if (executorLog) assign("agentTail", tailOf(executorLog));
  }
  assign("usage", usageFrom(meta.usage));
  return log;
}

/** The lines of events.jsonl that can be read (a torn last line after a crash is skipped). */
export function parseEvents(content: string): EventLine[] {
  const events: EventLine[] = [];
  for (const line of content.split("\n")) {
    if (line.trim() === "") continue;
    try {
      const event = object(JSON.parse(line));
      if (event && typeof event.iteration === "number" && typeof event.to === "string") {
        events.push({ iteration: event.iteration, from: text(event.from), event: text(event.event), to: event.to, time: text(event.time) });
      }
    } catch {
      continue;
    }
  }
  return events;
}
