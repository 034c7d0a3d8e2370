// Tokens and cost of an agent session, in one shape for every agent (meta.json `usage`), and their
// sums over a run. Input tokens count every token sent to the model, cached ones included (Codex's
// convention: `cached_input_tokens` is a part of `input_tokens`); Anthropic reports cache reads and
// cache writes apart from `input_tokens`, so they are added in. What only one agent reports stays
// under its name (`usage.codex`, `usage.claude`). Each agent's own reading: src/agents/<kind>.ts.
import { jsonObject } from "../base/json-object.js";

/** The figures every agent can be asked for; null where the agent does not report one. */
export interface UsageTotals {
  input_tokens: number;
  cached_input_tokens: number;
  output_tokens: number;
  /** Codex reports reasoning tokens apart (a part of output_tokens); Claude does not (null). */
  reasoning_tokens: number | null;
  /** Claude computes the cost from list prices; Codex reports none (null). */
  cost_usd: number | null;
}

/** UsageTotals plus the agent's own figures under its kind (`codex`, `claude`, …). */
export type AgentUsage = UsageTotals & { [kind: string]: Record<string, unknown> | number | null };

type Json = Record<string, unknown>;

const object = (value: unknown): Json | undefined => jsonObject(value);
/** A token count or an amount: a finite number, not negative. */
export const count = (value: unknown): number | undefined => (typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : undefined);

/** The totals alone (no agent detail). */
export function totalsOf(usage: UsageTotals): UsageTotals {
  return {
    input_tokens: usage.input_tokens,
    cached_input_tokens: usage.cached_input_tokens,
    output_tokens: usage.output_tokens,
    reasoning_tokens: usage.reasoning_tokens,
    cost_usd: usage.cost_usd,
  };
}

const plus = (a: number | null, b: number | null): number | null => (a === null ? b : b === null ? a : a + b);

/** The sum of two totals; a field stays null only when neither reports it. */
export function addUsage(sum: UsageTotals | undefined, usage: UsageTotals | undefined): UsageTotals | undefined {
  if (!usage) return sum;
  if (!sum) return totalsOf(usage);
  return {
    input_tokens: sum.input_tokens + usage.input_tokens,
    cached_input_tokens: sum.cached_input_tokens + usage.cached_input_tokens,
    output_tokens: sum.output_tokens + usage.output_tokens,
    reasoning_tokens: plus(sum.reasoning_tokens, usage.reasoning_tokens),
    cost_usd: plus(sum.cost_usd, usage.cost_usd),
  };
}

/** meta.json's `usage`, read defensively (an old or hand-edited file): undefined when it holds no figure. */
export function usageFromMeta(value: unknown): UsageTotals | undefined {
  const raw = object(value);
  if (!raw) return undefined;
  const input = count(raw.input_tokens);
  const output = count(raw.output_tokens);
  const cost = count(raw.cost_usd);
  if (input === undefined && output === undefined && cost === undefined) return undefined;
  return {
    input_tokens: input ?? 0,
    cached_input_tokens: count(raw.cached_input_tokens) ?? 0,
    output_tokens: output ?? 0,
    reasoning_tokens: count(raw.reasoning_tokens) ?? null,
    cost_usd: cost ?? null,
  };
}

/** `12,345` */
function tokens(n: number): string {
  return Math.round(n).toLocaleString("en-US");
}

/** `$0.0105` (four decimals under a dollar, else two). */
export function formatCost(usd: number): string {
  return `$${usd < 1 ? usd.toFixed(4) : usd.toFixed(2)}`;
}

/** `3,600 in (900 cached), 240 out (32 reasoning), $0.0105` */
export function describeUsage(usage: UsageTotals): string {
  const input = `${tokens(usage.input_tokens)} in${usage.cached_input_tokens > 0 ? ` (${tokens(usage.cached_input_tokens)} cached)` : ""}`;
  const output = `${tokens(usage.output_tokens)} out${usage.reasoning_tokens ? ` (${tokens(usage.reasoning_tokens)} reasoning)` : ""}`;
  return [`tokens ${input}, ${output}`, ...(usage.cost_usd !== null ? [`cost ${formatCost(usage.cost_usd)}`] : [])].join("; ");
}

/** `3.6k` / `240` / `1.2M`: short, for a table column or the live block. */
export function shortCount(n: number): string {
  if (n < 1000) return String(Math.round(n));
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}
