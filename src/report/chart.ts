// The run's timeline as inline SVG: one mark per iteration, in order. Its bar is the iteration's
// time stacked as agent, guard and runner (from the local logs; equal bars when there are none),
// the slot behind a failed iteration is tinted, and the badge under it names the outcome. Each mark
// links to the iteration's section and carries a <title> tooltip, so it reads without JavaScript.
// Pure and deterministic: the same iterations give the same SVG.
import { duration, escapeHtml } from "./format.js";
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
  const what = it.kind === "repair" ? "repair" : `${it.nodeId ?? "?"} · ${it.kind}`;
  const parts = [`Iteration ${it.iteration}: ${what} · ${OUTCOME_STYLE[it.outcome].label}`];
  if (it.agentStatus) parts.push(`agent said ${it.agentStatus}, guard ${it.guard}`);
  if (it.attempts) parts.push(`attempts ${it.attempts.after}/${it.attempts.max}`);
  const local = it.local;
  if (local?.totalMs !== undefined) {
    parts.push(`${duration(local.totalMs)} (agent ${duration(local.agentMs ?? 0)}, guard ${duration(local.guardMs ?? 0)})`);
  }
  return parts.join("\n");
}

/** The timeline SVG (an empty run gives a short note instead of axes). */
export function renderTimeline(iterations: readonly ReportIteration[]): string {
  const n = iterations.length;
  const height = TOP + PLOT_HEIGHT + 8 + BADGE + 38;
  const open = `<svg xmlns="http://www.w3.org/2000/svg" class="timeline" viewBox="0 0 ${WIDTH} ${height}" role="img" aria-labelledby="timeline-title">`;
  const title = `<title id="timeline-title">Timeline of ${n} iteration${n === 1 ? "" : "s"}: time per iteration and outcome</title>`;
  if (n === 0) return `${open}${title}<text x="${WIDTH / 2}" y="${height / 2}" text-anchor="middle" class="axis">No iterations yet</text></svg>`;

  const timed = iterations.some((it) => it.local?.totalMs !== undefined);
  const maxMs = niceMax(Math.max(1, ...iterations.map((it) => it.local?.totalMs ?? 0)));
  const plotWidth = WIDTH - LEFT - RIGHT;
  const slot = plotWidth / n;
  const barWidth = Math.max(2, Math.min(44, slot * 0.72));
  const baseY = TOP + PLOT_HEIGHT;
  const y = (ms: number) => baseY - (ms / maxMs) * PLOT_HEIGHT;
  const labelEvery = Math.ceil(n / 30);
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

  iterations.forEach((it, i) => {
    const style = OUTCOME_STYLE[it.outcome];
    const cx = LEFT + slot * i + slot / 2;
    const x = fixed(cx - barWidth / 2);
    const failed = it.outcome === "fail" || it.outcome === "error" || it.outcome === "invalid-tree";
    const mark: string[] = [];
    mark.push(`<title>${escapeHtml(tooltip(it))}</title>`);
    if (failed)
      mark.push(
        `<rect class="slot-failed" x="${fixed(LEFT + slot * i)}" y="${TOP}" width="${fixed(slot)}" height="${PLOT_HEIGHT}" fill="${style.color}" fill-opacity="0.09"/>`,
      );
    const local = it.local;
    if (timed && local?.totalMs !== undefined) {
      const agent = local.agentMs ?? 0;
      const guard = local.guardMs ?? 0;
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
    if (i % labelEvery === 0 || i === n - 1) {
      mark.push(`<text class="axis" x="${fixed(cx)}" y="${badgeY + BADGE + 15}" text-anchor="middle">${it.iteration}</text>`);
    }
    if (slot >= 40) {
      const label = fit(it.kind === "repair" ? "repair" : (it.nodeId ?? ""), Math.floor(slot / 7));
      mark.push(`<text class="node-label" x="${fixed(cx)}" y="${badgeY + BADGE + 30}" text-anchor="middle">${escapeHtml(label)}</text>`);
    }
    parts.push(
      `<a href="#iter-${it.iteration}"><g class="mark" data-iteration="${it.iteration}" data-outcome="${it.outcome}">${mark.join("")}</g></a>`,
    );
  });
  parts.push("</svg>");
  return parts.join("");
}
