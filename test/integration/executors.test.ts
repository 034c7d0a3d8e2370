// The Codex and Claude adapters end to end: `runner run` drives a three-leaf tree to passes=true
// through fake `codex` / `claude` executables put first on PATH (test/helpers/fake-agents.ts). The
// fakes check the argv they receive, act on the tree, and answer in the real tools' output formats;
// the argv the runner records in meta.json must be the one the adapters document, secrets redacted.
import { execa } from "execa";
import { existsSync, readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CONFIG_FILE, scenario, subject, type Scenario } from "../helpers/scenario.js";
import { PROJECT_ROOT, node, tempDir, tree, writeFiles } from "../helpers/sandbox.js";
import { documentedFlags, installFakeAgents, LEAF_FILE_GUARD, type FakeAgents, type FakeExpectations } from "../helpers/fake-agents.js";

const SECRET = "sk-test-secret-123456";
const SCHEMA_FILE = path.join(PROJECT_ROOT, "schemas", "agent_output", "v1.schema.json");
const SCHEMA_TEXT = JSON.stringify(JSON.parse(readFileSync(SCHEMA_FILE, "utf8")));
const LEAVES = ["a", "b", "c"];

/** A repository whose executor is the given config, guarded by check.mjs, on run branch `runId`. */
async function adapterRepo(runId: string, executorToml: string, options: { limits?: string; tree?: ReturnType<typeof tree> } = {}): Promise<{ s: Scenario; fakes: FakeAgents }> {
  const fakes = installFakeAgents();
  const s = await scenario({
    runId,
    start: false,
    tree: options.tree,
    env: { ...fakes.env, OPENAI_API_KEY: SECRET },
    files: { "check.mjs": LEAF_FILE_GUARD },
  });
  writeFiles(s.dir, {
    [CONFIG_FILE]: [
      "[executor]",
      executorToml.trim(),
      "",
      "[guard]",
      'command = ["node", "check.mjs"]',
      "",
      "[limits]",
      "iteration_timeout_seconds = 60",
      ...(options.limits ? [options.limits] : []),
      "",
    ].join("\n"),
  });
  await s.git(["commit", "-q", "-am", "use a real agent"]);
  const start = await s.runner(["start", "--run-id", runId]);
  expect(start.stderr).toBe("");
  expect(start.exitCode).toBe(0);
  return { s, fakes };
}

function root(s: Scenario): string {
  return realpathSync(s.dir);
}

/** Every file of the run's local logs, for a secret scan. */
function iterationFiles(s: Scenario): string[] {
  const base = path.join(s.dir, ".runner", "iterations", s.runId);
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else out.push(full);
    }
  };
  walk(base);
  return out;
}

/** `flags` occur in `argv` in this order. */
function expectInOrder(argv: string[], flags: string[]): void {
  let from = 0;
  for (const flag of flags) {
    const at = argv.indexOf(flag, from);
    expect(at, `${flag} after position ${from} in ${JSON.stringify(argv)}`).toBeGreaterThanOrEqual(from);
    from = at + 1;
  }
}

async function expectThreeLeavesDone(s: Scenario, runId: string, result: { exitCode: number; stdout: string; stderr: string }): Promise<void> {
  expect(result.stderr).toBe("");
  expect(result.exitCode).toBe(0);
  expect(result.stdout).toContain("Done: the root passes");
  expect(await s.subjects()).toEqual([
    subject(runId, 1, "root", "decompose", "skipped"),
    subject(runId, 2, "a", "execute", "pass"),
    subject(runId, 3, "b", "execute", "pass"),
    subject(runId, 4, "c", "execute", "pass"),
  ]);
  const after = s.readTree().root;
  expect(after.passes).toBe(true);
  expect(after.children.map((child) => [child.id, child.passes, child.attempts])).toEqual(LEAVES.map((id) => [id, true, 0]));
  for (const id of LEAVES) expect(s.read(`src/${id}.txt`)).toBe(`ok ${id}\n`);
  expect(await s.git(["status", "--porcelain"])).toBe("");
  // Nothing the runner wrote carries the secret: local logs and commit messages.
  for (const file of iterationFiles(s)) expect(readFileSync(file, "utf8"), file).not.toContain(SECRET);
  expect(await s.git(["log", "--format=%B", `${s.baseRef}..HEAD`])).not.toContain(SECRET);
  const validate = await s.runner(["validate"]);
  expect(validate.exitCode).toBe(0);
}

