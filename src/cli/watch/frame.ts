// One screen of `runner watch`, as lines of text with their tones, for a terminal `width` × `height`:
// the run (or, with --all, the list of runs and the selected one), its iteration — phase, machine
// states and the time in each —, leaves and iterations done and left, an estimate of the time to the
// end, usage against the budgets, the tree (✓ passed, ○ open, ! stuck; the leaf at work marked), the
// agent's last lines, the guard's last lines after a red guard, the lines the run printed, and its
// summary once it ended. On a wide terminal the tree takes the left half and the rest the right.
// Nothing here reads a file or a clock: the follower (follow.ts) brings the facts, the screen
// (screen.ts) or the plain view draws the lines. Texts from the run's files are the agent's to write
// too: each is made printable and clipped to its place.
import { formatCost, shortCount } from "../../core/agent/agent-usage.js";
import { formatDuration } from "../../core/step/durations.js";
import { estimateToEnd } from "../../core/step/run-estimate.js";
import { selectLeftmostOpenLeaf } from "../../core/tree/select.js";
import type { TaskTree } from "../../core/tree/tree.js";
import { MARKS, TONES, treeRows, type TreeRow } from "../commands/status.js";
import { clipToWidth, displayWidth, printable } from "../display-width.js";
import { leafCount, type LeafCount } from "../progress-facts.js";
import type { Tone } from "../style.js";
import type { RunSnapshot } from "./follow.js";
import { trackEnded } from "./machine.js";

export interface Segment {
  text: string;
  tone?: Tone;
}
export type FrameLine = Segment[];

export interface WatchState {
  /** One run, or every run of the clone with one selected. */
  mode: "one" | "all";
  runs: readonly RunSnapshot[];
  selected: number;
  now: number;
  /** The bottom line: what a key did, or what it asks; else the keys. */
  message: string | undefined;
  /** Whether a stop may be asked of the selected run (a live `runner run`). */
  canStop: boolean;
}

/** At this width and more, the tree and the rest stand side by side. */
export const WIDE_COLUMNS = 120;

const clock = (ms: number) => formatDuration(ms, "clock");
const timer = (ms: number) => formatDuration(ms, "timer");

export function watchFrame(state: WatchState, width: number, height: number): FrameLine[] {
  const run = state.runs[state.selected];
  const lines: FrameLine[] = [];
  lines.push(header(state, run));
  if (state.mode === "all") lines.push(...runList(state, width, Math.max(1, Math.min(state.runs.length, Math.floor(height / 4)))));
  if (run === undefined) {
    lines.push([{ text: "no runs: no runner/* branch yet (`runner start --worktree` begins one); waiting for one", tone: "dim" }]);
  } else {
    lines.push(...runHead(run, state.now, width));
    const room = Math.max(1, height - lines.length - 1);
    lines.push(...runBody(run, width, room));
  }
  while (lines.length < height - 1) lines.push([]);
  const fitted = lines.slice(0, Math.max(0, height - 1));
  fitted.push(footer(state, run));
  return fitted.map((line) => clipLine(line, width));
}

/** The line cut to `width` columns (its last segment ends in … when cut). */
export function clipLine(line: FrameLine, width: number): FrameLine {
  const out: FrameLine = [];
  let used = 0;
  for (const segment of line) {
    const text = segment.text;
    const w = displayWidth(text);
    if (used + w <= width) {
      out.push(segment);
      used += w;
      continue;
    }
    const room = width - used;
    if (room > 0) out.push({ ...segment, text: clipToWidth(text, room) });
    break;
  }
  return out;
}

/** The frame as plain text lines (trailing spaces trimmed): what a test or the README shows. */
export function frameText(lines: readonly FrameLine[]): string[] {
  return lines.map((line) =>
    line
      .map((segment) => segment.text)
      .join("")
      .trimEnd(),
  );
}

