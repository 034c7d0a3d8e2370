// Rate and usage limits, recognised in what each agent says when the model API refuses it (the
// wording of the pinned versions; docs/agents.md). A limit is a fact of the agent run, recorded in
// meta.json; whether and how long to wait is the run loop's decision. "rate": too many requests or
// tokens per minute, gone in seconds to minutes. "usage": a plan's or a workspace's quota, gone
// when it resets (hours, days) or when someone buys more.

export type LimitKind = "rate" | "usage";

export interface AgentLimit {
  kind: LimitKind;
  /** When the limit resets (ISO 8601), when the agent said so. */
  resetsAt?: string;
  /** The agent's own words. */
  message: string;
}

/** Codex: a plan's quota ("You’ve hit your usage limit. …"), a workspace's credits or spend cap. */
const CODEX_USAGE = /hit your usage limit|usage limit reached|out of credits|hit your spend cap|workspace credit limit/i;
/** Codex gives up on a 429 without a usage-limit body: "exceeded retry limit, last status: 429 Too Many Requests". */
const CODEX_RATE = /last status: 429\b|\b429 Too Many Requests|rate limit (?:reached|exceeded)/i;

const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];

/** A clock time as an agent states it, in the local time zone; without a date it means today. */
export interface LocalTime {
  date?: { year: number; month: number; day: number };
  hours: number;
  /** May be 60 or more: it carries over into the hour (as Date's constructor does). */
  minutes: number;
}

/** Turns stated times into instants (the time zone and today's date are the caller's: core has no clock). */
export interface AgentClock {
  /** ISO 8601 of a local clock time, or undefined when it names no real time. */
  localTime(time: LocalTime): string | undefined;
  /** ISO 8601 of seconds since the epoch. */
  epochSeconds(seconds: number): string;
}

/**
 * Codex's reset time, "try again at 11:39 PM." (today) or "try again at Aug 8th, 2026 11:39 PM."
 * (codex-rs format_retry_timestamp: `%-I:%M %p`, or `%b %-d{st|nd|rd|th}, %Y %-I:%M %p`), in the
 * local time zone of the machine (Codex and the runner share it).
 */
export function codexResetTime(message: string): LocalTime | undefined {
  const match = /try again at (?:([A-Za-z]{3}) (\d{1,2})(?:st|nd|rd|th)?, (\d{4}) )?(\d{1,2}):(\d{2}) ?([AP]M)/i.exec(message);
  if (!match) return undefined;
  const [, monthName, day, year, hour, minute, half] = match;
  const time = { hours: (Number(hour) % 12) + (half!.toUpperCase() === "PM" ? 12 : 0), minutes: Number(minute) };
  if (!monthName) return time;
  const month = MONTHS.indexOf(monthName.toLowerCase());
  return month < 0 ? undefined : { ...time, date: { year: Number(year), month: month + 1, day: Number(day) } };
}

/**
 * A limit in Codex's failure message (`turn.failed.error.message` or an `error` event). Codex formats
 * the reset to the minute, rounded down (11:39:50 shows as 11:39): the limit is known to be gone only
 * at the end of the minute it names, which is what `resetsAt` says.
 */
export function codexLimit(message: string, clock: AgentClock): AgentLimit | undefined {
  const kind: LimitKind | undefined = CODEX_USAGE.test(message) ? "usage" : CODEX_RATE.test(message) ? "rate" : undefined;
  if (!kind) return undefined;
  const time = codexResetTime(message);
  // The minute after the one named (minutes past 59 carry over into the hour, the day, the year).
  const resetsAt = time ? clock.localTime({ ...time, minutes: time.minutes + 1 }) : undefined;
  return { kind, ...(resetsAt ? { resetsAt } : {}), message };
}

/** Claude: a subscription's or a spend limit ("You've hit your session limit · resets 3pm", "Usage limit reached", "spend limit reached"). */
const CLAUDE_USAGE = /hit your|usage limit|spend limit|out of (?:usage )?credits|credit balance (?:is )?too low/i;

/**
 * A limit that ended Claude's run: its result has `is_error`, and `api_error_status` 429, a
 * usage-limit text, or a `rate_limit_event` with status "rejected" came before it (epoch seconds in
 * `resetsAt`). A run that succeeded anyway met no limit worth waiting for.
 */
export function claudeLimit(
  result: Record<string, unknown> | undefined,
  rejected: Record<string, unknown> | undefined,
  clock: AgentClock,
): AgentLimit | undefined {
  const text = typeof result?.result === "string" ? result.result : "";
  const status = result?.api_error_status;
  const resetSeconds = typeof rejected?.resetsAt === "number" && Number.isFinite(rejected.resetsAt) ? rejected.resetsAt : undefined;
  const resetsAt = resetSeconds !== undefined ? clock.epochSeconds(resetSeconds) : undefined;
  const failed = result?.is_error === true;
  if (!failed || !(rejected || status === 429 || CLAUDE_USAGE.test(text))) return undefined;
  const kind: LimitKind = rejected || CLAUDE_USAGE.test(text) ? "usage" : "rate";
  const message =
    text || `the model API refused the request (${typeof rejected?.rateLimitType === "string" ? rejected.rateLimitType : "rate limit"})`;
  return { kind, ...(resetsAt ? { resetsAt } : {}), message };
}
