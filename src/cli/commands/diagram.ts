// `runner diagram [--format mermaid|dot|json|svg] [--output FILE]`: the iteration machine as a
// diagram, generated from the machines themselves: the states an iteration goes through, grouped by
// the child machine each belongs to (machines/iteration.ts).
import { writeFile } from "node:fs/promises";
import { iterationMachine } from "../../../machines/iteration.js";
import { compositionGraph } from "../../diagram/graph.js";
import { toDot, toJson, toMermaid, toSvg, type Highlight } from "../../diagram/render.js";
import type { GlobalArgs } from "../command-table.js";
import { printLine } from "../output.js";

export type DiagramFormat = "mermaid" | "dot" | "json" | "svg";

export async function renderMachine(format: DiagramFormat, highlight?: Highlight): Promise<string> {
  const graph = compositionGraph(iterationMachine);
  switch (format) {
    case "mermaid":
      return toMermaid(graph);
    case "dot":
      return toDot(graph, highlight);
    case "json":
      return toJson(graph);
    case "svg":
      return toSvg(toDot(graph, highlight));
  }
}

export async function emit(text: string, output: string | undefined): Promise<void> {
  if (output) {
    await writeFile(output, text);
    printLine(`wrote ${output}`);
  } else {
    process.stdout.write(text);
  }
}

export async function run(argv: GlobalArgs & { format: DiagramFormat; output?: string }): Promise<number> {
  await emit(await renderMachine(argv.format), argv.output);
  return 0;
}
