// `runner log [--json]`, `runner log --iteration N --diagram` and `runner diagram` through the built
// binary, on a run with a decomposition, a failed guard, a retry that passes, a runner error and a pass.
import { appendFileSync, cpSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { oneSentence, scenario, type Scenario } from "../helpers/scenario.js";
import { gitBytes, runner, tempDir } from "../helpers/sandbox.js";

interface Entry {
  iteration: number;
  commit: string;
  node_id: string | null;
  kind: string;
  agent_status: string | null;
  guard_outcome: string;
  attempts: string | null;
  duration_ms: number | null;
  summary: string;
  failure: string | null;
  runner_error: string | null;
  usage: unknown;
  outcome: string;
}

// iteration → node, kind, status column, guard, attempts, summary
const EXPECTED: [number, string, string, string, string, string, string][] = [
  [1, "root", "decompose", "decomposed", "skipped", "0/3", "split root"],
  [2, "a", "execute", "done", "fail", "1/3", "wrote a, badly"],
  [3, "a", "execute", "done", "pass", "1/3", "fixed a"],
  [4, "b", "-", "runner error (output parse)", "skipped", "0/3", "output_parse_error"],
  [5, "b", "execute", "done", "pass", "0/3", "wrote b"],
];

let s: Scenario;
let states: string[];

beforeAll(async () => {
  s = await scenario({ runId: "log-1" });
  s.script({
    1: {
      decompose: [
        { id: "a", order: 0, title: "First" },
        { id: "b", order: 1, title: "Second" },
      ],
      status: "decomposed",
      summary: "split root into a and b",
    },
    2: { write: { "src/a.txt": "bad\n" }, status: "done", summary: "wrote a, badly", guard: { exit: 1, print: "a is wrong" } },
    3: { write: { "src/a.txt": "a\n" }, status: "done", summary: "fixed a" },
    4: { write: { "src/b.txt": "draft\n" }, rawOutput: "this is not JSON" },
    5: { write: { "src/b.txt": "b\n" }, status: "done", summary: "wrote b" },
  });
  for (let i = 1; i <= 5; i++) {
    const step = await s.step();
    expect(step.exitCode, step.stderr).toBe(i === 4 ? 1 : 0);
  }
  const graph = JSON.parse((await s.runner(["diagram", "--format", "json"])).stdout) as { states: { id: string }[] };
  states = graph.states.map((state) => state.id);
});

describe("usage from local logs is counted only for the commit it belongs to", () => {
  it("a meta.json left by an earlier run under the same run id (another commit) adds no tokens to `log` or `status`", async () => {
    const dir = tempDir();
    cpSync(s.dir, dir, { recursive: true });
    const metaFile = path.join(dir, ".runner", "iterations", "log-1", "0001", "meta.json");
    const meta = JSON.parse(readFileSync(metaFile, "utf8")) as Record<string, unknown>;
    const usage = { input_tokens: 1000, cached_input_tokens: 0, output_tokens: 10, reasoning_tokens: null, cost_usd: 0.5 };
    const read = async () => {
      const log = JSON.parse((await runner(dir, ["log", "--json"], { env: s.env })).stdout) as { usage: unknown; iterations: Entry[] };
      const status = JSON.parse((await runner(dir, ["status", "--json"], { env: s.env })).stdout) as { usage?: unknown; run?: { usage?: unknown } };
      return { log: log.usage, first: log.iterations[0]!.usage, status: JSON.stringify(status).includes('"input_tokens":1000') };
    };
    // Its own commit's meta.json counts (so the check below can fail)...
    writeFileSync(metaFile, JSON.stringify({ ...meta, usage }));
    expect(await read()).toMatchObject({ first: usage, status: true });
    // ...one written for another commit (a reused run id) does not.
    writeFileSync(metaFile, JSON.stringify({ ...meta, usage, commit: "0".repeat(40) }));
    expect(await read()).toEqual({ log: null, first: null, status: false });
  });
});

describe("runner log", () => {
  it("lists every iteration: number, node, kind, status, guard, attempts, duration, tokens, cost, summary", async () => {
    const result = await s.runner(["log"]);
    expect(result.stderr).toBe("");
    expect(result.exitCode).toBe(0);
    const out = result.stdout.split("\n").filter(Boolean);
    expect(out[0]).toBe("run log-1: 5 iterations, 2 failed (1 red guard, 1 runner error)");
    expect(out[1]!.split(/\s+/).filter(Boolean)).toEqual([
      "iter",
      "node",
      "kind",
      "status",
      "guard",
      "attempts",
      "time",
      "tokens",
      "in/out",
      "cost",
      "summary",
    ]);
    expect(out).toHaveLength(2 + EXPECTED.length);
    for (const [i, [iteration, nodeId, kind, status, guard, attempts, summary]] of EXPECTED.entries()) {
      const cells = out[2 + i]!.trim().split(/\s{2,}/);
      expect(cells.slice(0, 6), out[2 + i]).toEqual([String(iteration), nodeId, kind, status, guard, attempts]);
      expect(cells[6]).toMatch(/^\d+\.\ds$/);
      // A command agent reports no usage: no tokens, no cost (and no usage line at the end).
      expect(cells.slice(7, 9)).toEqual(["-", "-"]);
      expect(cells.slice(9).join("  ")).toContain(summary);
    }
  });

  it("--json has the same iterations with every field", async () => {
    const result = await s.runner(["log", "--json"]);
    expect(result.stderr).toBe("");
    expect(result.exitCode).toBe(0);
    const log = JSON.parse(result.stdout) as { run_id: string; iterations: Entry[] };
    expect(log.run_id).toBe("log-1");
    const shas = (await s.git(["log", "--format=%H", "--reverse", "main..HEAD"])).split("\n").filter(Boolean);
    expect(log.iterations.map((entry) => entry.commit)).toEqual(shas);
    for (const [i, [iteration, nodeId, kind, status, guard, attempts, summary]] of EXPECTED.entries()) {
      const entry = log.iterations[i]!;
      // A runner error: the commit's kind and the retry seed 002 records for it stay in the JSON; `outcome` names it.
      const error = status.startsWith("runner error");
      expect(entry).toMatchObject({ iteration, node_id: nodeId, kind: error ? "execute" : kind, guard_outcome: guard, attempts });
      expect(entry.agent_status).toBe(error ? "retry" : status);
      expect(entry.outcome).toBe(error ? status : `agent said ${status}`);
      expect(entry.duration_ms).toBe(s.meta(iteration).durations.total_ms);
      expect(entry.duration_ms).toBeGreaterThan(0);
      if (error) expect(entry.runner_error).toContain(summary);
      else expect(entry.summary).toContain(summary);
    }
    expect(log.iterations[1]!.failure).toContain("guard");
    expect(log.iterations.map((entry) => entry.usage)).toEqual(EXPECTED.map(() => null));
    expect((JSON.parse(result.stdout) as { usage: unknown }).usage).toBeNull();
    expect(log.iterations[2]!.failure).toBeNull();
  });

  it("--iteration N --diagram prints DOT with that iteration's states and transitions highlighted", async () => {
    for (const iteration of [2, 4]) {
      const result = await s.runner(["log", "--iteration", String(iteration), "--diagram"]);
      expect(result.stderr).toBe("");
      expect(result.exitCode).toBe(0);
      const dot = result.stdout;
      expect(dot.startsWith("digraph")).toBe(true);
      const path_ = s.meta(iteration).path;
      const highlighted = [...dot.matchAll(/^ {2}"(\w+)" \[label="[^"]*"[^\n]*fillcolor=/gm)].map((match) => match[1]);
      expect(new Set(highlighted)).toEqual(new Set(path_));
      for (const state of states) expect(dot).toMatch(new RegExp(`^ {2}"${state}" \\[`, "m"));
      // Every transition the iteration took (from events.jsonl) is drawn highlighted, and only those.
      const taken = s.events().filter((event) => event.iteration === iteration && event.from !== "(start)" && event.from !== event.to);
      const boldEdges = [...dot.matchAll(/^ {2}"(\w+)" -> "(\w+)" \[[^\n]*penwidth=2\.5/gm)].map((match) => `${match[1]}->${match[2]}`);
      expect(new Set(boldEdges)).toEqual(new Set(taken.map((event) => `${event.from}->${event.to}`)));
    }
    expect(s.meta(2).path).toContain("guard");
    expect(s.meta(4).path).toContain("recover");
  });

  it("--iteration N --diagram reads past a torn last line of events.jsonl (a runner killed mid-write) and a meta.json that is not JSON", async () => {
    const dir = path.join(tempDir("runner-log-torn-"), "copy");
    cpSync(s.dir, dir, { recursive: true });
    appendFileSync(path.join(dir, ".runner", "iterations", "log-1", "events.jsonl"), '{"iteration": 2, "from": "gua');
    const torn = await runner(dir, ["log", "--iteration", "2", "--diagram"], { env: s.env });
    expect(torn.stderr).toBe("");
    expect(torn.exitCode).toBe(0);
    expect(torn.stdout.startsWith("digraph")).toBe(true);
    writeFileSync(path.join(dir, ".runner", "iterations", "log-1", "0002", "meta.json"), "{ not json");
    const broken = await runner(dir, ["log", "--iteration", "2", "--diagram"], { env: s.env });
    expect(broken.exitCode).toBe(1);
    expect(oneSentence(broken.stderr)).toMatch(/^No local log for iteration 2 of run log-1/);
  });

  it("--iteration N --diagram --format svg --output f.svg writes an SVG naming every state", async () => {
    const file = path.join(tempDir("runner-log-svg-"), "f.svg");
    const result = await s.runner(["log", "--iteration", "3", "--diagram", "--format", "svg", "--output", file]);
    expect(result.stderr).toBe("");
    expect(result.exitCode).toBe(0);
    const svg = readFileSync(file, "utf8");
    expect(svg).toContain("<svg");
    expect(svg.trimEnd().endsWith("</svg>")).toBe(true);
    for (const state of states) expect(svg, state).toContain(`>${state}</text>`);
    expect(svg).toContain("#c8e6c9");
  });

  it("--iteration N alone shows one iteration; an unknown iteration is refused", async () => {
    const one = await s.runner(["log", "--iteration", "2", "--json"]);
    expect(one.exitCode).toBe(0);
    expect(JSON.parse(one.stdout)).toMatchObject({ iteration: 2, node_id: "a", guard_outcome: "fail" });
    const missing = await s.runner(["log", "--iteration", "9"]);
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toContain("no iteration 9");
  });
});

describe("runner log: the tree snapshots (seed 001 §10) refer to git", () => {
  it("--iteration N --tree before|after reads back byte for byte the tree file git holds at the iteration's parent and its commit; the log keeps no copy", async () => {
    const shas = (await s.git(["log", "--format=%H", "--reverse", "main..HEAD"])).split("\n").filter(Boolean);
    for (const [i, sha] of shas.entries()) {
      const iteration = i + 1;
      const snapshot = (side: string) => runner(s.dir, ["log", "--iteration", String(iteration), "--tree", side], { env: s.env, exactOutput: true });
      const [before, after] = [await snapshot("before"), await snapshot("after")];
      expect(before.exitCode, before.stderr).toBe(0);
      expect(after.exitCode, after.stderr).toBe(0);
      const committed = (revision: string) => gitBytes(s.dir, ["cat-file", "blob", `${revision}:.runner/state/tree.json`], s.env);
      expect(Buffer.from(before.stdout).equals(await committed(`${sha}^`)), `iteration ${iteration}, before`).toBe(true);
      expect(Buffer.from(after.stdout).equals(await committed(sha)), `iteration ${iteration}, after`).toBe(true);
      for (const copy of ["tree.before.json", "tree.after.json"]) expect(s.exists(s.iterFile(iteration, copy)), `${iteration}/${copy}`).toBe(false);
    }
    const one = await s.runner(["log", "--iteration", "2"]);
    expect(one.stdout).toContain(`tree_before: commit ${shas[0]!.slice(0, 12)}, .runner/state/tree.json (blob `);
    expect(one.stdout).toContain(`tree_after: commit ${shas[1]!.slice(0, 12)}, .runner/state/tree.json (blob `);
  });

  it("a reference the log no longer matches (trees.json edited) is not followed; --tree without --iteration is refused", async () => {
    const copy = path.join(tempDir("runner-log-refs-"), "repo");
    cpSync(s.dir, copy, { recursive: true });
    const refsFile = path.join(copy, ".runner", "iterations", "log-1", "0003", "trees.json");
    const refs = JSON.parse(readFileSync(refsFile, "utf8")) as { after: { blob: string } };
    refs.after.blob = "0".repeat(refs.after.blob.length);
    writeFileSync(refsFile, JSON.stringify(refs));
    const forged = await runner(copy, ["log", "--iteration", "3", "--tree", "after"], { env: s.env });
    expect(forged.exitCode).toBe(1);
    expect(oneSentence(forged.stderr)).toContain("has no tree after snapshot here");
    const bare = await s.runner(["log", "--tree", "after"]);
    expect(bare.exitCode).toBe(1);
    expect(oneSentence(bare.stderr)).toContain("--tree needs --iteration N");
  });
});

describe("runner diagram", () => {
  it("prints the machine as mermaid, dot, json and svg, each naming every state", async () => {
    expect(states).toEqual(
      expect.arrayContaining([
        "safetyCheck",
        "loadTree",
        "selectLeaf",
        "buildPrompt",
        "repairTree",
        "execute",
        "reloadTree",
        "classify",
        "guard",
        "updateState",
        "recover",
        "persist",
        "commit",
        "committed",
        "nothingToDo",
        "refused",
        "failed",
      ]),
    );
    const mermaid = await s.runner(["diagram", "--format", "mermaid"]);
    expect(mermaid.exitCode).toBe(0);
    expect(mermaid.stdout.startsWith("stateDiagram-v2\n")).toBe(true);
    expect(mermaid.stdout).toContain("[*] --> safetyCheck");
    for (const state of states) expect(mermaid.stdout).toMatch(new RegExp(`\\b${state}\\b`));

    const dot = await s.runner(["diagram", "--format", "dot"]);
    expect(dot.exitCode).toBe(0);
    expect(dot.stdout.startsWith('digraph "iteration" {')).toBe(true);
    expect(dot.stdout).not.toContain("fillcolor");
    for (const state of states) expect(dot.stdout).toContain(`"${state}" [`);

    const json = await s.runner(["diagram", "--format", "json"]);
    const graph = JSON.parse(json.stdout) as { initial: string; transitions: { from: string; to: string }[] };
    expect(graph.initial).toBe("safetyCheck");
    for (const t of graph.transitions) {
      expect(states).toContain(t.from);
      expect(states).toContain(t.to);
    }

    const file = path.join(tempDir("runner-diagram-"), "machine.svg");
    const svg = await s.runner(["diagram", "--format", "svg", "--output", file]);
    expect(svg.exitCode).toBe(0);
    expect(svg.stdout).toContain(file);
    // (the renderer is an ES module the bundle imports through its loader: no warning of Node's on the way)
    expect(svg.stderr).toBe("");
    const text = readFileSync(file, "utf8");
    expect(text).toContain("<svg");
    for (const state of states) expect(text, state).toContain(`>${state}</text>`);
  });
});
