// The run's timeline as inline SVG: one mark per iteration, in order. Its bar is the iteration's
// time stacked as agent, guard and runner (from the local logs; equal bars when there are none),
// the slot behind a failed iteration is tinted, and the badge under it names the outcome. Each mark
// links to the iteration's section and carries a <title> tooltip, so it reads without JavaScript.
// Pure and deterministic: the same iterations give the same SVG.
import { outcomeLabel } from "../core/commit/iteration-outcome.js";
import { duration, escapeHtml } from "./format.js";
import { reportFacts } from "./summarize.js";
import type { IterationOutcome, ReportIteration } from "./model.js";

export const OUTCOME_STYLE: Record<IterationOutcome, { label: string; color: string; symbol: string }> = {
  pass: { label: "guard passed", color: "#1b7f3b", symbol: "✓" },
  fail: { label: "failed", color: "#c62828", symbol: "✗" },
  error: { label: "runner error", color: "#e65100", symbol: "!" },
  "invalid-tree": { label: "tree left invalid", color: "#ad1457", symbol: "?" },
  retry: { label: "agent retry", color: "#b26a00", symbol: "↻" },
  decompose: { label: "decomposed", color: "#1e5aa8", symbol: "+" },
  repair: { label: "repair", color: "#6a3fa0", symbol: "R" },
  other: { label: "other", color: "#616161", symbol: "·" },
};

export const TIME_COLORS = { agent: "#4f7cc4", guard: "#3aa39a", runner: "#b9b4ae" } as const;

const WIDTH = 960;
const PLOT_HEIGHT = 170;
const LEFT = 64;
const RIGHT = 12;
const TOP = 12;
const BADGE = 18;

/** A round axis maximum at or above `ms`: 1, 2 or 5 times a power of ten (in ms). */
function niceMax(ms: number): number {
  let step = 1;
  while (step * 10 <= ms) step *= 10;
  for (const factor of [1, 2, 5, 10]) if (step * factor >= ms) return step * factor;
  return step * 10;
}

function fixed(n: number): string {
  return String(Math.round(n * 10) / 10);
}

