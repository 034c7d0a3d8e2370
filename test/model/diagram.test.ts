// The machine diagram is generated from the machines, never drawn by hand: the golden Mermaid file
// (docs/machine.mmd) and the README's Mermaid block must be what the machines give today, and the
// SVG that `runner diagram --format svg` renders must show every state and every transition, each
// child machine's states grouped in a cluster of its name.
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { iterationMachine } from "../../machines/iteration.js";
import { compositionGraph } from "../../src/diagram/graph.js";
import { toMermaid } from "../../src/diagram/render.js";
import { PROJECT_ROOT, runner } from "../helpers/sandbox.js";
import { EDGES, GRAPH, STATES } from "./paths.js";

const run = promisify(execFile);
const GOLDEN = path.join(PROJECT_ROOT, "docs", "machine.mmd");

describe("the machine diagram", () => {
  it("scripts/update-diagram.mjs --check: docs/machine.mmd and the README's Mermaid block match the built machine", async () => {
    const result = await run(process.execPath, [path.join(PROJECT_ROOT, "scripts", "update-diagram.mjs"), "--check"], { cwd: PROJECT_ROOT }).then(
      (out) => ({ code: 0, stderr: out.stderr }),
      (error: { code?: number; stderr?: string }) => ({ code: error.code ?? -1, stderr: error.stderr ?? String(error) }),
    );
    expect(result.stderr, "run `npm run build && node scripts/update-diagram.mjs`").toBe("");
    expect(result.code).toBe(0);
  });

  it("the Mermaid text generated from the machine's source equals the golden file docs/machine.mmd", () => {
    expect(toMermaid(compositionGraph(iterationMachine)), "regenerate with `npm run build && node scripts/update-diagram.mjs`").toBe(
      readFileSync(GOLDEN, "utf8"),
    );
  });

  it("the golden file names every state and every transition (guards on their edges, `always` included)", () => {
    const golden = readFileSync(GOLDEN, "utf8");
    for (const state of STATES) expect(golden, state).toMatch(new RegExp(`(^|\\s)${state}(:|\\s|$)`, "m"));
    for (const edge of EDGES)
      expect(golden, edge.key).toContain(`  ${edge.from} --> ${edge.to}: ${edge.label}${edge.guard ? ` [${edge.guard}]` : ""}\n`);
  });

  it("the golden file groups each child machine's states in a composite state of the child's name", () => {
    const golden = readFileSync(GOLDEN, "utf8");
    expect(GRAPH.clusters.length).toBeGreaterThan(1);
    for (const cluster of GRAPH.clusters) {
      const block = new RegExp(`^  state ${cluster.id} \\{\\n((?: {4}.*\\n)*)  \\}$`, "m").exec(golden);
      expect(block, `composite state ${cluster.id}`).not.toBeNull();
      expect(
        block![1]!
          .trim()
          .split("\n")
          .map((line) => line.trim().split(":")[0]),
        cluster.id,
      ).toEqual(cluster.states);
    }
    // Every state of the flat graph is in one cluster, or is one of the parent's final states.
    expect(GRAPH.clusters.flatMap((cluster) => cluster.states).length).toBe(STATES.length - GRAPH.states.filter((state) => state.final).length);
  });

  it("runner diagram --format svg renders every state and every transition", async () => {
    const result = await runner(PROJECT_ROOT, ["diagram", "--format", "svg"]);
    expect(result.stderr).toBe("");
    expect(result.exitCode).toBe(0);
    const svg = result.stdout;
    expect(svg).toMatch(/<svg[\s>]/);
    expect(svg.trimEnd()).toMatch(/<\/svg>$/);
    for (const state of STATES) {
      expect(svg, `state ${state} is drawn`).toContain(`<title>${state}</title>`);
      expect(svg, `state ${state} is labelled`).toMatch(new RegExp(`<text[^>]*>${state}</text>`));
    }
    // One edge per transition, plus the arrow into the initial state.
    expect(svg.match(/class="edge"/g)?.length).toBe(EDGES.length + 1);
    // One cluster per child machine, labelled with its name and the input it is invoked with.
    for (const cluster of GRAPH.clusters) {
      expect(svg, `cluster ${cluster.id}`).toContain(`<title>cluster_${cluster.id}</title>`);
      expect(svg, `cluster ${cluster.id} is labelled`).toMatch(new RegExp(`<text[^>]*>${cluster.id}</text>`));
    }
    for (const machine of GRAPH.machines.slice(1)) expect(machine.description, `${machine.id} says what it is invoked with`).toBeTruthy();
    for (const edge of EDGES.filter((e) => e.guard)) expect(svg, `guard ${edge.guard} on its edge`).toContain(`[${edge.guard}]`);
  });
});
