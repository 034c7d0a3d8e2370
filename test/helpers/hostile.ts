// Scenarios for the hostile-agent tests: a real repository whose guard judges content (every
// src/*.txt must say "ok"), scripted agents that play with git, and the checks every attack ends
// with — no leaf passed without a green guard on the content committed, the loop commits numbered
// 1..n on the run branch and nothing else on it, and `runner audit` agreeing.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "vitest";
import { node, tree } from "./sandbox.js";
import { scenario, type Scenario, type ScenarioOptions } from "./scenario.js";

/** The repository's guard: judges the files, not the iteration. A script file, so protected by default. */
export const GUARD_SH = `#!/bin/sh
# Every src/*.txt must hold exactly "ok"; every file named in needs.txt must exist.
[ -n "$SCENARIO_DIR" ] && [ -n "$RUNNER_ITERATION" ] && [ -z "$RUNNER_REPLAY" ] && echo "$RUNNER_ITERATION" >> "$SCENARIO_DIR/guard-runs.txt"
for f in src/*.txt; do
  [ -e "$f" ] || continue
  [ "$(cat "$f")" = "ok" ] || { echo "FAIL: $f lacks ok"; exit 1; }
done
if [ -f needs.txt ]; then
  while read -r need; do [ -z "$need" ] || [ -e "$need" ] || { echo "FAIL: $need is missing"; exit 1; }; done < needs.txt
fi
echo "guard: all ok"
`;

/** root → a, b (open leaves), the content guard. */
export async function hostileScenario(options: ScenarioOptions = {}): Promise<Scenario> {
  return scenario({
    tree: tree(node("root", { children: [node("a", { order: 0 }), node("b", { order: 1 })] })),
    guard: ["sh", "guard.sh"],
    ...options,
    files: { "guard.sh": GUARD_SH, "src/.keep": "", ...options.files },
  });
}

/** The run branch's first-parent history after the base, oldest first: sha and subject. */
export async function runHistory(s: Scenario): Promise<{ sha: string; subject: string; parents: string[] }[]> {
  const out = await s.git(["log", "--first-parent", "--reverse", "--format=%H%x1f%P%x1f%s", `${s.baseRef}..runner/${s.runId}`]);
  return out
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [sha = "", parents = "", subject = ""] = line.split("\x1f");
      return { sha, subject, parents: parents.split(" ").filter(Boolean) };
    });
}

/** Only loop commits on the run branch, numbered 1..n, each with one parent. */
export async function expectLoopHistory(s: Scenario, count: number): Promise<void> {
  const history = await runHistory(s);
  expect(
    history.map((c) => c.subject),
    "only loop commits on the run branch",
  ).toEqual(history.map((_, i) => expect.stringMatching(new RegExp(`^chore\\(loop\\): run ${s.runId} iter ${i + 1} `))));
  expect(history).toHaveLength(count);
  for (const commit of history) expect(commit.parents, commit.subject).toHaveLength(1);
  expect((await s.git(["symbolic-ref", "HEAD"])).trim(), "HEAD is on the run branch").toBe(`refs/heads/runner/${s.runId}`);
}

/** Runs guard.sh on the content of `sha` (as committed, in a fresh folder): its exit code and output. */
export function guardOnCommit(s: Scenario, sha: string): { exit: number; output: string } {
  const dir = mkdtempSync(path.join(tmpdir(), "runner-replay-"));
  try {
    execFileSync("sh", ["-c", `git -C ${JSON.stringify(s.dir)} archive ${sha} | tar -x -C ${JSON.stringify(dir)}`], { env: s.gitEnv });
    try {
      return { exit: 0, output: execFileSync("sh", ["guard.sh"], { cwd: dir, encoding: "utf8" }) };
    } catch (error) {
      const failed = error as { status?: number; stdout?: string };
      return { exit: failed.status ?? -1, output: failed.stdout ?? "" };
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Every commit that passed a leaf (guard=pass) passes the guard again on its committed content. */
export async function expectPassesReplay(s: Scenario): Promise<void> {
  for (const commit of await runHistory(s)) {
    if (!commit.subject.endsWith(" guard=pass")) continue;
    const replay = guardOnCommit(s, commit.sha);
    expect(replay, `${commit.subject}: the guard on the committed content`).toMatchObject({ exit: 0 });
  }
}

/** `runner audit` and `runner audit --replay` agree with what the test knows: clean or not. */
export async function expectAudit(s: Scenario, clean: boolean): Promise<void> {
  for (const args of [["audit"], ["audit", "--replay"]]) {
    const result = await s.runner(args);
    expect(result.exitCode, `${args.join(" ")}: ${result.stdout}${result.stderr}`).toBe(clean ? 0 : 1);
  }
}
