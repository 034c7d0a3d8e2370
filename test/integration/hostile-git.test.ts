// No pass without green guards, even against the agent — git integrity. Each test is a scripted
// agent doing exactly one trick with git, through the built binary in a real repository; each ends
// with the same checks: no leaf passed without a green guard on the content committed, only loop
// commits numbered 1..n on the run branch, and `runner audit` (and `--replay`) agreeing.
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { expectAudit, expectLoopHistory, expectPassesReplay, hostileScenario, runHistory } from "../helpers/hostile.js";
import { node, tempDir, tree } from "../helpers/sandbox.js";
import { subject } from "../helpers/scenario.js";

/** A node script that marks node `id` (and the root) passed in the tree file: what a forger writes. */
const FORGE_PASS = (id: string) =>
  `node -e 'const fs=require("fs");const f=".runner/state/tree.json";const t=JSON.parse(fs.readFileSync(f,"utf8"));const mark=(n)=>{if(n.id===${JSON.stringify(id)})n.passes=true;n.children.forEach(mark)};mark(t.root);fs.writeFileSync(f,JSON.stringify(t,null,2)+"\\n")'`;

describe.concurrent("git integrity under a hostile agent", () => {
  it("a post-commit hook the agent writes cannot amend guard=fail into guard=pass", async () => {
    const s = await hostileScenario();
    const hook = `#!/bin/sh
[ -f .git/forged ] && exit 0
touch .git/forged
${FORGE_PASS("a")}
git add -A
git commit -q --amend --no-verify -m "$(git log -1 --format=%B | sed s/guard=fail/guard=pass/)"
`;
    s.script({
      1: {
        write: { "src/a.txt": "not ok\n" },
        status: "done",
        sh: `cat > .git/hooks/post-commit <<'EOF'\n${hook}EOF\nchmod +x .git/hooks/post-commit`,
      },
    });
    const step = await s.step();
    expect(step.exitCode, step.stderr).toBe(0);
    expect((await runHistory(s)).map((c) => c.subject)).toEqual([subject("t1", 1, "a", "execute", "fail")]);
    expect(existsSync(path.join(s.dir, ".git", "forged")), "the hook never ran").toBe(false);
    expect(s.node("a")).toMatchObject({ passes: false, attempts: 1 });
    const next = await s.runner(["next", "--json"]);
    expect(JSON.parse(next.stdout)).toMatchObject({ complete: false, node: { id: "a" } });
    await expectLoopHistory(s, 1);
    await expectAudit(s, true);
  });

  it("hooks of any kind — the agent's prepare-commit-msg, core.hooksPath, core.fsmonitor — run no code inside the runner's git calls; .git/config is put back", async () => {
    const s = await hostileScenario();
    const marker = path.join(tempDir("runner-marker-"), "ran");
    const evil = `#!/bin/sh\necho "$0 $*" >> ${marker}\n`;
    s.script({
      1: {
        write: { "src/a.txt": "ok\n" },
        status: "done",
        sh: [
          `mkdir -p .evil-hooks`,
          `for h in prepare-commit-msg commit-msg post-commit post-index-change reference-transaction pre-commit; do printf '%s' '${evil}' > .git/hooks/$h; printf '%s' '${evil}' > .evil-hooks/$h; chmod +x .git/hooks/$h .evil-hooks/$h; done`,
          `printf '%s' '${evil}' > .git/fsmon.sh && chmod +x .git/fsmon.sh`,
          `git config core.hooksPath .evil-hooks`,
          `git config core.fsmonitor .git/fsmon.sh`,
        ].join("\n"),
      },
    });
    const step = await s.step();
    expect(step.exitCode, step.stderr).toBe(0);
    expect(existsSync(marker) ? readFileSync(marker, "utf8") : "", "no agent code ran in the runner's git calls").toBe("");
    // The repository's config is as it was before the agent: the next iteration starts from it.
    expect(await s.git(["config", "--get", "core.hooksPath"]).catch(() => "")).toBe("");
    expect(await s.git(["config", "--get", "core.fsmonitor"]).catch(() => "")).toBe("");
    // Changing git's own configuration is not the agent's to do: the guard stage fails, the change is undone.
    expect((await runHistory(s)).map((c) => c.subject)).toEqual([subject("t1", 1, "a", "execute", "fail")]);
    expect(await s.message()).toMatch(/\.git\/config/);
    await expectLoopHistory(s, 1);
    await expectAudit(s, true);
  });

  it("a clean filter the agent configures cannot make the commit differ from what the guard judged", async () => {
    const s = await hostileScenario();
    s.script({
      1: {
        write: { "src/a.txt": "ok\n", ".gitattributes": "src/*.txt filter=evil\n" },
        status: "done",
        sh: `git config filter.evil.clean "sed s/ok/broken/"`,
      },
    });
    const step = await s.step();
    expect(step.exitCode, step.stderr).toBe(0);
    expect(await s.git(["show", "HEAD:src/a.txt"])).toBe("ok");
    await expectPassesReplay(s);
    await expectLoopHistory(s, 1);
    await expectAudit(s, true);
  });

  it("a user's own prepare-commit-msg hook (a branch prefix) leaves every subject exact and numbered", async () => {
    const s = await hostileScenario();
    writeFileSync(path.join(s.dir, ".git", "hooks", "prepare-commit-msg"), '#!/bin/sh\nsed -i "1s/^/[$(git branch --show-current)] /" "$1"\n');
    chmodSync(path.join(s.dir, ".git", "hooks", "prepare-commit-msg"), 0o755);
    const post = path.join(s.dir, ".git", "hooks", "post-commit");
    writeFileSync(post, "#!/bin/sh\necho hooked > hooked.txt\n");
    chmodSync(post, 0o755);
    s.script({ 1: { write: { "src/a.txt": "ok\n" }, status: "done" }, 2: { write: { "src/b.txt": "ok\n" }, status: "done" } });
    for (const expected of [0, 0]) {
      const step = await s.step();
      expect(step.exitCode, step.stderr).toBe(expected);
    }
    expect((await runHistory(s)).map((c) => c.subject)).toEqual([subject("t1", 1, "a", "execute", "pass"), subject("t1", 2, "b", "execute", "pass")]);
    expect(existsSync(path.join(s.dir, "hooked.txt")), "a user's post-commit hook does not run either (it would dirty the tree)").toBe(false);
    await expectLoopHistory(s, 2);
    await expectAudit(s, true);
  });

  it("work the agent committed itself is folded into the iteration: classified, guarded, committed on the run branch with the starting commit as parent; its messages kept in the log", async () => {
    const s = await hostileScenario();
    s.script({ 1: { write: { "src/a.txt": "not ok\n" }, status: "done", sh: `git add -A && git commit -qm "agent: my own commit"` } });
    const start = await s.head();
    const step = await s.step();
    expect(step.exitCode, step.stderr).toBe(0);
    const history = await runHistory(s);
    expect(history.map((c) => c.subject)).toEqual([subject("t1", 1, "a", "execute", "fail")]);
    expect(history[0]!.parents).toEqual([start]);
    expect(s.guardRuns(), "the guard judged the agent's committed work").toEqual([1]);
    expect(await s.git(["show", "HEAD:src/a.txt"])).toBe("not ok");
    expect(JSON.stringify(s.meta(1))).toContain("agent: my own commit");
    expect(s.node("a").attempts).toBe(1);
    await expectLoopHistory(s, 1);
    await expectAudit(s, true);
  });

  it.each([
    ["checks out main", "git checkout -q main"],
    ["checks out another branch", "git checkout -q -b elsewhere"],
    ["detaches HEAD", "git checkout -q --detach"],
  ])("an agent that %s: the loop commit goes on the run branch, main is untouched, HEAD is back", async (_name, sh) => {
    const s = await hostileScenario();
    const main = (await s.git(["rev-parse", "main"])).trim();
    const start = await s.head();
    s.script({ 1: { write: { "src/a.txt": "ok\n" }, status: "done", sh } });
    const step = await s.step();
    expect(step.exitCode, step.stderr).toBe(0);
    expect((await s.git(["rev-parse", "main"])).trim(), "main is where it was").toBe(main);
    const history = await runHistory(s);
    expect(history.map((c) => c.subject)).toEqual([subject("t1", 1, "a", "execute", "pass")]);
    expect(history[0]!.parents).toEqual([start]);
    expect(await s.git(["status", "--porcelain"])).toBe("");
    await expectPassesReplay(s);
    await expectLoopHistory(s, 1);
    await expectAudit(s, true);
  });

  it("reset --hard HEAD~2 by the agent: the run branch never loses a loop commit", async () => {
    const s = await hostileScenario({ tree: tree(node("root", { children: ["a", "b", "c"].map((id, order) => node(id, { order })) })) });
    s.script({
      1: { write: { "src/a.txt": "ok\n" }, status: "done" },
      2: { write: { "src/b.txt": "ok\n" }, status: "done" },
      3: { write: { "src/c.txt": "ok\n" }, status: "done", sh: "git reset -q --hard HEAD~2" },
    });
    for (let i = 0; i < 3; i++) expect((await s.step()).exitCode).toBe(0);
    const history = await runHistory(s);
    expect(history.map((c) => c.subject.replace(/ guard=\w+$/, ""))).toEqual(
      [1, 2, 3].map((n) => `chore(loop): run t1 iter ${n} node ${"abc"[n - 1]} execute`),
    );
    await expectPassesReplay(s);
    await expectLoopHistory(s, 3);
    await expectAudit(s, true);
  });

  it("a planted MERGE_HEAD brings no other parent into the run branch and does not block the next step", async () => {
    const s = await hostileScenario();
    const fake = (await s.git(["commit-tree", "-m", "chore(loop): run t1 iter 1 node a execute guard=pass", `${await s.head()}^{tree}`])).trim();
    s.script({
      1: { write: { "src/a.txt": "ok\n" }, status: "done", sh: `echo ${fake} > .git/MERGE_HEAD && echo "Merge" > .git/MERGE_MSG` },
      2: { write: { "src/b.txt": "ok\n" }, status: "done" },
    });
    expect((await s.step()).exitCode).toBe(0);
    const second = await s.step();
    expect(second.exitCode, second.stderr).toBe(0);
    await expectLoopHistory(s, 2);
    await expectAudit(s, true);
  });
});