function header(state: WatchState, run: RunSnapshot | undefined): FrameLine {
  const title = state.mode === "all" ? `runner watch --all · ${state.runs.length} run${state.runs.length === 1 ? "" : "s"}` : "runner watch";
  if (run === undefined) return [{ text: title, tone: "strong" }];
  return [
    { text: `${title} · run ${run.runId}`, tone: "strong" },
    { text: ` · ${describeState(run)}`, tone: stateTone(run) },
    { text: run.worktree === undefined ? " · not checked out" : ` · ${run.worktree}`, tone: "dim" },
  ];
}

type RunState = "working" | "waiting" | "complete" | "stopped" | "missing";

function runState(run: RunSnapshot): RunState {
  if (!run.branchExists) return "missing";
  if (run.runner !== undefined) return run.live?.state === "waiting" && run.live.pid === run.runner.pid ? "waiting" : "working";
  return run.tree?.root.passes ? "complete" : "stopped";
}

function describeState(run: RunSnapshot): string {
  const state = runState(run);
  if (state === "missing") return "no such branch yet";
  if (state === "working" || state === "waiting") return `${state} (${printable(run.runner!.command).slice(0, 40)}, pid ${run.runner!.pid})`;
  return state;
}

function stateTone(run: RunSnapshot): Tone | undefined {
  const state = runState(run);
  return state === "complete" ? "passed" : state === "working" ? undefined : state === "waiting" ? "warning" : "dim";
}

/** The status file, when it is the one of the runner working now (or, with none working, the last one). */
function liveOf(run: RunSnapshot) {
  const live = run.live;
  if (live === undefined || live.run_id !== run.runId) return undefined;
  if (run.runner !== undefined) return live.pid === run.runner.pid ? live : undefined;
  return live;
}

const leavesCache = new WeakMap<TaskTree, LeafCount>();

/** Leaves passed and in all, counted once per tree. */
function leavesOf(tree: TaskTree | undefined): LeafCount | undefined {
  if (tree === undefined) return undefined;
  let leaves = leavesCache.get(tree);
  if (leaves === undefined) leavesCache.set(tree, (leaves = leafCount(tree)));
  return leaves;
}

function runList(state: WatchState, width: number, rows: number): FrameLine[] {
  const first = Math.max(0, Math.min(state.selected - Math.floor(rows / 2), state.runs.length - rows));
  const idWidth = Math.min(24, Math.max(6, ...state.runs.map((run) => run.runId.length)));
  return state.runs.slice(first, first + rows).map((run, i) => {
    const selected = first + i === state.selected;
    const leaves = leavesOf(run.tree);
    const live = liveOf(run);
    const doing =
      run.runner !== undefined && live?.iteration != null && live.phase !== null
        ? `iteration ${live.iteration} ${live.phase} ${printable(live.node_id ?? "")}`
        : "";
    const cells = [
      `${selected ? "▸" : " "} ${run.runId.padEnd(idWidth)}`,
      runState(run).padEnd(8),
      leaves ? `${leaves.passed}/${leaves.total} leaves` : "tree ?",
      `${run.iterations} iteration${run.iterations === 1 ? "" : "s"}`,
      ...(run.usage?.cost_usd != null ? [formatCost(run.usage.cost_usd)] : []),
      ...(doing ? [doing] : []),
    ];
    return clipLine([{ text: cells.join("  "), tone: selected ? "strong" : stateTone(run) === "dim" ? "dim" : undefined }], width);
  });
}

