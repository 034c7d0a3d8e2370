// The machine diagram is generated from the machine, never drawn by hand: the golden Mermaid file
// (docs/machine.mmd) and the README's Mermaid block must be what the machine gives today, and the
// SVG that `runner diagram --format svg` renders must show every state and every transition.
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { iterationMachine } from "../../machines/iteration.js";
import { machineGraph } from "../../src/diagram/graph.js";
import { toMermaid } from "../../src/diagram/render.js";
import { PROJECT_ROOT, runner } from "../helpers/sandbox.js";
import { EDGES, STATES } from "./paths.js";

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
    expect(toMermaid(machineGraph(iterationMachine)), "regenerate with `npm run build && node scripts/update-diagram.mjs`").toBe(
      readFileSync(GOLDEN, "utf8"),
    );
  });

  it("the golden file names every state and every transition (guards on their edges, `always` included)", () => {
    const golden = readFileSync(GOLDEN, "utf8");
    for (const state of STATES) expect(golden, state).toMatch(new RegExp(`(^|\\s)${state}(:|\\s|$)`, "m"));
    for (const edge of EDGES)
      expect(golden, edge.key).toContain(`  ${edge.from} --> ${edge.to}: ${edge.label}${edge.guard ? ` [${edge.guard}]` : ""}\n`);
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
    for (const edge of EDGES.filter((e) => e.guard)) expect(svg, `guard ${edge.guard} on its edge`).toContain(`[${edge.guard}]`);
  });
});
