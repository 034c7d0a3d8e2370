// Text helpers of the report page: HTML escaping (everything from the agent or the repository goes
// through it) and the way durations and counts are written (money: formatCost of core/agent-usage).

import { formatDuration } from "../core/step/durations.js";

/** `&` first: the others' replacements hold one. */
const ESCAPES = [
  ["&", "&amp;"],
  ["<", "&lt;"],
  [">", "&gt;"],
  ['"', "&quot;"],
  ["'", "&#39;"],
] as const;
// Characters XML forbids (C0 controls but tab, newline, carriage return) would break the SVG.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const FORBIDDEN = /[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g;

/**
 * Text made safe for HTML element content and quoted attribute values (and SVG, which is XML). Each
 * character replaced by one native pass over the text, and only where it occurs: a long run's report
 * escapes megabytes of patches, where a callback per match was its largest single cost.
 */
export function escapeHtml(text: string): string {
  let out = text;
  for (const [character, entity] of ESCAPES) if (out.includes(character)) out = out.replaceAll(character, entity);
  FORBIDDEN.lastIndex = 0;
  return FORBIDDEN.test(out) ? out.replace(FORBIDDEN, "\uFFFD") : out;
}

/** `850 ms`, `4.2 s`, `3 min 05 s`, `1 h 02 min` (core/step/durations.ts). */
export function duration(ms: number): string {
  return formatDuration(ms);
}

/** `1,234,567` (grouping fixed, not the machine's locale, so the page is the same everywhere). */
export function count(n: number): string {
  return String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

export function plural(n: number, word: string, many = `${word}s`): string {
  return `${count(n)} ${n === 1 ? word : many}`;
}

/** `2026-11-22 21:09:30 UTC` from an ISO time; the text as given when it does not parse. */
export function timestamp(iso: string): string {
  const ms = Date.parse(iso);
  if (!Number.isFinite(ms)) return iso;
  return `${new Date(ms).toISOString().slice(0, 19).replace("T", " ")} UTC`;
}