function runHead(run: RunSnapshot, now: number, width: number): FrameLine[] {
  const live = liveOf(run);
  const lines: FrameLine[] = [];
  const state = runState(run);
  if (state === "working" || state === "waiting") {
    if (live === undefined) {
      lines.push([
        { text: `${printable(run.runner!.command)} is working here; it publishes no live status (only \`runner run\` does)`, tone: "dim" },
      ]);
    } else if (live.state === "waiting" && live.wait) {
      lines.push([{ text: printable(live.wait.message), tone: "warning" }]);
    } else if (live.phase !== null && live.iteration !== null) {
      const since = Date.parse(live.phase_since ?? "");
      lines.push([
        { text: `iteration ${live.iteration}`, tone: "strong" },
        { text: ` · ${phaseName(live.phase)} · ${Number.isFinite(since) ? clock(now - since) : "…"}` },
        {
          text:
            live.node_id === null ? " · repairing the tree" : ` · node ${printable(live.node_id)}${live.title ? ` “${printable(live.title)}”` : ""}`,
        },
      ]);
    } else {
      lines.push([{ text: `between iterations (${live.iterations_done} done by this \`runner run\`)` }]);
    }
  } else if (live?.ended) {
    lines.push([{ text: printable(live.ended.reason || "the run ended"), tone: live.ended.exit_code === 0 ? "passed" : "warning" }]);
  } else if (state === "missing") {
    lines.push([{ text: `waiting for run ${run.runId} to begin (\`runner start --run-id ${run.runId}\`)`, tone: "dim" }]);
  } else {
    lines.push([
      {
        text: run.worktree === undefined ? "checked out nowhere: no runner can work on it" : "no runner works on it: waiting for `runner run`",
        tone: "dim",
      },
    ]);
  }
  lines.push(machineLine(run, now, width));
  lines.push(countsLine(run, live, now));
  lines.push(usageLine(run, live, now));
  return lines;
}

function phaseName(phase: string): string {
  return phase === "prompt" ? "preparing" : phase;
}

function machineLine(run: RunSnapshot, now: number, width: number): FrameLine {
  const track = run.machine;
  if (track === undefined || track.visits.length === 0) return [{ text: "machine: –", tone: "dim" }];
  const ended = trackEnded(track);
  const steps = track.visits.map((visit, i) => {
    const next = track.visits[i + 1];
    const end = next?.at ?? (ended ? visit.at : now);
    const ms = end - visit.at;
    return `${visit.state}${ms >= 1000 || (next === undefined && !ended) ? ` ${timer(Math.max(0, ms))}` : ""}`;
  });
  const head = `machine (iteration ${track.iteration}): `;
  const tail = ended ? "" : " ▸";
  // The newest states, as many as the line holds: the first ones give way.
  let shown = steps.length;
  const text = () => `${shown < steps.length ? "… → " : ""}${steps.slice(steps.length - shown).join(" → ")}${tail}`;
  while (shown > 1 && displayWidth(head) + displayWidth(text()) > width) shown--;
  return [{ text: head, tone: "dim" }, { text: text() }];
}

function countsLine(run: RunSnapshot, live: ReturnType<typeof liveOf>, now: number): FrameLine {
  const leaves = leavesOf(run.tree);
  const parts: Segment[] = [];
  parts.push({
    text: leaves ? `leaves ${leaves.passed}/${leaves.total} passed` : `tree: ${run.treeProblem ?? "…"}`,
    tone: leaves && leaves.passed === leaves.total ? "passed" : undefined,
  });
  if (live !== undefined && live.max_iterations !== null) {
    const left = Math.max(0, live.max_iterations - live.iterations_done);
    const all = run.iterations !== live.iterations_done ? ` (${run.iterations} in the run)` : "";
    parts.push({ text: ` · ${live.iterations_done} iteration${live.iterations_done === 1 ? "" : "s"} done${all}, ${left} left` });
  } else {
    parts.push({ text: ` · ${run.iterations} iteration${run.iterations === 1 ? "" : "s"} done` });
  }
  if (live !== undefined && run.runner !== undefined && leaves !== undefined) {
    const started = Date.parse(live.started_at);
    const estimate = estimateToEnd({
      recent: live.recent,
      openLeaves: leaves.total - leaves.passed,
      iterationsLeft: live.max_iterations === null ? undefined : live.max_iterations - live.iterations_done,
      budgetMsLeft: live.budgets.seconds === null || !Number.isFinite(started) ? undefined : live.budgets.seconds * 1000 - (now - started),
    });
    parts.push({
      text: estimate
        ? ` · ≈ ${clock(estimate.ms)} to the end (${estimate.iterations} iteration${estimate.iterations === 1 ? "" : "s"}${estimate.bound === "work" ? "" : `, ${estimate.bound}`})`
        : " · no estimate of the end yet",
      tone: "dim",
    });
  }
  return parts;
}

