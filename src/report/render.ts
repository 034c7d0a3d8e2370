// The report as one self-contained HTML page: inline CSS and SVG, no external resource, a small
// inline script the page does not need. Pure and deterministic given the model. Every text from the
// agent or the repository goes through escapeHtml; the Content-Security-Policy would stop a script
// that got past it anyway.
import { OUTCOME_STYLE, renderTimeline, TIME_COLORS } from "./chart.js";
import { formatCost } from "../core/agent/agent-usage.js";
import { failureParts, outcomeLabel } from "../core/commit/iteration-outcome.js";
import { reportFacts } from "./summarize.js";
import { count, duration, escapeHtml as esc, plural, timestamp } from "./format.js";
import type { IterationDiff, NoteAddition, Report, ReportIteration, ReportNode, Totals, Usage } from "./model.js";
import { SCRIPT, scriptHash, STYLE } from "./style.js";

/** Escaped text with its `backticked` parts set as code (after escaping, so nothing else becomes markup). */
function withCode(text: string): string {
  return esc(text).replace(/`([^`]+)`/g, "<code>$1</code>");
}

function short(sha: string): string {
  return sha.slice(0, 7);
}

function tile(label: string, value: string, sub: string, tone = ""): string {
  return `<div class="tile${tone ? ` ${tone}` : ""}"><div class="label">${esc(label)}</div><div class="value">${esc(value)}</div><div class="sub">${esc(sub)}</div></div>`;
}

function usageText(usage: Usage): string {
  const parts: string[] = [];
  if (usage.input_tokens !== undefined)
    parts.push(`${count(usage.input_tokens)} in${usage.cached_input_tokens !== undefined ? ` (${count(usage.cached_input_tokens)} cached)` : ""}`);
  if (usage.output_tokens !== undefined)
    parts.push(`${count(usage.output_tokens)} out${usage.reasoning_tokens !== undefined ? ` (${count(usage.reasoning_tokens)} reasoning)` : ""}`);
  if (usage.cost_usd !== undefined) parts.push(formatCost(usage.cost_usd));
  return parts.join(" · ");
}

function notesTile(notes: readonly NoteAddition[]): string {
  const lines = (file: NoteAddition["file"]) =>
    notes.filter((n) => n.file === file).reduce((sum, n) => sum + n.lines.filter((l) => l.trim() !== "").length, 0);
  const questions = lines("questions");
  return tile("Questions added", count(questions), `${plural(lines("assumptions"), "assumption")} added · see below`, questions > 0 ? "bad" : "");
}

function renderTiles(totals: Totals, iterations: number, notes: readonly NoteAddition[]): string {
  const tiles: string[] = [];
  tiles.push(tile("Iterations", count(totals.iterations), `${totals.decompose} decompose · ${totals.execute} execute · ${totals.repair} repair`));
  tiles.push(tile("Guard passed", count(totals.passes), `of ${plural(totals.execute, "execute iteration")}`, totals.passes > 0 ? "good" : ""));
  const kinds = failureParts({
    total: totals.failures,
    guard: totals.guardFailures,
    retry: totals.retries,
    runner_error: totals.runnerErrors,
    invalid_tree: totals.invalidTrees,
    other: totals.otherFailures,
  });
  tiles.push(tile("Failures", count(totals.failures), kinds.length > 0 ? kinds.join(" · ") : "none", totals.failures > 0 ? "bad" : ""));
  if (totals.nodes) {
    tiles.push(
      tile(
        "Nodes passed",
        `${totals.nodes.passed}/${totals.nodes.total}`,
        totals.nodes.stuck > 0 ? `${totals.nodes.stuck} stuck` : "none stuck",
        totals.nodes.stuck > 0 ? "bad" : "",
      ),
    );
  }
  if (totals.time) {
    const t = totals.time;
    const of = t.timed < iterations ? ` (${t.timed} of ${iterations} iterations logged here)` : "";
    tiles.push(
      tile("Time", duration(t.totalMs), `agent ${duration(t.agentMs)} · guard ${duration(t.guardMs)} · runner ${duration(t.runnerMs)}${of}`),
    );
  } else {
    // Without the local logs, the commits' times give the span; the split is not in any commit.
    const span = totals.span ? duration(Date.parse(totals.span.to) - Date.parse(totals.span.from)) : "–";
    tiles.push(tile("Time", span, "first to last commit; agent, guard and runner times are not logged here"));
  }
  tiles.push(notesTile(notes));
  if (totals.usage) {
    const u = totals.usage;
    const tokens = (u.input_tokens ?? 0) + (u.output_tokens ?? 0);
    const value = u.cost_usd !== undefined ? formatCost(u.cost_usd) : `${count(tokens)} tokens`;
    tiles.push(tile("Agent usage", value, `${usageText(u)} · ${u.recorded} of ${iterations} iterations recorded`));
  }
  return `<section id="totals" class="tiles" aria-label="Totals">${tiles.join("")}</section>`;
}

function renderLegend(report: Report): string {
  const used = new Set(report.iterations.map((it) => it.outcome));
  const swatch = (color: string, label: string) => `<span><span class="swatch" style="background:${color}"></span>${esc(label)}</span>`;
  const items: string[] = [];
  if (report.iterations.some((it) => it.local?.totalMs !== undefined)) {
    items.push(swatch(TIME_COLORS.agent, "agent time"), swatch(TIME_COLORS.guard, "guard time"), swatch(TIME_COLORS.runner, "runner time"));
  }
  for (const [outcome, style] of Object.entries(OUTCOME_STYLE)) {
    if (used.has(outcome as keyof typeof OUTCOME_STYLE)) items.push(swatch(style.color, `${style.symbol} ${style.label}`));
  }
  return `<div class="legend">${items.join("")}</div>`;
}

function renderTimelineSection(report: Report): string {
  const timed = report.iterations.some((it) => it.local?.totalMs !== undefined);
  const note =
    report.iterations.length === 0
      ? ""
      : timed
        ? "Bar height: the iteration's time. Click a mark for its details."
        : "The local logs with each iteration's time are not on this machine: the bars show the outcome only.";
  return `<section id="timeline"><h2>Timeline</h2>${renderTimeline(report.iterations)}${renderLegend(report)}${note ? `<p class="note">${esc(note)}</p>` : ""}</section>`;
}

/** A person's edits, in history order, apart from the iterations. */
function renderPersonEdits(report: Report): string {
  const edits = report.audit?.personEdits ?? [];
  if (edits.length === 0) return "";
  const items = edits
    .map(
      (edit) =>
        `<li class="person-edit"><code>${esc(edit.commit.slice(0, 7))}</code> ${esc(edit.subject)} <span class="runs">${edit.made === "hand" ? "by hand, " : ""}by ${esc(edit.author ?? "?")}${edit.valid ? "" : " — breaks the rules"}</span></li>`,
    )
    .join("");
  return `<section id="person-edits"><h2>Person edits</h2><p class="note">Changes a person made to the plan or the config between iterations; they are not iterations, and <code>runner audit</code> judges each by the rules.</p><ul>${items}</ul></section>`;
}

function renderMerge(report: Report): string {
  const items = report.merge.commands.map((c) => `<li>${esc(c.label)}<pre><code>${esc(c.command)}</code></pre></li>`).join("");
  const edits = report.audit?.personEdits ?? [];
  const note =
    edits.length === 0
      ? ""
      : `<p class="note">This run includes ${esc(plural(edits.length, "person's edit"))} of the plan or config (see Person edits); the merge carries them with the iterations.</p>`;
  return `<section id="merge"><h2>Review and merge</h2>${note}<ol class="commands">${items}</ol></section>`;
}

function renderNode(node: ReportNode): string {
  const runs =
    node.iterations.length > 0
      ? ` <span class="runs">iterations ${node.iterations.map((n) => `<a href="#iter-${n}">${n}</a>`).join(", ")}</span>`
      : "";
  const children = node.children.length > 0 ? `<ul>${node.children.map(renderNode).join("")}</ul>` : "";
  return `<li class="node" data-node="${esc(node.id)}" data-state="${node.state}"><span class="state state-${node.state}">${node.state}</span> <code>${esc(node.id)}</code> ${esc(node.title)} <span class="runs">attempts ${node.attempts}/${node.maxAttempts}</span>${node.next ? ' <span class="next">← next</span>' : ""}${runs}${children}</li>`;
}

function renderTree(report: Report): string {
  const tree = report.tree;
  const note = tree?.note ? `<p class="note">${esc(tree.note)}</p>` : "";
  const body = tree?.root ? `<ul class="tree">${renderNode(tree.root)}</ul>` : '<p class="note">No valid tree to show.</p>';
  return `<section id="tree"><h2>Tree</h2>${note}${body}</section>`;
}

function renderNotes(notes: readonly NoteAddition[]): string {
  const part = (file: NoteAddition["file"], title: string) => {
    const added = notes.filter((n) => n.file === file);
    if (added.length === 0) return `<h3>${esc(title)}</h3><p class="note">Nothing added during the run.</p>`;
    const items = added
      .map((n) => {
        const where =
          n.iteration !== undefined
            ? `<a href="#iter-${n.iteration}">iteration ${n.iteration}</a>`
            : `commit <code>${short(n.commit)}</code> (not a loop commit)`;
        return `<li>${where}<pre class="block">${esc(n.lines.join("\n"))}</pre></li>`;
      })
      .join("");
    return `<h3>${esc(title)}</h3><ul class="notes-list">${items}</ul>`;
  };
  return `<section id="notes"><h2>Questions and assumptions the agent added</h2>${part("questions", "Questions (.runner/state/questions.md)")}${part("assumptions", "Assumptions (.runner/state/assumptions.md)")}</section>`;
}

function renderPatch(diff: IterationDiff | undefined, commit: string): string {
  if (diff === undefined) return `<p class="note"><code>git show ${short(commit)}</code> shows the change.</p>`;
  if (diff.files.length === 0) return '<p class="note">No change outside the tree file.</p>';
  const rows = diff.files
    .map(
      (f) =>
        `<tr><td class="mono">${esc(f.path)}</td><td class="plus">${f.added === undefined ? "binary" : `+${f.added}`}</td><td class="minus">${f.removed === undefined ? "" : `−${f.removed}`}</td></tr>`,
    )
    .join("");
  const lines = diff.patch === "" ? [] : diff.patch.split("\n");
  const body = lines
    .map((line) => {
      const cls =
        line.startsWith("+++ ") || line.startsWith("--- ") || line.startsWith("diff --git ")
          ? "file"
          : line.startsWith("+")
            ? "add"
            : line.startsWith("-")
              ? "del"
              : line.startsWith("@@")
                ? "hunk"
                : "";
      return cls ? `<span class="${cls}">${esc(line)}</span>` : esc(line);
    })
    .join("\n");
  const cut = diff.truncated
    ? `<p class="note">Shown: ${count(lines.length)} of ${plural(diff.patchLines, "line")}; <code>git show ${short(commit)}</code> has the rest.</p>`
    : "";
  const summary = `Patch (${plural(diff.patchLines, "line")}${diff.truncated ? ", cut" : ""})`;
  return `<table class="stat">${rows}</table><details class="patch"><summary>${esc(summary)}</summary><pre class="block patch">${body}</pre>${cut}</details>`;
}

/** The failure's first paragraph, and the whole text (as the next iteration was told it) folded when there is more. */
function renderFailure(failure: string): string {
  const trimmed = failure.trim();
  const cut = trimmed.indexOf("\n\n");
  const head = cut < 0 ? trimmed : trimmed.slice(0, cut);
  const whole =
    cut < 0
      ? ""
      : `<details class="failure-text"><summary>The whole failure, as the next iteration was told it</summary><pre class="block">${esc(trimmed)}</pre></details>`;
  return `<h4>Failure</h4><pre class="block failure">${esc(head)}</pre>${whole}`;
}

/** What the iterations' section says for a run without any. */
export const NO_ITERATIONS = '<p class="note">No iterations yet.</p>';

/** One iteration's article (its diff, when the iteration carries it, included). */
export function renderIteration(it: ReportIteration): string {
  const style = OUTCOME_STYLE[it.outcome];
  const failed = it.outcome === "fail" || it.outcome === "error" || it.outcome === "invalid-tree";
  const local = it.local;
  const facts: string[] = [`<span class="tag" style="background:${style.color}">${esc(`${style.symbol} ${style.label}`)}</span>`];
  // A runner error was not judged: its words (an unreadable answer, an interruption), not a kind and the retry the runner records for it.
  if (it.runnerError !== undefined) facts.push(esc(outcomeLabel(reportFacts(it))));
  else {
    facts.push(`kind ${esc(it.kind)}`);
    if (it.agentStatus) facts.push(`agent said ${esc(it.agentStatus)}`);
  }
  facts.push(`guard ${esc(it.guard)}`);
  if (it.attempts) facts.push(`attempts ${it.attempts.after}/${it.attempts.max}`);
  if (local?.totalMs !== undefined)
    facts.push(`${duration(local.totalMs)} (agent ${duration(local.agentMs ?? 0)}, guard ${duration(local.guardMs ?? 0)})`);
  facts.push(`commit <code>${short(it.commit)}</code>`);
  if (it.committedAt) facts.push(esc(timestamp(it.committedAt)));
  const heading = it.kind === "repair" ? "repair step" : `<code>${esc(it.nodeId ?? "?")}</code>${it.nodeTitle ? ` ${esc(it.nodeTitle)}` : ""}`;
  const parts = [`<h3>Iteration ${it.iteration} · ${heading}</h3>`, `<p class="facts">${facts.join(" · ")}</p>`];
  parts.push(`<p class="summary">${it.summary ? esc(it.summary) : '<span class="note">(no summary)</span>'}</p>`);
  if (it.testsChanged)
    parts.push(
      `<p class="tests-changed"><strong>Tests changed:</strong> ${it.testsChanged.map((file) => `<code>${esc(file)}</code>`).join(", ")}</p>`,
    );
  if (it.runnerError) parts.push(`<h4>Runner error</h4><pre class="block failure">${esc(it.runnerError)}</pre>`);
  if (it.treeLeftInvalid)
    parts.push('<p class="note">The agent left the tree invalid; it was committed as written and the next step repairs it.</p>');
  if (it.failure) parts.push(renderFailure(it.failure));
  if (local?.agentError) parts.push(`<h4>The agent's error</h4><pre class="block failure">${esc(local.agentError)}</pre>`);
  if (local?.guardTail) {
    const command = local.guardCommand
      ? ` (${local.guardCommand.join(" ")}${local.guardExitCode !== undefined ? `, exit ${local.guardExitCode}` : ""})`
      : "";
    parts.push(
      `<details class="guard"${it.guard === "fail" ? " open" : ""}><summary>${esc(`Guard output, the end${command}`)}</summary><pre class="block">${esc(local.guardTail)}</pre></details>`,
    );
  }
  if (local?.agentTail)
    parts.push(
      `<details class="agent-output" open><summary>Agent output, the end</summary><pre class="block">${esc(local.agentTail)}</pre></details>`,
    );
  if (local?.usage) parts.push(`<p class="facts">Usage: ${esc(usageText(local.usage))}</p>`);
  parts.push(`<h4>Change</h4>${renderPatch(it.diff, it.commit)}`);
  const path = local?.path
    ? local.path
        .map((v) => `${esc(v.state)}${v.ms !== undefined && v.ms >= 1 ? ` <span class="mono">${esc(duration(v.ms))}</span>` : ""}`)
        .join(" → ")
    : "not in the commit: the local log of this iteration is not on this machine";
  parts.push(`<p class="path">Path through the machine: ${path}</p>`);
  return `<article class="iteration${failed ? " failed" : ""}" id="iter-${it.iteration}" data-outcome="${it.outcome}" style="border-left-color:${style.color}">${parts.join("")}</article>`;
}