describe("the Codex adapter (kind = \"codex\") against a fake codex", () => {
  const CODEX_EXPECT = (sandbox: string): FakeExpectations => ({
    codex: { sandbox, model: "gpt-test", profile: "ci", overrides: ["model_reasoning_effort=low", `api_key=${SECRET}`], extraArgs: ["--color", "never"] },
    schemaFile: SCHEMA_FILE,
    leaves: LEAVES,
  });

  it("drives a three-leaf tree to passes=true; meta.json records the documented argv with secrets redacted", async () => {
    const { s, fakes } = await adapterRepo(
      "codex-1",
      `kind = "codex"
model = "gpt-test"
profile = "ci"
config_overrides = ["model_reasoning_effort=low", "api_key=${SECRET}"]
extra_args = ["--color", "never"]`,
    );
    fakes.expect(CODEX_EXPECT("workspace-write"));
    const result = await s.runner(["run"]);
    const calls = fakes.calls();
    expect(calls.map((call) => call.problems)).toEqual([[], [], [], []]);
    await expectThreeLeavesDone(s, "codex-1", result);

    // The fake saw the real values; meta.json has the same argv with the secret replaced.
    expect(calls.map((call) => call.nodeId)).toEqual(["root", ...LEAVES]);
    const documented = documentedFlags(readFileSync(path.join(PROJECT_ROOT, "src/adapters/executors/codex.ts"), "utf8"), "codex");
    expect(documented).toEqual(["--json", "--skip-git-repo-check", "-C", "--sandbox", "--output-schema", "--output-last-message", "-m", "-p", "-c", "-"]);
    for (const [i, call] of calls.entries()) {
      const iteration = i + 1;
      const outputFile = path.join(root(s), s.iterFile(iteration, "output.json"));
      const expected = [
        "codex", "exec", "--json", "--skip-git-repo-check", "-C", root(s), "--sandbox", "workspace-write",
        "--output-schema", SCHEMA_FILE, "--output-last-message", outputFile,
        "-m", "gpt-test", "-p", "ci", "-c", "model_reasoning_effort=low", "-c", "api_key=***", "--color", "never", "-",
      ];
      const meta = s.meta(iteration);
      const argv = (meta.executor as { argv: string[] }).argv;
      expect(argv).toEqual(expected);
      expectInOrder(argv, documented);
      expect(argv).not.toContain("danger-full-access");
      expect(call.argv).toEqual(expected.slice(1).map((arg) => (arg === "api_key=***" ? `api_key=${SECRET}` : arg)));
      expect(realpathSync(call.cwd)).toBe(root(s));
      // The prompt came on stdin and is the iteration's prompt.md.
      expect(call.stdin).toBe(s.read(s.iterFile(iteration, "prompt.md")));
      // The JSONL events are in executor.log (redacted); the final message became output.json.
      const log = s.read(s.iterFile(iteration, "executor.log"));
      expect(log).toContain('{"type":"thread.started"');
      expect(log).toContain('"type":"turn.completed"');
      expect(log).toContain("key ***");
      expect(JSON.parse(s.read(s.iterFile(iteration, "output.json")))).toEqual(
        iteration === 1 ? { status: "decomposed", summary: "Split root into a, b, c" } : { status: "done", summary: `Wrote src/${LEAVES[i - 1]}.txt` },
      );
      expect(meta.agent_status).toBe(iteration === 1 ? "decomposed" : "done");
    }
  });

  it('passes sandbox = "danger-full-access" through when the config asks for it', async () => {
    const { s, fakes } = await adapterRepo(
      "codex-2",
      `kind = "codex"
sandbox = "danger-full-access"`,
    );
    fakes.expect({ ...CODEX_EXPECT("danger-full-access"), codex: { sandbox: "danger-full-access", overrides: [], extraArgs: [] } });
    const step = await s.step();
    expect(step.stderr).toBe("");
    expect(step.exitCode).toBe(0);
    expect(fakes.calls().map((call) => call.problems)).toEqual([[]]);
    const argv = (s.meta(1).executor as { argv: string[] }).argv;
    expect(argv.slice(argv.indexOf("--sandbox"), argv.indexOf("--sandbox") + 2)).toEqual(["--sandbox", "danger-full-access"]);
    expect(argv).not.toContain("-m");
    expect(argv).not.toContain("-c");
    expect(argv[argv.length - 1]).toBe("-");
  });
});