/** `text` cut to `max` characters with an ellipsis. */
function fit(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(1, max - 1))}…`;
}

function tooltip(it: ReportIteration): string {
  const what = it.kind === "repair" ? "repair" : `${it.nodeId ?? "?"} · ${it.runnerError !== undefined ? outcomeLabel(reportFacts(it)) : it.kind}`;
  const parts = [`Iteration ${it.iteration}: ${what} · ${OUTCOME_STYLE[it.outcome].label}`];
  if (it.agentStatus && it.runnerError === undefined) parts.push(`agent said ${it.agentStatus}, guard ${it.guard}`);
  if (it.attempts) parts.push(`attempts ${it.attempts.after}/${it.attempts.max}`);
  const local = it.local;
  if (local?.totalMs !== undefined) {
    parts.push(`${duration(local.totalMs)} (agent ${duration(local.agentMs ?? 0)}, guard ${duration(local.guardMs ?? 0)})`);
  }
  return parts.join("\n");
}

/** At most this many marks: a longer run's iterations are grouped, consecutive ones per mark. */
const MAX_MARKS = 240;
/** Axis labels at least this far apart (px of the view box): a label of 5 digits is about 35 px wide. */
const LABEL_GAP = 48;

/** Which outcome stands for a group of iterations: a failure first, so that none hides in a long run. */
const OUTCOME_RANK: IterationOutcome[] = ["error", "invalid-tree", "fail", "repair", "retry", "decompose", "pass", "other"];

/** Consecutive iterations drawn as one mark; a run of up to MAX_MARKS iterations has one per mark. */
interface Mark {
  first: ReportIteration;
  last: ReportIteration;
  /** The iteration the mark links to: its first failure, else its first iteration. */
  target: ReportIteration;
  outcome: IterationOutcome;
  count: number;
  /** Mean times of the group's iterations that have them. */
  local?: { totalMs: number; agentMs: number; guardMs: number };
  tooltip: string;
}

/** A mark of one iteration or more (a lone iteration's outcome, target and times are its own). */
function markOf(group: readonly ReportIteration[]): Mark {
  const first = group[0]!;
  const last = group[group.length - 1]!;
  const outcome = OUTCOME_RANK.find((candidate) => group.some((it) => it.outcome === candidate)) ?? "other";
  const failed = group.find((it) => it.outcome === "fail" || it.outcome === "error" || it.outcome === "invalid-tree");
  const timed = group.filter((it) => it.local?.totalMs !== undefined);
  const mean = (pick: (it: ReportIteration) => number | undefined) => timed.reduce((sum, it) => sum + (pick(it) ?? 0), 0) / timed.length;
  const local =
    timed.length > 0
      ? { totalMs: mean((it) => it.local?.totalMs), agentMs: mean((it) => it.local?.agentMs), guardMs: mean((it) => it.local?.guardMs) }
      : undefined;
  return {
    first,
    last,
    target: failed ?? first,
    outcome,
    count: group.length,
    ...(local ? { local } : {}),
    tooltip: group.length === 1 ? tooltip(first) : groupTooltip(group, local?.totalMs, failed),
  };
}

function groupTooltip(group: readonly ReportIteration[], meanMs: number | undefined, failed: ReportIteration | undefined): string {
  const counts = new Map<IterationOutcome, number>();
  for (const it of group) counts.set(it.outcome, (counts.get(it.outcome) ?? 0) + 1);
  const parts = [
    `Iterations ${group[0]!.iteration}–${group[group.length - 1]!.iteration}: ${[...counts].map(([o, n]) => `${n} ${OUTCOME_STYLE[o].label}`).join(", ")}`,
  ];
  if (meanMs !== undefined) parts.push(`mean ${duration(meanMs)} per iteration`);
  if (failed) parts.push(`the mark links to iteration ${failed.iteration}, the first failure`);
  return parts.join("\n");
}

/** The run's marks: one per iteration, or per group of consecutive iterations when there are more than MAX_MARKS. */
function marksOf(iterations: readonly ReportIteration[]): Mark[] {
  const size = Math.ceil(iterations.length / MAX_MARKS);
  const marks: Mark[] = [];
  for (let from = 0; from < iterations.length; from += size) marks.push(markOf(iterations.slice(from, from + size)));
  return marks;
}

/** A round step (1, 2 or 5 × 10^k iterations) at or above `at`. */
function roundStep(at: number): number {
  let step = 1;
  while (step * 10 <= at) step *= 10;
  for (const factor of [1, 2, 5, 10]) if (step * factor >= at) return step * factor;
  return step * 10;
}

/**
 * The marks whose first iteration is labelled under the axis: round iteration numbers at least
 * LABEL_GAP apart, the first mark always, and the last when it keeps that distance from the one before.
 */
function labelledMarks(marks: readonly Mark[], slot: number): Set<number> {
  const n = marks.length;
  const perMark = marks.length > 1 ? (marks[n - 1]!.first.iteration - marks[0]!.first.iteration) / (n - 1) : 1;
  const step = roundStep(Math.max(1, Math.ceil(LABEL_GAP / slot)) * Math.max(1, perMark));
  const labelled = new Set<number>([0]);
  let lastAt = 0;
  marks.forEach((mark, i) => {
    if (i > 0 && mark.first.iteration % step < Math.max(1, perMark) && (i - lastAt) * slot >= LABEL_GAP) {
      labelled.add(i);
      lastAt = i;
    }
  });
  if (n > 1 && !labelled.has(n - 1) && (n - 1 - lastAt) * slot >= LABEL_GAP) labelled.add(n - 1);
  return labelled;
}

/** The timeline SVG (an empty run gives a short note instead of axes). */
export function renderTimeline(iterations: readonly ReportIteration[]): string {
  const n = iterations.length;
  const height = TOP + PLOT_HEIGHT + 8 + BADGE + 38;
  const open = `<svg xmlns="http://www.w3.org/2000/svg" class="timeline" viewBox="0 0 ${WIDTH} ${height}" role="img" aria-labelledby="timeline-title">`;
  const grouped = n > MAX_MARKS ? `, ${Math.ceil(n / MAX_MARKS)} consecutive iterations per mark (the worst outcome shown, mean time)` : "";
  const title = `<title id="timeline-title">Timeline of ${n} iteration${n === 1 ? "" : "s"}: time per iteration and outcome${grouped}</title>`;
  if (n === 0) return `${open}${title}<text x="${WIDTH / 2}" y="${height / 2}" text-anchor="middle" class="axis">No iterations yet</text></svg>`;

  const timed = iterations.some((it) => it.local?.totalMs !== undefined);
  const marks = marksOf(iterations);
  const maxMs = niceMax(marks.reduce((max, mark) => Math.max(max, mark.local?.totalMs ?? 0), 1));
  const plotWidth = WIDTH - LEFT - RIGHT;
  const slot = plotWidth / marks.length;
  const barWidth = Math.max(2, Math.min(44, slot * 0.72));
  const baseY = TOP + PLOT_HEIGHT;
  const y = (ms: number) => baseY - (ms / maxMs) * PLOT_HEIGHT;
  const labelled = labelledMarks(marks, slot);
  const parts: string[] = [open, title];

  // Axis: time ticks when there are durations, else a note saying why the bars are equal.
  parts.push(`<line class="grid" x1="${LEFT}" x2="${WIDTH - RIGHT}" y1="${baseY}" y2="${baseY}"/>`);
  if (timed) {
    for (const fraction of [0.5, 1]) {
      const ty = fixed(y(maxMs * fraction));
      parts.push(`<line class="grid" x1="${LEFT}" x2="${WIDTH - RIGHT}" y1="${ty}" y2="${ty}"/>`);
      parts.push(`<text class="axis" x="${LEFT - 6}" y="${ty}" dy="4" text-anchor="end">${escapeHtml(duration(maxMs * fraction))}</text>`);
    }
    parts.push(`<text class="axis" x="${LEFT - 6}" y="${baseY}" dy="4" text-anchor="end">0</text>`);
  } else {
    parts.push(`<text class="axis" x="${LEFT - 6}" y="${TOP + 10}" text-anchor="end">no times</text>`);
  }

  marks.forEach((it, i) => {
    const style = OUTCOME_STYLE[it.outcome];
    const cx = LEFT + slot * i + slot / 2;
    const x = fixed(cx - barWidth / 2);
    const failed = it.outcome === "fail" || it.outcome === "error" || it.outcome === "invalid-tree";
    const mark: string[] = [];
    mark.push(`<title>${escapeHtml(it.tooltip)}</title>`);
    if (failed)
      mark.push(
        `<rect class="slot-failed" x="${fixed(LEFT + slot * i)}" y="${TOP}" width="${fixed(slot)}" height="${PLOT_HEIGHT}" fill="${style.color}" fill-opacity="0.09"/>`,
      );
    const local = it.local;
    if (timed && local?.totalMs !== undefined) {
      const agent = local.agentMs;
      const guard = local.guardMs;
      const runner = Math.max(0, local.totalMs - agent - guard);
      let at = 0;
      for (const [name, ms] of [
        ["agent", agent],
        ["guard", guard],
        ["runner", runner],
      ] as const) {
        if (ms <= 0) continue;
        const bottom = y(at);
        const h = Math.max(1, bottom - y(at + ms)); // a sliver stays visible
        mark.push(
          `<rect class="seg-${name}" x="${x}" y="${fixed(bottom - h)}" width="${fixed(barWidth)}" height="${fixed(h)}" fill="${TIME_COLORS[name]}"/>`,
        );
        at += ms;
      }
    } else if (timed) {
      mark.push(
        `<rect class="seg-unknown" x="${x}" y="${baseY - 6}" width="${fixed(barWidth)}" height="6" fill="none" stroke="#9e9e9e" stroke-dasharray="2 2"/>`,
      );
    } else {
      mark.push(
        `<rect class="seg-outcome" x="${x}" y="${TOP + PLOT_HEIGHT * 0.35}" width="${fixed(barWidth)}" height="${fixed(PLOT_HEIGHT * 0.65)}" fill="${style.color}" fill-opacity="0.55"/>`,
      );
    }
    const badgeY = baseY + 8;
    const badge = Math.min(BADGE, Math.max(6, slot - 2));
    mark.push(
      `<rect class="badge" x="${fixed(cx - badge / 2)}" y="${badgeY}" width="${fixed(badge)}" height="${fixed(badge)}" rx="3" fill="${style.color}"/>`,
    );
    if (badge >= 12)
      mark.push(
        `<text class="badge-symbol" x="${fixed(cx)}" y="${fixed(badgeY + badge / 2)}" dy="0.35em" text-anchor="middle">${escapeHtml(style.symbol)}</text>`,
      );
    if (labelled.has(i)) {
      mark.push(`<text class="axis" x="${fixed(cx)}" y="${badgeY + BADGE + 15}" text-anchor="middle">${it.first.iteration}</text>`);
    }
    if (slot >= 40 && it.count === 1) {
      const label = fit(it.first.kind === "repair" ? "repair" : (it.first.nodeId ?? ""), Math.floor(slot / 7));
      mark.push(`<text class="node-label" x="${fixed(cx)}" y="${badgeY + BADGE + 30}" text-anchor="middle">${escapeHtml(label)}</text>`);
    }
    parts.push(
      `<a href="#iter-${it.target.iteration}"><g class="mark" data-iteration="${it.first.iteration}"${it.count > 1 ? ` data-last="${it.last.iteration}"` : ""} data-outcome="${it.outcome}">${mark.join("")}</g></a>`,
    );
  });
  parts.push("</svg>");
  return parts.join("");
}