/** Audit violations listed on the page; `runner audit` has the rest. */
const AUDIT_SHOWN = 20;

function renderAudit(report: Report): string {
  const audit = report.audit;
  if (!audit || audit.clean) return "";
  const shown = audit.violations.slice(0, AUDIT_SHOWN);
  const more = audit.violations.length - shown.length;
  const items = shown
    .map(
      (v) =>
        `<li>${v.iteration !== undefined ? `<a href="#iter-${v.iteration}">iteration ${v.iteration}</a>` : `commit <code>${short(v.commit)}</code>`}: ${esc(v.message)}</li>`,
    )
    .join("");
  const rest = more > 0 ? `<li>and ${plural(more, "more violation")}: <code>runner audit</code> lists them all</li>` : "";
  return `<section id="audit"><h2>Audit</h2><ul>${items}${rest}</ul></section>`;
}

/**
 * The page in three parts, so that `runner report` writes it as it is produced: everything before the
 * iterations, each iteration (renderIteration, with its diff read just then), everything after.
 */
export function renderReport(report: Report): string {
  return `${reportHead(report)}${report.iterations.map(renderIteration).join("\n") || NO_ITERATIONS}${reportFoot(report)}`;
}

/** From this many iterations on, the browser lays out only the articles in view (the page of a long night opens at once). */
const LONG_RUN = 200;