describe("the Claude adapter (kind = \"claude\") against a fake claude", () => {
  it("drives a three-leaf tree to passes=true; meta.json records the documented argv with secrets redacted", async () => {
    const { s, fakes } = await adapterRepo(
      "claude-1",
      `kind = "claude"
model = "claude-test"
allowed_tools = ["Read", "Edit", "Bash(git diff:*)"]
max_turns = 7
extra_args = ["--append-system-prompt", "key ${SECRET}"]`,
    );
    fakes.expect({
      claude: {
        permissionMode: "acceptEdits",
        allowedTools: ["Read", "Edit", "Bash(git diff:*)"],
        maxTurns: 7,
        model: "claude-test",
        extraArgs: ["--append-system-prompt", `key ${SECRET}`],
        // b answers only in the result text (no structured_output): the adapter takes the JSON from it.
        resultTextOnly: ["b"],
      },
      schemaFile: SCHEMA_FILE,
      leaves: LEAVES,
    });
    const result = await s.runner(["run"]);
    const calls = fakes.calls();
    expect(calls.map((call) => call.problems)).toEqual([[], [], [], []]);
    await expectThreeLeavesDone(s, "claude-1", result);

    const documented = documentedFlags(readFileSync(path.join(PROJECT_ROOT, "src/adapters/executors/claude.ts"), "utf8"), "claude");
    expect(documented).toEqual(["-p", "--output-format", "--verbose", "--json-schema", "--permission-mode", "--allowedTools", "--max-turns", "--model"]);
    const expected = [
      "claude", "-p", "--output-format", "stream-json", "--verbose", "--json-schema", SCHEMA_TEXT,
      "--permission-mode", "acceptEdits", "--allowedTools", "Read", "Edit", "Bash(git diff:*)", "--max-turns", "7",
      "--model", "claude-test", "--append-system-prompt", "key ***",
    ];
    for (const [i, call] of calls.entries()) {
      const iteration = i + 1;
      const argv = (s.meta(iteration).executor as { argv: string[] }).argv;
      expect(argv).toEqual(expected);
      expectInOrder(argv, documented);
      expect(call.argv).toEqual(expected.slice(1).map((arg) => (arg === "key ***" ? `key ${SECRET}` : arg)));
      expect(realpathSync(call.cwd)).toBe(root(s));
      expect(call.stdin).toBe(s.read(s.iterFile(iteration, "prompt.md")));
      const log = s.read(s.iterFile(iteration, "executor.log"));
      expect(log).toContain('{"type":"system","subtype":"init"');
      expect(log).toContain('"type":"result"');
      expect(log).toContain("(key ***)");
      // The result event's structured output (or, for b, the JSON in the result text) became output.json.
      const output = JSON.parse(s.read(s.iterFile(iteration, "output.json"))) as { status: string; summary: string };
      expect(output.status).toBe(iteration === 1 ? "decomposed" : "done");
      expect(output.summary).toContain(iteration === 1 ? "Split root into a, b, c" : `Wrote src/${LEAVES[i - 1]}.txt`);
    }
    // The summaries reached the commits, secrets redacted.
    expect(await s.message("HEAD~1")).toContain("Wrote src/b.txt");
    expect(await s.message("HEAD")).toContain("Wrote src/c.txt (key ***)");
  });

  it("finds the result event after 3 MB of stream-json events when output_cap_bytes = 65536", async () => {
    const { s, fakes } = await adapterRepo(
      "claude-cap",
      `kind = "claude"
permission_mode = "plan"`,
      { limits: "output_cap_bytes = 65536", tree: tree(node("root", { children: [node("solo")] })) },
    );
    fakes.expect({ claude: { permissionMode: "plan", allowedTools: [], extraArgs: [], noiseBytes: 3_000_000 }, schemaFile: SCHEMA_FILE, leaves: LEAVES });
    const step = await s.step();
    expect(step.stderr).toBe("");
    expect(step.exitCode).toBe(0);
    expect(fakes.calls().map((call) => call.problems)).toEqual([[]]);
    expect(await s.subjects()).toEqual([subject("claude-cap", 1, "solo", "execute", "pass")]);
    expect(s.readTree().root.passes).toBe(true);
    expect(JSON.parse(s.read(s.iterFile(1, "output.json")))).toEqual({ status: "done", summary: `Wrote src/solo.txt (key ***)` });
    const argv = (s.meta(1).executor as { argv: string[] }).argv;
    expect(argv).not.toContain("--allowedTools");
    expect(argv).not.toContain("--max-turns");
    expect(argv).not.toContain("--model");
    expect(argv.slice(argv.indexOf("--permission-mode"), argv.indexOf("--permission-mode") + 2)).toEqual(["--permission-mode", "plan"]);
    // The log kept the cap and says how much was dropped; the result line itself was not kept.
    const logFile = path.join(s.dir, s.iterFile(1, "executor.log"));
    expect(statSync(logFile).size).toBeLessThan(65536 + 4096);
    const log = readFileSync(logFile, "utf8");
    expect(log).toMatch(/stdout \d{7} bytes, stderr 0 bytes, \d+ dropped over the cap of 65536 per stream/);
    expect(log).not.toContain('"type":"result"');
  });
});

