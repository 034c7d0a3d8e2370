// Rate and usage limits, recognised in what each agent says when the model API refuses it (the
// wording of the pinned versions, in each agent's module src/agents/<kind>.ts; docs/agents.md). A
// limit is a fact of the agent run, recorded in meta.json; whether and how long to wait is the run
// loop's decision. "rate": too many requests or tokens per minute, gone in seconds to minutes.
// "usage": a plan's or a workspace's quota, gone when it resets (hours, days) or when someone buys
// more.

export type LimitKind = "rate" | "usage";

export interface AgentLimit {
  kind: LimitKind;
  /** When the limit resets (ISO 8601), when the agent said so. */
  resetsAt?: string;
  /** The agent's own words. */
  message: string;
}

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
  /** Seconds since the epoch of an ISO 8601 time an agent stamped on an event, or undefined when it is none. */
  isoSeconds(iso: string): number | undefined;
}
