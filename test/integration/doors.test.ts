// No door for the agent (issue 28): what a hostile agent (a bash script run by the `command`
// executor, with the user's rights) or a careless person can do to a run through the new doors —
// the steering commands, the lock and its hand-over, side-by-side runs, history before the first
// iteration, deep or huge input — and what the runner does about it. Each case runs the built binary
// in real git repositories.
import { execa } from "execa";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { git, RUNNER_BIN, runner, tempDir } from "../helpers/sandbox.js";
import { oneSentence, scenario } from "../helpers/scenario.js";

/** A shell line that runs the built runner with `args` and records its exit code and stderr in SCENARIO_DIR/<name>.{exit,err}. */
function recordRunner(name: string, args: string[]): string {
  const quoted = args.map((arg) => `'${arg.replace(/'/g, "'\\''")}'`).join(" ");
  return `node '${RUNNER_BIN}' ${quoted} 2> "$SCENARIO_DIR/${name}.err"; echo $? > "$SCENARIO_DIR/${name}.exit"`;
}

function recorded(scriptDir: string, name: string): { exit: number; stderr: string } {
  return {
    exit: Number(readFileSync(path.join(scriptDir, `${name}.exit`), "utf8").trim()),
    stderr: readFileSync(path.join(scriptDir, `${name}.err`), "utf8"),
  };
}

async function waitFor(condition: () => boolean, what: string, timeoutMs = 90_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("an agent cannot steer a run", () => {
  it("the agent of one worktree run cannot change another run's config through the CLI; that run's next failing work does not pass", async () => {
    const s = await scenario({ start: false });
    const worktree = (run: string) => path.join(path.dirname(s.dir), `${path.basename(s.dir)}-${run}`);
    for (const run of ["w1", "w2"]) expect((await s.runner(["start", "--worktree", "--run-id", run])).exitCode).toBe(0);
    const w2 = worktree("w2");
    s.script({
      1: {
        sh: [
          recordRunner("config", ["-C", w2, "config", "guard.command", "--set", '["true"]']),
          recordRunner("edit", ["-C", w2, "edit", "root", "--title", "Steered by an agent"]),
          recordRunner("own", ["edit", "root", "--title", "My own run, steered"]),
        ].join("; "),
        status: "retry",
      },
    });
    const w1 = await runner(worktree("w1"), ["step"], { env: s.env });
    expect(w1.exitCode, w1.stderr).toBe(0);
    for (const name of ["config", "edit", "own"]) {
      const result = recorded(s.scriptDir, name);
      expect(result.exit, `${name}: ${result.stderr}`).toBe(1);
      expect(oneSentence(result.stderr), name).toMatch(
        /is a person's command, and this process runs inside a runner's agent containment \(.+\); an agent cannot steer a run/,
      );
    }
    // w2 is as it was: no commit, its guard unchanged.
    expect((await git(w2, ["log", "--format=%s", "main..HEAD"], s.gitEnv)).trim()).toBe("");
    expect(readFileSync(path.join(w2, ".runner/state/config.toml"), "utf8")).toContain('command = ["node", "guard.mjs"]');
  });

  it("a guard process (which runs what the agent wrote) is refused as well", async () => {
    const s = await scenario({
      guard: ["sh", "-c", `${recordRunner("guard-edit", ["edit", "root", "--title", "From the guard"])}; exit 1`],
    });
    s.script({ 1: { write: { "src/a.txt": "x\n" }, status: "done" } });
    const step = await s.step();
    expect(step.exitCode, step.stderr).toBe(0);
    const result = recorded(s.scriptDir, "guard-edit");
    expect(result.exit).toBe(1);
    expect(oneSentence(result.stderr)).toMatch(/runs inside a runner's agent containment/);
  });

  it("a person outside any containment still steers", async () => {
    const s = await scenario();
    const edited = await s.runner(["edit", "root", "--title", "A person's title"]);
    expect(edited.exitCode, edited.stderr).toBe(0);
  });
});
