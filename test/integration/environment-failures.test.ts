// Failures of the environment (a full disk) are runner errors, not bugs: one sentence, exit 1,
// nothing half-written, and the next step (once there is room again) records the iteration. The
// disk is a real one: a small tmpfs mounted over .runner/state/ in a mount namespace of its own
// (`unshare`), where the agent fills it before the runner persists the tree.
import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { RUNNER_BIN } from "../helpers/sandbox.js";
import { scenario, subject } from "../helpers/scenario.js";

describe("a full disk", () => {
  it("during persist: one sentence naming it, exit 1, no temp file, the tree intact; the next step records the iteration", async () => {
    const s = await scenario();
    s.script({
      1: { write: { "src/a.txt": "a\n" }, status: "done", sh: "head -c 10M /dev/zero > .runner/state/fill.bin 2>/dev/null || true" },
      2: { write: { "src/a.txt": "a\n" }, status: "done" },
    });
    const state = path.join(s.dir, ".runner", "state");
    // In its own mount namespace: the tmpfs (holding copies of the state files) exists only for this step.
    const script = [
      "set -e",
      `tmp=$(mktemp -d) && cp -a ${JSON.stringify(state)}/. "$tmp"/`,
      `mount -t tmpfs -o size=256k tmpfs ${JSON.stringify(state)}`,
      `cp -a "$tmp"/. ${JSON.stringify(state)}/`,
      "set +e",
      `node ${JSON.stringify(RUNNER_BIN)} step 2> "$tmp/stderr"; echo "exit=$?"`,
      `ls -a ${JSON.stringify(state)}`,
      `node -e 'JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); console.log("tree=valid")' ${JSON.stringify(path.join(state, "tree.json"))}`,
      `echo "stderr=$(cat "$tmp/stderr")"`,
    ].join("\n");
    const run = spawnSync("unshare", ["--user", "--map-root-user", "--mount", "sh", "-c", script], { cwd: s.dir, env: s.env, encoding: "utf8" });
    expect(run.status, run.stderr).toBe(0);
    const out = run.stdout;
    expect(out).toContain("exit=1");
    expect(out).toContain("tree=valid");
    expect(out, "no temp file of the tree is left").not.toMatch(/\.tree\.json\.\d+\.tmp/);
    const stderr = /^stderr=(.*)$/m.exec(out)?.[1] ?? "";
    expect(stderr).toMatch(/^Could not persist the iteration: .*ENOSPC.*; the working tree holds the agent's changes uncommitted\.$/);
    expect(stderr).not.toMatch(/Internal error|bug/);
    // Outside the namespace the disk has room again: the next step records the interrupted iteration.
    const next = await s.step();
    expect(next.exitCode, next.stderr).toBe(1);
    expect(next.stderr).toMatch(/Iteration 1 was interrupted: the runner stopped/);
    expect(await s.subjects()).toEqual([subject("t1", 1, "root", "interrupted", "skipped")]);
    expect(await s.git(["status", "--porcelain"])).toBe("");
  });

  it("while the patch is written beside the commit: one sentence naming it, exit 1, not a crash", async () => {
    const s = await scenario();
    // The logs' disk is all but full when the runner writes the iteration's patch (a large change).
    const fill = "head -c 200K /dev/zero > .runner/iterations/fill.bin 2>/dev/null || true; head -c 300K /dev/urandom | base64 > src/big.txt";
    s.script({ 1: { write: { "src/a.txt": "a\n" }, status: "done", sh: fill } });
    const logs = path.join(s.dir, ".runner", "iterations");
    const script = [
      "set -e",
      `mkdir -p ${JSON.stringify(logs)}`,
      `mount -t tmpfs -o size=256k tmpfs ${JSON.stringify(logs)}`,
      "set +e",
      `node ${JSON.stringify(RUNNER_BIN)} step 2> /tmp/runner-enospc-$$; echo "exit=$?"`,
      `echo "stderr=$(cat /tmp/runner-enospc-$$ | tr '\\n' ' ')"; rm -f /tmp/runner-enospc-$$`,
    ].join("\n");
    const run = spawnSync("unshare", ["--user", "--map-root-user", "--mount", "sh", "-c", script], { cwd: s.dir, env: s.env, encoding: "utf8" });
    expect(run.status, run.stderr).toBe(0);
    const stderr = /^stderr=(.*)$/m.exec(run.stdout)?.[1]?.trim() ?? "";
    expect(run.stdout, stderr).toContain("exit=1");
    // The commit is made (the patch is a local log); the sentence says so, and what to do.
    expect(stderr).toMatch(
      /^Iteration 1 was committed \([0-9a-f]{7}\), but its log could not be written \(ENOSPC: no space left on device, write\); make room on the disk of .*, then run the next step\.$/,
    );
    expect(await s.subjects()).toEqual([subject("t1", 1, "root", "execute", "pass")]);
    expect(await s.git(["status", "--porcelain"])).toBe("");
    // Outside the namespace there is room: the run goes on from the committed iteration.
    const next = await s.step();
    expect(next.exitCode, next.stderr).toBe(0);
    expect(next.stdout).toMatch(/^Nothing to do: the root passes/);
    expect(await s.subjects()).toEqual([subject("t1", 1, "root", "execute", "pass")]);
  });
});