function usageLine(run: RunSnapshot, live: ReturnType<typeof liveOf>, now: number): FrameLine {
  const parts: string[] = [];
  if (live !== undefined) {
    const budgets = live.budgets;
    const tokens = live.usage?.tokens;
    const cost = live.usage?.cost_usd;
    parts.push(`tokens ${tokens === undefined ? "–" : shortCount(tokens)}${budgets.tokens !== null ? ` of ${shortCount(budgets.tokens)}` : ""}`);
    if (cost != null || budgets.cost_usd !== null)
      parts.push(`cost ${cost == null ? "–" : formatCost(cost)}${budgets.cost_usd !== null ? ` of ${formatCost(budgets.cost_usd)}` : ""}`);
    const started = Date.parse(live.started_at);
    if (Number.isFinite(started) && live.state !== "ended")
      parts.push(`time ${clock(now - started)}${budgets.seconds !== null ? ` of ${clock(budgets.seconds * 1000)}` : ""}`);
  }
  const total = run.usage
    ? ` · run total: ${shortCount(run.usage.input_tokens + run.usage.output_tokens)} tokens${run.usage.cost_usd !== null ? `, ${formatCost(run.usage.cost_usd)}` : ""}`
    : "";
  // (what this `runner run` spent, against its budgets, which count from its start; then the run's whole)
  return [{ text: `usage: ${parts.length > 0 ? parts.join(" · ") : "–"}${total}`, tone: "dim" }];
}

const treeRowsCache = new WeakMap<TaskTree, TreeRow[]>();

/** The tree's rows in drawing order, listed once per tree (a new tree comes with a commit); their text is made only for the rows shown. */
export function treeLines(tree: TaskTree): TreeRow[] {
  let rows = treeRowsCache.get(tree);
  if (rows === undefined) treeRowsCache.set(tree, (rows = [...treeRows(tree.root)]));
  return rows;
}

function treeRowText({ node, indent, state }: TreeRow): string {
  return printable(
    `${indent}${MARKS[state]} ${node.id}  ${node.title}${node.children.length === 0 ? `  ${node.attempts}/${node.max_attempts}` : ""}`,
  );
}

/** `rows` lines of the tree around the leaf at work (or the next one), marked. */
function treeWindow(run: RunSnapshot, rows: number): FrameLine[] {
  if (run.tree === undefined) return [[{ text: `tree: ${run.treeProblem ?? "not read yet"}`, tone: "dim" }]];
  const lines = treeLines(run.tree);
  const live = liveOf(run);
  const atWork = run.runner !== undefined && live?.phase != null ? live.node_id : null;
  const selection = selectLeftmostOpenLeaf(run.tree);
  const next = selection.kind === "leaf" ? selection.leaf.id : undefined;
  const focusId = atWork ?? next;
  const focus =
    focusId === undefined
      ? 0
      : Math.max(
          0,
          lines.findIndex((line) => line.node.id === focusId),
        );
  const first = Math.max(0, Math.min(focus - Math.floor(rows / 3), lines.length - rows));
  const out: FrameLine[] = lines.slice(first, first + rows).map((line) => {
    const id = line.node.id;
    const mark = id === atWork ? "  ← now" : id === next ? "  ← next" : "";
    return [
      { text: treeRowText(line), tone: id === atWork ? "strong" : TONES[line.state] },
      ...(mark ? [{ text: mark, tone: "strong" as const }] : []),
    ];
  });
  if (first > 0) out[0] = [{ text: `… ${first} more above`, tone: "dim" }];
  const below = lines.length - (first + rows);
  if (below > 0 && out.length > 1) out[out.length - 1] = [{ text: `… ${below} more below`, tone: "dim" }];
  return out;
}