/** The page up to the first iteration's article. */
export function reportHead(report: Report): string {
  const outcome = report.outcome;
  const verdict = outcome.mergeable ? "Ready to merge" : outcome.kind === "complete" ? "Review the audit first" : "Not ready to merge";
  const csp = `default-src 'none'; style-src 'unsafe-inline'; script-src ${scriptHash()}; img-src data:; base-uri 'none'; form-action 'none'`;
  const eyebrow = `runner report · run <code>${esc(report.runId)}</code> · ${esc(report.merge.ref)} at <code>${short(report.tip)}</code>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="referrer" content="no-referrer">
<title>${esc(`Run ${report.runId}: ${outcome.headline}`)}</title>
<style>${STYLE}</style>
</head>
<body>
<header class="outcome kind-${outcome.kind}${outcome.mergeable ? " ok" : ""}"><div class="wrap">
<div class="eyebrow">${eyebrow}</div>
<h1 id="outcome">${esc(outcome.headline)}</h1>
<p>${withCode(outcome.detail)}</p>
<span class="verdict" id="verdict">${esc(verdict)}</span>
</div></header>
<main class="wrap">
${renderTiles(report.totals, report.iterations.length, report.notes)}
${renderTimelineSection(report)}
${renderPersonEdits(report)}
${renderAudit(report)}
${renderMerge(report)}
${renderTree(report)}
${renderNotes(report.notes)}
<section id="iterations"${report.iterations.length > LONG_RUN ? ' class="long"' : ""}><h2>Iterations</h2><div class="toolbar" id="toolbar"></div>
`;
}

/** The page after the last iteration's article. */
export function reportFoot(report: Report): string {
  return `
</section>
</main>
<footer><div class="wrap">Generated ${esc(timestamp(report.generatedAt))} from ${plural(report.iterations.length, "loop commit")}${report.base ? ` after <code>${short(report.base)}</code>` : ""} and ${plural(report.localLogs, "local iteration log")}. Everything the agent wrote is shown as text.</div></footer>
<script>${SCRIPT}</script>
</body>
</html>
`;
}