// The real CLIs are not dependencies of the runner (they need accounts and network); when a user has
// installed them next to it (or RUNNER_REAL_CLIS_DIR names a folder whose node_modules has them),
// their --help must list every flag the adapters pass.
const resolveFrom = createRequire(process.env.RUNNER_REAL_CLIS_DIR ? path.join(path.resolve(process.env.RUNNER_REAL_CLIS_DIR), "noop.js") : import.meta.url);
function installedBin(pkg: string, bin: string): string | undefined {
  try {
    const manifest = resolveFrom.resolve(`${pkg}/package.json`);
    const json = JSON.parse(readFileSync(manifest, "utf8")) as { bin?: string | Record<string, string> };
    const relative = typeof json.bin === "string" ? json.bin : json.bin?.[bin];
    const file = relative ? path.join(path.dirname(manifest), relative) : undefined;
    return file && existsSync(file) ? file : undefined;
  } catch {
    return undefined;
  }
}
const codexBin = installedBin("@openai/codex", "codex");
const claudeBin = installedBin("@anthropic-ai/claude-code", "claude");

/** The CLI's help text (a node script is run with this node; a native binary directly), in a throw-away HOME. */
async function helpText(bin: string, args: string[]): Promise<string> {
  const home = tempDir("runner-cli-home-");
  const env = { ...process.env, HOME: home, CODEX_HOME: home, NO_COLOR: "1" };
  const [file, argv] = /\.(c|m)?js$/.test(bin) ? [process.execPath, [bin, ...args]] : [bin, args];
  const help = await execa(file, argv, { reject: false, timeout: 30_000, env, stdin: "ignore" });
  return `${String(help.stdout)}\n${String(help.stderr)}`;
}

function expectListed(text: string, flag: string): void {
  expect(text, flag).toMatch(new RegExp(`(^|[\\s,])${flag.replace(/-/g, "\\-")}([\\s,=<]|$)`, "m"));
}

describe("the real CLIs' --help lists every flag the adapters pass", () => {
  // Skipped unless @openai/codex is installed (not a dependency: it needs an OpenAI account).
  it.skipIf(!codexBin)("codex exec --help", async () => {
    const text = await helpText(codexBin!, ["exec", "--help"]);
    const flags = documentedFlags(readFileSync(path.join(PROJECT_ROOT, "src/adapters/executors/codex.ts"), "utf8"), "codex").filter((flag) => flag !== "-");
    for (const flag of flags) expectListed(text, flag);
    expect(text).toMatch(/read-only, workspace-write, danger-full-access/);
  });

  // Skipped unless @anthropic-ai/claude-code is installed (not a dependency: it needs an Anthropic account).
  it.skipIf(!claudeBin)("claude --help", async () => {
    const text = await helpText(claudeBin!, ["--help"]);
    const flags = documentedFlags(readFileSync(path.join(PROJECT_ROOT, "src/adapters/executors/claude.ts"), "utf8"), "claude");
    // --max-turns is accepted in print mode but hidden from --help (2.1.x); the CLI reference documents it.
    for (const flag of flags.filter((f) => f !== "--max-turns")) expectListed(text, flag);
    expect(flags).toContain("--max-turns");
  });
});
