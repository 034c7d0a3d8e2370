// What a full-access agent can still leave behind, and what no agent means but a night throws
// anyway (issue 19): the runner's own files under .runner/ rewritten or replaced by links, a dead
// agent's .git/index.lock, and a guard whose output is not text (NUL bytes, invalid UTF-8). Each
// through the built binary in a real repository, ending with the hostile suite's checks.
import { lstatSync, readdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { RUNNER_GITIGNORE } from "../../src/core/base/layout.js";
import { expectAudit, expectLoopHistory, hostileScenario, runHistory } from "../helpers/hostile.js";
import { tempDir } from "../helpers/sandbox.js";
import { subject } from "../helpers/scenario.js";

/** Every path a commit of the run holds under .runner/ that is the runner's local-only log or context. */
async function committedLocalFiles(s: Awaited<ReturnType<typeof hostileScenario>>): Promise<string[]> {
  const out = await s.git(["log", "--name-only", "--format=", `${s.baseRef}..runner/${s.runId}`]);
  return out.split("\n").filter((line) => /^\.runner\/(context|iterations)(\/|$)/.test(line));
}

describe.concurrent("holes a full-access agent opens, and output that is not text", () => {
  it("an agent that rewrites .runner/.gitignore to un-ignore the logs: the runner's file is put back, no log is committed, the next step goes on", async () => {
    const s = await hostileScenario();
    s.script({
      1: { write: { "src/a.txt": "ok\n", ".runner/.gitignore": "# nothing ignored\n" }, status: "done" },
      2: { write: { "src/b.txt": "ok\n" }, status: "done" },
    });
    const first = await s.step();
    expect(first.exitCode, first.stderr).toBe(0);
    expect(s.read(".runner/.gitignore")).toBe(RUNNER_GITIGNORE);
    expect(await s.git(["show", "HEAD:.runner/.gitignore"])).toBe(RUNNER_GITIGNORE.trimEnd());
    expect(await committedLocalFiles(s)).toEqual([]);
    expect(await s.message()).toMatch(/\.runner\/\.gitignore/);
    const second = await s.step();
    expect(second.exitCode, second.stderr).toBe(0);
    expect(await committedLocalFiles(s)).toEqual([]);
    await expectLoopHistory(s, 2);
    await expectAudit(s, true);
  });

  // (Replacing iterations/ throws away the agent's own output file: a runner error, retried without using an attempt.)
  it.each([
    ["context", 0],
    ["iterations", 1],
  ])(
    "an agent that replaces .runner/%s/ with a symbolic link: the link is never committed, the folder is the runner's again",
    async (folder, exitCode) => {
      const s = await hostileScenario();
      const target = tempDir("runner-holes-"); // (where the link points: nothing of the runner's may land there)
      s.script({
        1: { write: { "src/a.txt": "ok\n" }, status: "done", sh: `rm -rf .runner/${folder} && ln -s ${target} .runner/${folder}` },
        2: { write: { "src/b.txt": "ok\n" }, status: "done" },
      });
      const first = await s.step();
      expect(first.exitCode, first.stderr).toBe(exitCode);
      // (iterations/ is made a real folder again by the runner's own log writes, before anything is named)
      if (folder === "context") expect(JSON.stringify(s.meta(1).agent_git), "named in the record").toContain(`.runner/${folder} (a symbolic link`);
      expect(await committedLocalFiles(s)).toEqual([]);
      const second = await s.step();
      expect(second.exitCode, second.stderr).toBe(0);
      expect(await committedLocalFiles(s)).toEqual([]);
      expect(lstatSync(path.join(s.dir, ".runner", folder)).isSymbolicLink()).toBe(false);
      expect(readdirSync(target), "nothing written through the link").toEqual([]);
      await expectLoopHistory(s, 2);
      await expectAudit(s, true);
    },
  );

  it("an agent that leaves .git/index.lock: the runner removes the dead agent's lock, names it in the record, and the person's git works", async () => {
    const s = await hostileScenario();
    s.script({ 1: { write: { "src/a.txt": "ok\n" }, status: "done", sh: "touch .git/index.lock" } });
    const step = await s.step();
    expect(step.exitCode, step.stderr).toBe(0);
    expect(s.exists(".git/index.lock"), "the lock is gone").toBe(false);
    expect(await s.message()).toMatch(/index\.lock/);
    expect(s.meta(1).agent_git).toMatchObject({ indexLockRemoved: true });
    await s.git(["commit", "--allow-empty", "-q", "-m", "a person's commit"]);
    await expectAudit(s, true);
  });

  it("a red guard printing NUL bytes, control bytes and invalid UTF-8 is committed as guard=fail and the run goes on", async () => {
    const s = await hostileScenario({
      files: { "guard.sh": `#!/bin/sh\n[ -f src/b.txt ] && exit 0\nprintf 'FAIL\\000 binary \\001\\033[31m red \\377\\376 end\\n'\nexit 1\n` },
    });
    s.script({
      1: { write: { "src/a.txt": "ok\n" }, status: "done", summary: "wrote a\u0000 with a NUL" },
      2: { write: { "src/a.txt": "ok\n", "src/b.txt": "ok\n" }, status: "done" },
    });
    const first = await s.step();
    expect(first.exitCode, first.stderr).toBe(0);
    expect((await runHistory(s)).map((c) => c.subject)).toEqual([subject("t1", 1, "a", "execute", "fail")]);
    expect(await s.git(["status", "--porcelain"])).toBe("");
    const message = await s.message();
    // eslint-disable-next-line no-control-regex
    expect(message).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/);
    expect(message).toMatch(/FAIL/);
    const second = await s.step();
    expect(second.exitCode, second.stderr).toBe(0);
    expect((await runHistory(s)).map((c) => c.subject)).toEqual([subject("t1", 1, "a", "execute", "fail"), subject("t1", 2, "a", "execute", "pass")]);
    await expectLoopHistory(s, 2);
    await expectAudit(s, true);
  });
});
