// The bad-input corpus (issue 6 §4): every case of test/fixtures/bad/manifest.json — malformed
// trees, configs, agent outputs, node policies, run ids and branch states — runs through the built
// binary and gets exit 1 and one sentence on stderr naming the file (or the branch state) and what
// is wrong (`validate` reports every problem after a first line naming the files), and nothing in
// the repository changes: HEAD, the branch, `git status` and the tree file's bytes. Agent outputs
// are the exception the seeds make: the iteration is recorded as a runner error and committed.
import { execa } from "execa";
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { expectSameSnapshot, runRaw, snapshot, stderrLines } from "../helpers/bad-input.js";
import { git, PROJECT_ROOT, tempDir, testEnv } from "../helpers/sandbox.js";
import { scenario, subject, TREE_FILE } from "../helpers/scenario.js";

const CORPUS = path.join(PROJECT_ROOT, "test", "fixtures", "bad");

interface Check {
  command: string[];
  stderr: string;
}

interface BadCase extends Check {
  name: string;
  kind: "tree" | "config" | "output" | "policy" | "run-id" | "branch";
  template: "valid" | "no-tree";
  /** Repository path → fixture path (relative to the corpus folder). */
  place: Record<string, string>;
  /** Repository path → name of an input generated at test time (too big to commit). */
  generate?: Record<string, string>;
  /** Commit the placed files so the working tree is clean (default true). */
  commit?: boolean;
  /** A git recipe that puts the repository in a branch state. */
  setup?: string;
  /** Environment for the runner: fixture paths (or `generate:<name>`) the scripted agent copies. */
  env?: Record<string, string>;
  /** Agent-output cases: the iteration is committed as a runner error. */
  records?: boolean;
  also?: Check[];
}

const manifest = JSON.parse(readFileSync(path.join(CORPUS, "manifest.json"), "utf8")) as { cases: BadCase[] };
const CASES = manifest.cases;

/** The scripted agent of the templates: copies $BAD_OUTPUT_FILE (if any) to the output file. */
const COPY_AGENT = ["bash", "-c", 'if [ -f "$BAD_OUTPUT_FILE" ]; then cp "$BAD_OUTPUT_FILE" "$RUNNER_OUTPUT_FILE"; fi'];

const templates: Record<BadCase["template"], string> = { valid: "", "no-tree": "" };
let runnerEnv: Record<string, string> = testEnv();
let generatedDir = "";

const gitIn = (dir: string, args: string[]) => git(dir, args, testEnv());

beforeAll(async () => {
  // valid: `.runner/` committed on main, the run branch runner/t1 checked out (root is the only leaf).
  const s = await scenario({ executor: COPY_AGENT, runId: "t1", files: { "README.txt": "readme\n" } });
  templates.valid = s.dir;
  runnerEnv = s.env;
  // no-tree: the same files, but no task tree anywhere in the history (so an invalid tree is refused
  // rather than repaired against an earlier valid one).
  const noTree = path.join(tempDir("runner-bad-template-"), "repo");
  await execa("cp", ["-r", s.dir, noTree]);
  rmSync(path.join(noTree, ".git"), { recursive: true, force: true });
  rmSync(path.join(noTree, TREE_FILE));
  await gitIn(noTree, ["init", "-q", "-b", "main"]);
  await gitIn(noTree, ["add", "-A"]);
  await gitIn(noTree, ["commit", "-q", "-m", "project without a tree"]);
  await gitIn(noTree, ["checkout", "-q", "-b", "runner/t1"]);
  templates["no-tree"] = noTree;

  generatedDir = tempDir("runner-bad-generated-");
  // 50 MB: a valid tree padded with spaces, over the 40 MiB limit (made here, never committed).
  const valid = readFileSync(path.join(s.dir, TREE_FILE));
  const big = Buffer.alloc(50 * 1024 * 1024, 0x20);
  valid.copy(big, 0, 0, valid.length - 1);
  big[big.length - 1] = 0x0a;
  writeFileSync(path.join(generatedDir, "tree-50mb"), big);
  // 5 MB of garbage as the agent's output.
  const garbage = Buffer.alloc(5 * 1024 * 1024);
  for (let i = 0; i < garbage.length; i++) garbage[i] = (i * 2654435761) >>> 24;
  writeFileSync(path.join(generatedDir, "garbage-5mb"), garbage);
}, 120_000);

function fixture(name: string): string {
  return name.startsWith("generate:") ? path.join(generatedDir, name.slice("generate:".length)) : path.join(CORPUS, name);
}

/** Git recipes for the branch states. */
async function setUp(dir: string, recipe: string): Promise<void> {
  const conflict = async () => {
    await gitIn(dir, ["checkout", "-q", "-b", "side"]);
    writeFileSync(path.join(dir, "README.txt"), "side\n");
    await gitIn(dir, ["commit", "-q", "-am", "side"]);
    await gitIn(dir, ["checkout", "-q", "runner/t1"]);
    writeFileSync(path.join(dir, "README.txt"), "run\n");
    await gitIn(dir, ["commit", "-q", "-am", "run"]);
  };
  switch (recipe) {
    case "detached":
      await gitIn(dir, ["checkout", "-q", "--detach"]);
      return;
    case "no-commits":
      rmSync(path.join(dir, ".git"), { recursive: true, force: true });
      await gitIn(dir, ["init", "-q", "-b", "runner/t1"]);
      return;
    case "merge-conflict":
      await conflict();
      await expect(gitIn(dir, ["merge", "side"])).rejects.toThrow();
      return;
    case "rebase-conflict":
      await conflict();
      await expect(gitIn(dir, ["rebase", "side"])).rejects.toThrow();
      return;
    case "on-main":
      await gitIn(dir, ["checkout", "-q", "main"]);
      return;
    case "on-master":
      await gitIn(dir, ["checkout", "-q", "main"]);
      await gitIn(dir, ["branch", "-m", "main", "master"]);
      return;
    case "feature-branch":
      await gitIn(dir, ["checkout", "-q", "-b", "feature"]);
      return;
    case "dirty":
      writeFileSync(path.join(dir, "notes.txt"), "not committed\n");
      return;
    default:
      throw new Error(`unknown setup recipe ${recipe}`);
  }
}

