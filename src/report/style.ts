// The report page's inline stylesheet and its one small script. The page reads fully without the
// script (collapsible parts are <details>); the script only adds "expand all" and "failures only"
// buttons. The Content-Security-Policy allows exactly this script by its hash and nothing from
// outside the file.
import { createHash } from "node:crypto";

export const STYLE = `
:root { --ink: #1f2328; --muted: #59636e; --line: #d8dee4; --soft: #f6f8fa; --pass: #1b7f3b; --fail: #c62828; --warn: #b26a00; --error: #e65100; --info: #1e5aa8; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--ink); background: #fff; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Open Sans", "DejaVu Sans", sans-serif; }
code, pre, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "DejaVu Sans Mono", monospace; font-size: 13px; }
a { color: var(--info); }
.wrap { max-width: 1200px; margin: 0 auto; padding: 0 24px; }
header.outcome { color: #fff; padding: 18px 0 20px; }
header.outcome .eyebrow { opacity: .9; font-size: 13px; }
header.outcome h1 { margin: 4px 0 4px; font-size: 28px; line-height: 1.2; }
header.outcome p { margin: 0; font-size: 16px; max-width: 880px; }
header.outcome code { background: rgba(255,255,255,.18); padding: 0 4px; border-radius: 3px; }
.verdict { display: inline-block; margin-top: 10px; padding: 3px 10px; border-radius: 12px; background: rgba(255,255,255,.2); font-weight: 600; font-size: 14px; }
.kind-complete.ok { background: #1b7f3b; } .kind-complete { background: #8a6100; } .kind-stuck { background: #8a6100; }
.kind-runner-error { background: #b23c00; } .kind-tree-invalid { background: #ad1457; } .kind-in-progress { background: #1e5aa8; } .kind-empty { background: #59636e; }
main section { margin: 22px 0; }
h2 { font-size: 19px; margin: 0 0 10px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
.tiles { display: grid; grid-template-columns: repeat(auto-fit, minmax(170px, 1fr)); gap: 10px; }
.tile { border: 1px solid var(--line); border-radius: 8px; padding: 8px 12px; background: var(--soft); }
.tile .label { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .04em; }
.tile .value { font-size: 24px; font-weight: 650; line-height: 1.25; }
.tile .sub { color: var(--muted); font-size: 13px; }
.tile.bad .value { color: var(--fail); } .tile.good .value { color: var(--pass); }
svg.timeline { width: 100%; height: auto; display: block; font-size: 12px; }
svg.timeline .grid { stroke: #e3e7eb; stroke-width: 1; }
svg.timeline .axis { fill: var(--muted); font-size: 12px; }
svg.timeline .node-label { fill: var(--ink); font-size: 11px; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "DejaVu Sans Mono", monospace; }
svg.timeline .badge-symbol { fill: #fff; font-size: 12px; font-weight: 700; }
svg.timeline a:hover rect.badge { stroke: #000; stroke-width: 1.5; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 14px; color: var(--muted); font-size: 13px; margin-top: 4px; }
.swatch { display: inline-block; width: 11px; height: 11px; border-radius: 2px; margin-right: 5px; vertical-align: -1px; }
.note { color: var(--muted); font-size: 14px; }
ol.commands { padding-left: 20px; margin: 0; } ol.commands li { margin: 4px 0; }
ol.commands pre { margin: 2px 0 0; padding: 6px 10px; background: var(--soft); border: 1px solid var(--line); border-radius: 6px; overflow-x: auto; }
ul.tree, ul.tree ul { list-style: none; margin: 0; padding-left: 22px; }
ul.tree { padding-left: 0; }
ul.tree li { margin: 2px 0; }
ul.tree ul { border-left: 1px dashed var(--line); margin-left: 7px; }
.state { display: inline-block; min-width: 62px; font-size: 12px; font-weight: 600; padding: 0 6px; border-radius: 10px; text-align: center; color: #fff; }
.state-passed { background: var(--pass); } .state-open { background: #8c959f; } .state-stuck { background: var(--fail); }
.next { font-weight: 700; color: var(--info); }
.runs { color: var(--muted); font-size: 13px; }
.notes-list { margin: 4px 0 12px; padding-left: 20px; }
article.iteration { border: 1px solid var(--line); border-left: 5px solid #8c959f; border-radius: 6px; padding: 10px 14px; margin: 12px 0; }
#iterations.long article.iteration { content-visibility: auto; contain-intrinsic-size: auto 180px; }
article.iteration h3 { margin: 0 0 4px; font-size: 16px; }
article.iteration .facts { color: var(--muted); font-size: 13px; margin: 0 0 6px; }
article.iteration .summary { white-space: pre-wrap; margin: 6px 0; }
article.iteration h4 { margin: 10px 0 4px; font-size: 14px; }
pre.block { white-space: pre-wrap; word-break: break-word; background: var(--soft); border: 1px solid var(--line); border-radius: 6px; padding: 8px 10px; margin: 4px 0; max-height: 420px; overflow: auto; }
pre.failure { border-color: #f1b8b8; background: #fff5f5; }
pre.patch { white-space: pre; max-height: 560px; }
pre.patch .add { color: #116329; background: #e6ffec; display: inline-block; min-width: 100%; }
pre.patch .del { color: #82071e; background: #ffebe9; display: inline-block; min-width: 100%; }
pre.patch .hunk { color: #8250df; } pre.patch .file { font-weight: 700; }
table.stat { border-collapse: collapse; font-size: 13px; margin: 4px 0; }
table.stat td { padding: 1px 10px 1px 0; } table.stat .plus { color: var(--pass); } table.stat .minus { color: var(--fail); }
details > summary { cursor: pointer; color: var(--info); margin: 4px 0; }
.path { font-size: 12px; color: var(--muted); }
.tag { display: inline-block; padding: 0 7px; border-radius: 10px; color: #fff; font-size: 12px; font-weight: 600; }
.toolbar button { font: inherit; font-size: 13px; margin-right: 6px; padding: 2px 10px; border: 1px solid var(--line); border-radius: 6px; background: var(--soft); cursor: pointer; }
body.failures-only article.iteration:not(.failed) { display: none; }
footer { color: var(--muted); font-size: 13px; border-top: 1px solid var(--line); margin-top: 28px; padding: 10px 0 30px; }
`;

export const SCRIPT = `(function () {
  var bar = document.getElementById("toolbar");
  if (!bar) return;
  function button(text, onClick) { var b = document.createElement("button"); b.type = "button"; b.textContent = text; b.addEventListener("click", onClick); bar.appendChild(b); return b; }
  var open = false;
  var expand = button("Expand all", function () {
    open = !open;
    document.querySelectorAll("article.iteration details").forEach(function (d) { d.open = open; });
    expand.textContent = open ? "Collapse all" : "Expand all";
  });
  var only = button("Failures only", function () {
    var on = document.body.classList.toggle("failures-only");
    only.textContent = on ? "All iterations" : "Failures only";
  });
})();`;

/** The CSP source for SCRIPT: its SHA-256, so no other script (say one smuggled into the page) runs. */
export function scriptHash(): string {
  return `'sha256-${createHash("sha256").update(SCRIPT, "utf8").digest("base64")}'`;
}
