// `runner config` as a person uses it (issue 34, items 3 and 4), through the built binary in real
// repositories: several keys set and unset in one command, checked as a whole and committed as one
// person's edit whose subject and trailers name exactly the keys changed (docs/contract.md §11);
// switching the agent in one command; a change that changes nothing refused like `runner edit`'s;
// the file edited in place — every comment (on the changed line too), blank line and spacing kept.
import { writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { stderrLines } from "../helpers/bad-input.js";
import { CONFIG_FILE, scenario, type Scenario } from "../helpers/scenario.js";

const CODEX_CONFIG = `# The runner's configuration: hand-written comments stay.

[executor]
# which agent
kind = "codex"   # the agent we pay for
sandbox = "workspace-write" # codex only

[guard]
command = [
  "node", # the interpreter
  "guard.mjs",
]

[limits]
iteration_timeout_seconds = 60
max_iterations = 50 # overnight
`;

/** A repository whose committed config.toml is `text`, on the run branch runner/cfg. */
async function withConfig(text: string): Promise<Scenario> {
  const s = await scenario({ runId: "cfg", start: false });
  writeFileSync(path.join(s.dir, CONFIG_FILE), text);
  await s.git(["commit", "-qam", "codex config"]);
  await s.git(["checkout", "-q", "-b", "runner/cfg"]);
  return s;
}

/** exit 1, one sentence on stderr matching `pattern`, nothing written or committed. */
async function expectRefused(s: Scenario, args: string[], pattern: RegExp): Promise<void> {
  const head = await s.head();
  const before = s.read(CONFIG_FILE);
  const result = await s.runner(args);
  expect(result.exitCode, result.stdout + result.stderr).toBe(1);
  const lines = stderrLines(result.stderr);
  expect(lines, result.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(pattern);
  expect(await s.head()).toBe(head);
  expect(s.read(CONFIG_FILE)).toBe(before);
  expect((await s.git(["status", "--porcelain"])).trim()).toBe("");
}

/** The `Runner-<name>` trailer lines of the commit's message, in order. */
async function trailers(s: Scenario, name: string): Promise<string[]> {
  return (await s.message())
    .split("\n")
    .filter((line) => line.startsWith(`Runner-${name}: `))
    .map((line) => line.slice(`Runner-${name}: `.length));
}

describe("runner config: several keys at once, unset, switching the agent", () => {
  it("switches from codex to a command agent in one command: one commit naming exactly the keys changed, every comment kept, audit clean", async () => {
    const s = await withConfig(CODEX_CONFIG);
    const head = await s.head();
    const result = await s.runner([
      "config",
      "--set",
      "executor.kind=command",
      "--set",
      'executor.command=["node", "agent.mjs"]',
      "--unset",
      "executor.sandbox",
    ]);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).toBe("");
    expect((await s.git(["rev-list", `${head}..HEAD`])).trim().split("\n")).toHaveLength(1);
    expect(s.read(CONFIG_FILE)).toBe(`# The runner's configuration: hand-written comments stay.

[executor]
# which agent
kind = "command"   # the agent we pay for
command = [ "node", "agent.mjs" ]

[guard]
command = [
  "node", # the interpreter
  "guard.mjs",
]

[limits]
iteration_timeout_seconds = 60
max_iterations = 50 # overnight
`);
    expect((await s.git(["log", "-1", "--format=%s"])).trim()).toBe(
      "chore(runner): run cfg edit config executor.kind, executor.command, executor.sandbox",
    );
    expect(await trailers(s, "Key")).toEqual(["executor.kind", "executor.command", "executor.sandbox"]);
    expect(await trailers(s, "Change")).toEqual([
      'executor.kind = "command" (was "codex")',
      'executor.command = ["node","agent.mjs"] (was not set)',
      'executor.sandbox unset (was "workspace-write")',
    ]);
    expect(await trailers(s, "Edit")).toEqual(["config"]);
    expect((await s.git(["show", "--name-only", "--format=", "HEAD"])).trim()).toBe(CONFIG_FILE);
    const validate = await s.runner(["validate"]);
    expect(validate.exitCode, validate.stdout + validate.stderr).toBe(0);
    // The agent now runs: the switched config is one a step accepts; the audit judges the edit valid.
    s.script({ 1: { write: { "src/a.txt": "a\n" }, status: "done" } });
    const step = await s.step();
    expect(step.exitCode, step.stderr).toBe(0);
    // (the audit judges what comes after the run's first iteration: a second edit of several keys)
    const second = await s.runner(["config", "--set", "limits.max_iterations=80", "--unset", "limits.iteration_timeout_seconds"]);
    expect(second.exitCode, second.stderr).toBe(0);
    const audit = await s.runner(["audit", "--json"]);
    expect(audit.exitCode, audit.stdout + audit.stderr).toBe(0);
    const edits = (JSON.parse(audit.stdout) as { person_edits: { made: string; verb: string; target: string; valid: boolean }[] }).person_edits;
    expect(edits.map((edit) => [edit.made, edit.verb, edit.target, edit.valid])).toEqual([
      ["runner", "config", "limits.max_iterations, limits.iteration_timeout_seconds", true],
    ]);
  }, 120_000);

  it("every halfway state may be invalid: the keys are checked as a whole, and a whole that is invalid is one sentence, nothing written", async () => {
    const s = await withConfig(CODEX_CONFIG);
    await expectRefused(
      s,
      ["config", "--set", "executor.kind=command"],
      /^With executor\.kind = "command" the config is invalid \(.*command.*\); nothing was written\.$/,
    );
    await expectRefused(
      s,
      ["config", "--set", "executor.kind=command", "--set", 'executor.command=["node", "agent.mjs"]'],
      /^With executor\.kind = "command", executor\.command = \["node","agent\.mjs"\] the config is invalid \(.*sandbox.*\); nothing was written\.$/,
    );
  });

  it("a change that changes nothing is refused like `runner edit`'s, no commit; an unset of a key that is not set is left out of the commit", async () => {
    const s = await withConfig(CODEX_CONFIG);
    await expectRefused(s, ["config", "limits.max_iterations", "--set", "50"], /^Nothing to change: limits\.max_iterations is already 50\.$/);
    await expectRefused(
      s,
      ["config", "--set", "executor.kind=codex", "--unset", "executor.model"],
      /^Nothing to change: executor\.kind is already "codex", and executor\.model is not set\.$/,
    );
    const result = await s.runner(["config", "--set", "limits.max_iterations=80", "--unset", "executor.model"]);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(await trailers(s, "Key")).toEqual(["limits.max_iterations"]);
    expect((await s.git(["log", "-1", "--format=%s"])).trim()).toBe("chore(runner): run cfg edit config limits.max_iterations");
    // The changed line keeps its comment; nothing else in the file moved.
    expect(s.read(CONFIG_FILE)).toBe(CODEX_CONFIG.replace("max_iterations = 50 # overnight", "max_iterations = 80 # overnight"));
  });

  it("the one-key form still works; a multi-line value is replaced whole; a new key goes after its section's last key, a new section at the end", async () => {
    const s = await withConfig(CODEX_CONFIG);
    const guard = await s.runner(["config", "guard.command", "--set", "node guard.mjs --strict"]);
    expect(guard.exitCode, guard.stderr).toBe(0);
    expect(s.read(CONFIG_FILE)).toContain('[guard]\ncommand = [ "node", "guard.mjs", "--strict" ]\n\n[limits]');
    const added = await s.runner(["config", "--set", "limits.max_stalled_iterations=5", "--set", "hooks.bell=true"]);
    expect(added.exitCode, added.stderr).toBe(0);
    expect(s.read(CONFIG_FILE)).toMatch(/max_iterations = 50 # overnight\nmax_stalled_iterations = 5\n\n\[hooks\]\nbell = true\n$/);
  });

  it("bad usage is one sentence that shows the right form", async () => {
    const s = await withConfig(CODEX_CONFIG);
    const form = /`runner config --set section\.key=value/;
    await expectRefused(s, ["config"], form);
    await expectRefused(s, ["config", "--set", "executor.kind"], /^--set executor\.kind needs =value: .*`runner config --set section\.key=value/);
    await expectRefused(s, ["config", "--set", "kind=command"], /^"kind" is not a config key; name it as section\.key/);
    await expectRefused(
      s,
      ["config", "--set", "limits.max_iterations=5", "--set", "limits.max_iterations=6"],
      /^limits\.max_iterations is named twice/,
    );
    await expectRefused(
      s,
      ["config", "--set", "limits.max_iterations=5", "--unset", "limits.max_iterations"],
      /^limits\.max_iterations is named twice/,
    );
    await expectRefused(s, ["config", "executor.kind", "--set", "command", "--set", "executor.command=x"], form);
    await expectRefused(s, ["config", "executor.sandbox", "--unset", "executor.sandbox"], form);
    await expectRefused(s, ["config", "--unset", "executor.kind=codex"], /^--unset takes a key alone/);
    // `--set guard.command=npm test` unquoted: the shell made "test" a word of its own.
    await expectRefused(s, ["config", "--set", "guard.command=npm", "test"], /^"test" belongs to no --set; quote a value that has spaces/);
  });
});