/** The agent's (or guard's) last lines, the guard's red lines, the run's printed lines, the summary. */
function sideSections(run: RunSnapshot, rows: number): FrameLine[] {
  const live = liveOf(run);
  const out: FrameLine[] = [];
  const working = run.runner !== undefined && live !== undefined;
  if (working && live.phase !== null) {
    const who = live.phase === "guard" ? "guard" : "agent";
    out.push([{ text: `${who}${live.agent_status ? ` · ${printable(live.agent_status)}` : ""}`, tone: "dim" }]);
    const lines = live.lines.length > 0 ? live.lines : ["(no output yet)"];
    for (const line of lines.slice(-Math.max(1, Math.min(lines.length, Math.floor(rows / 2)))))
      out.push([{ text: `  │ ${printable(line)}`, tone: "dim" }]);
  }
  if (live?.guard_tail) {
    out.push([{ text: `guard red in iteration ${live.guard_tail.iteration}:`, tone: "failed" }]);
    for (const line of live.guard_tail.lines) out.push([{ text: `  │ ${printable(line)}`, tone: "failed" }]);
  }
  if (live?.ended) {
    out.push([{ text: "summary", tone: "dim" }]);
    for (const line of live.ended.lines) out.push([{ text: `  ${printable(line)}` }]);
  } else if (live !== undefined && live.log.length > 0) {
    // The lines `runner run` printed about its iterations and notices (a red guard's own lines are above).
    const told = live.log.filter((entry) => !entry.text.startsWith("    ")).slice(-6);
    out.push([{ text: "iterations", tone: "dim" }]);
    for (const entry of told) out.push([{ text: `  ${printable(entry.text)}` }]);
  }
  return out;
}

function runBody(run: RunSnapshot, width: number, rows: number): FrameLine[] {
  const side = sideSections(run, rows);
  if (width >= WIDE_COLUMNS) {
    const leftWidth = Math.floor(width * 0.45);
    const left = [[{ text: "tree", tone: "dim" as const }], ...treeWindow(run, rows - 1)];
    const out: FrameLine[] = [];
    for (let i = 0; i < rows; i++) {
      const l = clipLine(left[i] ?? [], leftWidth - 1);
      const pad = " ".repeat(Math.max(0, leftWidth - 1 - l.reduce((sum, s) => sum + displayWidth(s.text), 0)));
      out.push([...l, { text: `${pad}│ `, tone: "dim" }, ...clipLine(side[i] ?? [], width - leftWidth - 1)]);
    }
    return out;
  }
  // Narrow: the tree, then the rest; each gets what it needs where both fit, else the tree a third at least.
  const treeNeed = treeLength(run) + 1;
  const sideRoom = treeNeed + side.length <= rows ? side.length : Math.max(rows - treeNeed, Math.floor((rows * 2) / 3));
  const sideRows = side.slice(0, Math.max(0, Math.min(side.length, sideRoom)));
  const treeRoom = Math.max(1, rows - sideRows.length - 1);
  return [[{ text: "tree", tone: "dim" }], ...treeWindow(run, treeRoom), ...sideRows];
}

function treeLength(run: RunSnapshot): number {
  return run.tree === undefined ? 1 : treeLines(run.tree).length;
}

function footer(state: WatchState, run: RunSnapshot | undefined): FrameLine {
  if (state.message !== undefined) return [{ text: state.message, tone: "warning" }];
  const keys = [
    "q quit",
    ...(state.mode === "all" ? ["↑/↓ select"] : []),
    ...(run?.branchExists ? ["o report"] : []),
    ...(state.canStop ? ["s stop after this iteration"] : []),
  ];
  return [{ text: keys.join(" · "), tone: "dim" }];
}
