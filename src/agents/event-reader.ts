// An agent's JSON-lines stdout read as it arrives, for every agent alike: split into lines (a chunk
// may end anywhere), each line parsed as one JSON object and given to the agent's own parser
// (src/agents/<kind>.ts), which returns the lines a person watching wants to see and records the
// session's facts; a status line (turns, tokens, cost) follows whenever it changed. Pure: the
// agent session (src/adapters/executors/agent-session.ts) feeds it stdout chunks.
import type { AgentClock } from "../core/agent/agent-limits.js";
import { formatCost, shortCount } from "../core/agent/agent-usage.js";
import { object, STATUS_PREFIX, type AgentDefinition, type AgentEventParser, type AgentSession } from "./agent.js";
import { agentFor } from "./registry.js";

export { STATUS_PREFIX };

/** A line longer than any event is not one. */
const MAX_LINE = 16 * 1024 * 1024;

/** Reads one agent's JSON-lines stream; `push` returns the lines to show for the chunk. */
export class AgentEventReader {
  readonly session: AgentSession;
  private readonly agent: AgentDefinition;
  private readonly parser: AgentEventParser;
  private partial = "";
  private statusShown = "";

  constructor(
    agent: AgentDefinition | string,
    /** Turns the reset times agents state into instants. */
    clock: AgentClock,
  ) {
    this.agent = typeof agent === "string" ? agentFor(agent) : agent;
    this.parser = this.agent.events(clock);
    this.session = { agent: this.agent.kind, turns: 0 };
  }

  push(chunk: string): string[] {
    const lines = (this.partial + chunk).split("\n");
    this.partial = lines.pop() ?? "";
    // A line longer than any event is not one; drop it rather than hold it.
    if (this.partial.length > MAX_LINE) this.partial = "";
    return this.withStatus(lines.flatMap((line) => this.line(line)));
  }

  end(): string[] {
    const rest = this.partial;
    this.partial = "";
    return this.withStatus(this.line(rest));
  }

  /** The usage report the agent wrote when it ended (AgentDefinition.usageReport), and the status line it changes. */
  report(report: Record<string, unknown>): string[] {
    this.agent.usageReport?.(report, this.session);
    return this.withStatus([]);
  }

  /** `turn 3 · 3.6k tokens in (900 cached) · 240 out · $0.0105` */
  status(): string {
    const { usage, turns } = this.session;
    const parts = [`${this.agent.statusWord} ${turns}`];
    if (usage) {
      parts.push(
        `${shortCount(usage.input_tokens)} tokens in${usage.cached_input_tokens > 0 ? ` (${shortCount(usage.cached_input_tokens)} cached)` : ""}`,
      );
      parts.push(`${shortCount(usage.output_tokens)} out`);
      if (usage.cost_usd !== null) parts.push(formatCost(usage.cost_usd));
    }
    return parts.join(" · ");
  }

  private withStatus(lines: string[]): string[] {
    const status = this.status();
    if (status === this.statusShown) return lines;
    this.statusShown = status;
    return [...lines, `${STATUS_PREFIX}${status}`];
  }

  private line(raw: string): string[] {
    const trimmed = raw.trim();
    if (!trimmed.startsWith("{")) return [];
    let event;
    try {
      event = object(JSON.parse(trimmed));
    } catch {
      return [];
    }
    return event ? this.parser.event(event, this.session) : [];
  }
}
