// Renderers of the machine graph: Mermaid (the README's diagram), Graphviz DOT (with an optional
// highlighted path: the states and transitions one iteration took), JSON, and SVG rendered offline
// from DOT with @hpcc-js/wasm-graphviz.
import type { DiagramGraph, DiagramTransition } from "./graph.js";

export interface Highlight {
  /** States the iteration entered, in order (meta.json `path`). */
  states: readonly string[];
  /** Transitions it took (events.jsonl): from, event, to. */
  transitions: readonly { from: string; event: string; to: string }[];
}

function edgeText(t: DiagramTransition): string {
  return t.guard ? `${t.label} [${t.guard}]` : t.label;
}

export function toMermaid(graph: DiagramGraph): string {
  const lines = ["stateDiagram-v2", `  [*] --> ${graph.initial}`];
  for (const state of graph.states) if (state.invoke) lines.push(`  ${state.id}: ${state.id} (invokes ${state.invoke})`);
  for (const t of graph.transitions) lines.push(`  ${t.from} --> ${t.to}: ${edgeText(t)}`);
  for (const state of graph.states) if (state.final) lines.push(`  ${state.id} --> [*]`);
  return `${lines.join("\n")}\n`;
}

const quote = (text: string) => `"${text.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`;

export function toDot(graph: DiagramGraph, highlight?: Highlight): string {
  const visited = new Set(highlight?.states ?? []);
  const taken = new Set((highlight?.transitions ?? []).map((t) => `${t.from}\u0000${t.event}\u0000${t.to}`));
  const lines = [
    `digraph ${quote(graph.id)} {`,
    "  rankdir=TB;",
    '  node [shape=box, style="rounded", fontname="Helvetica", fontsize=11];',
    '  edge [fontname="Helvetica", fontsize=9];',
    '  __start [shape=point, width=0.15, label=""];',
    `  __start -> ${quote(graph.initial)};`,
  ];
  for (const state of graph.states) {
    const attrs = [`label=${quote(state.invoke ? `${state.id}\n(${state.invoke})` : state.id)}`];
    if (state.final) attrs.push("peripheries=2");
    if (visited.has(state.id)) attrs.push('style="rounded,filled"', 'fillcolor="#c8e6c9"', 'color="#1b5e20"', "penwidth=2");
    lines.push(`  ${quote(state.id)} [${attrs.join(", ")}];`);
  }
  for (const t of graph.transitions) {
    const attrs = [`label=${quote(edgeText(t))}`];
    if (t.event === "always") attrs.push("style=dashed");
    if (taken.has(`${t.from}\u0000${t.event}\u0000${t.to}`)) attrs.push('color="#1b5e20"', 'fontcolor="#1b5e20"', "penwidth=2.5");
    lines.push(`  ${quote(t.from)} -> ${quote(t.to)} [${attrs.join(", ")}];`);
  }
  lines.push("}");
  return `${lines.join("\n")}\n`;
}

export function toJson(graph: DiagramGraph): string {
  return `${JSON.stringify(graph, null, 2)}\n`;
}

export async function toSvg(dot: string): Promise<string> {
  const { Graphviz } = await import("@hpcc-js/wasm-graphviz");
  const graphviz = await Graphviz.load();
  return graphviz.dot(dot);
}
