// Renderers of the machine graph: Mermaid (the README's diagram), Graphviz DOT (with an optional
// highlighted path: the states and transitions one iteration took), JSON, and SVG rendered offline
// from DOT with @hpcc-js/wasm-graphviz. A composition's graph (graph.ts `compositionGraph`) is drawn
// flat, each child machine's states grouped in a cluster (a Mermaid composite state) of its name.
import type { CompositionGraph, DiagramCluster, DiagramGraph, DiagramTransition } from "./graph.js";
import { importExternal } from "../external-import.js";

export interface Highlight {
  /** States the iteration entered, in order (meta.json `path`). */
  states: readonly string[];
  /** Transitions it took (events.jsonl): from, event, to. */
  transitions: readonly { from: string; event: string; to: string }[];
}

function edgeText(t: DiagramTransition): string {
  return t.guard ? `${t.label} [${t.guard}]` : t.label;
}

const clustersOf = (graph: DiagramGraph | CompositionGraph): DiagramCluster[] => ("clusters" in graph ? graph.clusters : []);

export function toMermaid(graph: DiagramGraph | CompositionGraph): string {
  const lines = ["stateDiagram-v2", `  [*] --> ${graph.initial}`];
  const clustered = new Set(clustersOf(graph).flatMap((cluster) => cluster.states));
  const declare = (id: string, indent: string) => {
    const invoke = graph.states.find((state) => state.id === id)?.invoke;
    return `${indent}${invoke ? `${id}: ${id} (invokes ${invoke})` : id}`;
  };
  // (a state declared inside one composite state only: transitions between composites are drawn outside them)
  for (const cluster of clustersOf(graph)) lines.push(`  state ${cluster.id} {`, ...cluster.states.map((id) => declare(id, "    ")), "  }");
  for (const state of graph.states) if (state.invoke && !clustered.has(state.id)) lines.push(declare(state.id, "  "));
  for (const t of graph.transitions) lines.push(`  ${t.from} --> ${t.to}: ${edgeText(t)}`);
  for (const state of graph.states) if (state.final) lines.push(`  ${state.id} --> [*]`);
  return `${lines.join("\n")}\n`;
}

const quote = (text: string) => `"${text.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`;

export function toDot(graph: DiagramGraph | CompositionGraph, highlight?: Highlight): string {
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
  const descriptions = new Map(("machines" in graph ? graph.machines : []).map((machine) => [machine.id, machine.description]));
  for (const cluster of clustersOf(graph)) {
    const description = descriptions.get(cluster.id);
    const label = quote(description ? `${cluster.id}\ninput: ${description}` : cluster.id);
    lines.push(
      `  subgraph ${quote(`cluster_${cluster.id}`)} { label=${label}; style="rounded,dashed"; color="#607d8b"; fontname="Helvetica"; fontsize=10; ${cluster.states.map((id) => `${quote(id)};`).join(" ")} }`,
    );
  }
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

export function toJson(graph: DiagramGraph | CompositionGraph): string {
  // (which machine transitions each flat one is made of is the recorder's business, not the reader's)
  const { through: _through, ...shown } = graph as Partial<CompositionGraph> & DiagramGraph;
  return `${JSON.stringify(shown, null, 2)}\n`;
}

export async function toSvg(dot: string): Promise<string> {
  const { Graphviz } = await importExternal("@hpcc-js/wasm-graphviz", () => import("@hpcc-js/wasm-graphviz"));
  const graphviz = await Graphviz.load();
  return graphviz.dot(dot);
}