/** A fresh copy of the case's template with its inputs in place. */
async function prepare(c: BadCase): Promise<string> {
  const dir = path.join(tempDir("runner-bad-"), "repo");
  await execa("cp", ["-r", templates[c.template], dir]);
  const placed = [...Object.entries(c.place), ...Object.entries(c.generate ?? {}).map(([target, name]) => [target, `generate:${name}`] as const)];
  for (const [target, source] of placed) {
    mkdirSync(path.dirname(path.join(dir, target)), { recursive: true });
    copyFileSync(fixture(source), path.join(dir, target));
  }
  if (placed.length > 0 && c.commit !== false) {
    await gitIn(dir, ["add", "-A"]);
    await gitIn(dir, ["commit", "-q", "-m", `bad input: ${c.name}`]);
  }
  if (c.setup) await setUp(dir, c.setup);
  return dir;
}

function envFor(c: BadCase): Record<string, string> {
  const env = { ...runnerEnv };
  for (const [name, value] of Object.entries(c.env ?? {})) env[name] = fixture(value);
  return env;
}

/** The file (or branch state) a case is about, as its message must name it. */
function subjectOf(c: BadCase): string | undefined {
  return Object.keys(c.place)[0] ?? Object.keys(c.generate ?? {})[0];
}

async function runCheck(c: BadCase, dir: string, check: Check): Promise<void> {
  const label = `${c.name}: runner ${check.command.join(" ")}`;
  const before = await snapshot(dir);
  const result = await runRaw(dir, check.command, envFor(c));
  expect(result.exitCode, `${label}\n${result.stderr}`).toBe(1);
  expect(result.stdout, label).toBe("");
  expect(result.stderr, label).not.toMatch(/\n\s+at |Internal error/);
  const lines = stderrLines(result.stderr);
  const file = subjectOf(c);
  if (check.command[0] === "validate") {
    // A first line naming the files, then every problem with its file and JSON path.
    expect(lines[0], label).toMatch(/^\d+ problems? in .+; fix (it|them) and run `runner validate` again:$/);
    expect(lines[0], label).toContain(file!);
    expect(lines[1], label).toMatch(new RegExp(`^  ${file!.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} \\$`));
    expect(
      lines.slice(1).every((line) => line.startsWith("  ")),
      label,
    ).toBe(true);
    expect(result.stderr, label).toMatch(new RegExp(check.stderr));
  } else {
    expect(lines, `${label}: one sentence\n${result.stderr}`).toHaveLength(1);
    expect(lines[0], label).toMatch(new RegExp(check.stderr));
    if (file && c.kind !== "output") expect(lines[0], label).toContain(file);
  }
  if (c.records) {
    // Seed 002: an output parse error is a retry with the guard skipped, attempts unchanged, committed.
    const after = await snapshot(dir);
    expect((await gitIn(dir, ["rev-parse", "HEAD~1"])).trim(), label).toBe(before.head);
    expect(after.porcelain, label).toBe("");
    expect((await gitIn(dir, ["log", "-1", "--format=%s"])).trim(), label).toBe(subject("t1", 1, "root", "decompose", "skipped"));
    const body = await gitIn(dir, ["log", "-1", "--format=%B"]);
    expect(body, label).toMatch(/^Runner-Status: retry$/m);
    expect(body, label).toMatch(
      /^Runner-Error: output_parse_error: (the output file \.runner\/iterations\/t1\/0001\/output\.json|the agent wrote no output file)/m,
    );
    expect(JSON.parse(readFileSync(path.join(dir, TREE_FILE), "utf8")), label).toMatchObject({ root: { passes: false, attempts: 0 } });
  } else {
    expectSameSnapshot(await snapshot(dir), before, label);
  }
}

describe("the bad-input corpus", () => {
  it("has at least 40 cases of every kind the issue names, each with a unique name", () => {
    expect(CASES.length).toBeGreaterThanOrEqual(40);
    expect(new Set(CASES.map((c) => c.name)).size).toBe(CASES.length);
    const kinds = new Map<string, number>();
    for (const c of CASES) kinds.set(c.kind, (kinds.get(c.kind) ?? 0) + 1);
    expect([...kinds.keys()].sort()).toEqual(["branch", "config", "output", "policy", "run-id", "tree"]);
    for (const count of kinds.values()) expect(count).toBeGreaterThanOrEqual(5);
    console.log(
      `bad-input corpus: ${CASES.length} cases (${[...kinds].map(([kind, count]) => `${count} ${kind}`).join(", ")}), ${CASES.reduce((n, c) => n + 1 + (c.also?.length ?? 0), 0)} runner invocations`,
    );
  });

  describe.concurrent("every case: exit 1, one sentence naming the file and the problem, nothing changed", () => {
    for (const c of CASES) {
      it(c.name, async () => {
        const dir = await prepare(c);
        for (const check of [c as Check, ...(c.also ?? [])]) await runCheck(c, dir, check);
      }, 90_000);
    }
  });
});
