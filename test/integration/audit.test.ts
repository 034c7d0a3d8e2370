// `runner audit` (issue 6 §5) through the built binary: clean on a run the runner made (decompose,
// pass, guard fail, retry, an invalid tree and its repair, a runner error), and each kind of
// tampering by hand — on a copy of that run — is caught: exit 1, naming the first bad commit.
import { execa } from "execa";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { runRaw, stderrLines } from "../helpers/bad-input.js";
import { git, node, tempDir, testEnv, tree } from "../helpers/sandbox.js";
import { repairSubject, scenario, subject, TREE_FILE, type Scenario } from "../helpers/scenario.js";
import type { TaskTree } from "../../src/core/tree/tree.js";

const RUN = "t1";
const EXPECTED_SUBJECTS = [
  subject(RUN, 1, "root", "decompose", "skipped"), // decomposed into a, b, c
  subject(RUN, 2, "a", "execute", "fail"), // guard fail: a attempts 1
  subject(RUN, 3, "a", "decompose", "skipped"), // retry: a attempts 2
  subject(RUN, 4, "a", "execute", "pass"), // a passes
  subject(RUN, 5, "b", "decompose", "skipped"), // the agent left the tree invalid
  repairSubject(RUN, 6), // repaired
  subject(RUN, 7, "b", "decompose", "skipped"), // runner error: bad output
  subject(RUN, 8, "b", "execute", "pass"), // b passes; c stays open
];

let clean: Scenario;
/** Loop commits of the clean run, oldest first. */
let shas: string[];

beforeAll(async () => {
  clean = await scenario({ tree: tree(node("root", { title: "Project goal" })), runId: RUN });
  clean.script({
    1: {
      decompose: [
        { id: "a", title: "First" },
        { id: "b", order: 1, title: "Second" },
        { id: "c", order: 2, title: "Third" },
      ],
      status: "decomposed",
    },
    2: { write: { "src/a.txt": "a1\n" }, status: "done", guard: { exit: 1, print: "tests fail" } },
    3: { status: "retry", summary: "need another go" },
    4: { write: { "src/a.txt": "a2\n" }, status: "done" },
    5: { treeText: "{ not a tree", status: "done" },
    7: { rawOutput: "garbage" },
    8: { write: { "src/b.txt": "b\n" }, status: "done" },
  });
  const exits: number[] = [];
  for (let i = 1; i <= 8; i++) {
    if (i === 6) clean.script({ 6: { treeText: await clean.git(["show", `HEAD~1:${TREE_FILE}`]), status: "done", summary: "restored" } });
    exits.push((await clean.step()).exitCode);
  }
  expect(exits).toEqual([0, 0, 0, 0, 0, 0, 1, 0]);
  expect(await clean.subjects()).toEqual(EXPECTED_SUBJECTS);
  shas = (await clean.git(["rev-list", "--reverse", "main..HEAD"])).trim().split("\n");
  expect(shas).toHaveLength(8);
}, 120_000);

/** A copy of the clean repository to tamper with. */
async function copyOfClean(): Promise<string> {
  const dir = path.join(tempDir("runner-audit-"), "repo");
  await execa("cp", ["-r", clean.dir, dir]);
  return dir;
}

const gitIn = (dir: string, args: string[]) => git(dir, args, testEnv());

/** Commits `message` with the staged changes (or none). */
async function commitAll(dir: string, message: string, amend = false): Promise<string> {
  await gitIn(dir, ["add", "-A"]);
  await gitIn(dir, ["commit", "-q", "--allow-empty", ...(amend ? ["--amend"] : []), "-m", message]);
  return (await gitIn(dir, ["rev-parse", "HEAD"])).trim();
}

async function editTree(dir: string, edit: (tree: TaskTree) => void): Promise<void> {
  const file = path.join(dir, TREE_FILE);
  const data = JSON.parse(readFileSync(file, "utf8")) as TaskTree;
  edit(data);
  writeFileSync(file, `${JSON.stringify(data, null, 2)}\n`);
}

function findNode(t: TaskTree, id: string) {
  const stack = [t.root];
  while (stack.length > 0) {
    const current = stack.pop()!;
    if (current.id === id) return current;
    stack.push(...current.children);
  }
  throw new Error(`no node ${id}`);
}

/**
 * Rewrites the branch from the run's first loop commit on, as `git rebase -i` would: each commit
 * keeps its tree; `edit` may change its message or drop it (null). Returns the new shas by old sha.
 */
async function rewrite(dir: string, edit: (sha: string, message: string) => string | null): Promise<Map<string, string>> {
  let parent = (await gitIn(dir, ["rev-parse", `${shas[0]}^`])).trim();
  const mapped = new Map<string, string>();
  for (const sha of shas) {
    const message = await gitIn(dir, ["log", "-1", "--format=%B", sha]);
    const next = edit(sha, message);
    if (next === null) continue;
    const result = await execa("git", ["commit-tree", `${sha}^{tree}`, "-p", parent, "-F", "-"], {
      cwd: dir,
      env: testEnv(),
      extendEnv: false,
      input: next,
    });
    parent = String(result.stdout).trim();
    mapped.set(sha, parent);
  }
  await gitIn(dir, ["reset", "-q", "--hard", parent]);
  return mapped;
}

/** Re-commits the run's loop commits unchanged, each with the extra environment `env(sha)` gives (another identity). */
async function rewriteWith(dir: string, env: (sha: string) => Record<string, string>): Promise<Map<string, string>> {
  let parent = (await gitIn(dir, ["rev-parse", `${shas[0]}^`])).trim();
  const mapped = new Map<string, string>();
  for (const sha of shas) {
    const message = await gitIn(dir, ["log", "-1", "--format=%B", sha]);
    const result = await execa("git", ["commit-tree", `${sha}^{tree}`, "-p", parent, "-F", "-"], {
      cwd: dir,
      env: testEnv(env(sha)),
      extendEnv: false,
      input: message,
    });
    parent = String(result.stdout).trim();
    mapped.set(sha, parent);
  }
  await gitIn(dir, ["reset", "-q", "--hard", parent]);
  return mapped;
}

async function audit(dir: string) {
  return runRaw(dir, ["audit"]);
}

/** exit 1, and the first line names the commit (and iteration) with the broken rule. */
async function expectCaught(dir: string, sha: string, where: string, rule: RegExp): Promise<void> {
  const result = await audit(dir);
  expect(result.exitCode, result.stdout + result.stderr).toBe(1);
  const first = stderrLines(result.stderr)[0]!;
  expect(first).toContain(`audit: run ${RUN} breaks the rules first at commit ${sha.slice(0, 7)} ${where}: `);
  expect(first).toMatch(rule);
  expect(result.stdout).toBe("");
}

describe("runner audit on a run made by the runner", () => {
  it("is clean: exit 0, every loop commit checked", async () => {
    const result = await audit(clean.dir);
    expect(result.stderr).toBe("");
    expect(result.exitCode).toBe(0);
    expect(result.stdout.trim()).toBe(`audit: run ${RUN} is clean: 8 loop commits and 0 other commits obey the rules.`);
    const json = await runRaw(clean.dir, ["audit", "--json"]);
    expect(json.exitCode).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({ run_id: RUN, clean: true, loop_commits: 8, other_commits: 0, violations: [], person_edits: [] });
  });

  it("is still clean with a human commit that leaves the tree alone", async () => {
    const dir = await copyOfClean();
    writeFileSync(path.join(dir, "NOTES.md"), "human notes\n");
    await commitAll(dir, "docs: notes");
    const result = await audit(dir);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toContain("8 loop commits and 1 other commit obey the rules");
  });
});

describe("runner audit on a person's edit by hand", () => {
  it("a hand commit between loop commits that only rewords an open node is a person's edit by hand: clean, and listed", async () => {
    const dir = await copyOfClean();
    await gitIn(dir, ["reset", "-q", "--hard", shas[6]!]);
    await editTree(dir, (t) => {
      findNode(t, "c").goal = "A clearer goal for c";
    });
    const inserted = await commitAll(dir, "plan: reword c");
    await execa("git", ["cherry-pick", "--allow-empty", "--keep-redundant-commits", shas[7]!], { cwd: dir, env: testEnv(), extendEnv: false });
    const result = await audit(dir);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toContain("8 loop commits and 1 other commit obey the rules");
    expect(result.stdout).toContain(`${inserted.slice(0, 7)} a person's edit by hand by Test Author <author@example.com>: plan: reword c`);
    const json = JSON.parse((await runRaw(dir, ["audit", "--json"])).stdout) as { person_edits: unknown[] };
    expect(json.person_edits).toEqual([expect.objectContaining({ commit: inserted, made: "hand", verb: null, valid: true, problems: [] })]);
  });
});

describe.concurrent("runner audit catches tampering by hand", () => {
  it("1. a hand-edited passes=true committed as a normal commit", async () => {
    const dir = await copyOfClean();
    await editTree(dir, (t) => {
      findNode(t, "c").passes = true;
      t.root.passes = true;
    });
    const sha = await commitAll(dir, "fix: c is done");
    await expectCaught(dir, sha, "(not a loop commit)", /passes of "c" changed from false to true without a green guard/);
  });

  it("2. an amended loop commit that changes attempts", async () => {
    const dir = await copyOfClean();
    await editTree(dir, (t) => {
      findNode(t, "c").attempts = 2;
    });
    const message = await gitIn(dir, ["log", "-1", "--format=%B", "HEAD"]);
    const sha = await commitAll(dir, message, true);
    expect((await gitIn(dir, ["log", "-1", "--format=%s"])).trim()).toBe(EXPECTED_SUBJECTS[7]);
    await expectCaught(dir, sha, "(iteration 8)", /attempts of "c" moved from 0 to 2/);
  });

  it("3. a passed node's title edited in a later commit", async () => {
    const dir = await copyOfClean();
    await editTree(dir, (t) => {
      findNode(t, "a").title = "First, renamed";
    });
    const sha = await commitAll(dir, "chore: rename a");
    await expectCaught(dir, sha, "(not a loop commit)", /passed node "a" was changed \(title\)/);
  });

  it("4. a loop commit's subject rewritten from guard=fail to guard=pass (reworded in history)", async () => {
    const dir = await copyOfClean();
    const mapped = await rewrite(dir, (sha, message) => (sha === shas[1] ? message.replace("guard=fail", "guard=pass") : message));
    expect((await gitIn(dir, ["log", "--format=%s", "main..HEAD"])).split("\n")).toContain(subject(RUN, 2, "a", "execute", "pass"));
    await expectCaught(dir, mapped.get(shas[1]!)!, "(iteration 2)", /attempts of the selected leaf "a" are 1, but guard=pass, status done gives 0/);
  });

  it("4b. the same with `git commit --amend -m` on the guard=fail commit at the tip", async () => {
    const dir = await copyOfClean();
    await gitIn(dir, ["reset", "-q", "--hard", shas[1]!]);
    const message = await gitIn(dir, ["log", "-1", "--format=%B", "HEAD"]);
    const sha = await commitAll(dir, message.replace("guard=fail", "guard=pass"), true);
    await expectCaught(dir, sha, "(iteration 2)", /attempts of the selected leaf "a" are 1, but guard=pass, status done gives 0/);
  });

  it("5. a gap in the iteration numbers (a loop commit dropped, the later ones re-committed)", async () => {
    const dir = await copyOfClean();
    const mapped = await rewrite(dir, (sha, message) => (sha === shas[2] ? null : message));
    expect(mapped.size).toBe(7);
    await expectCaught(dir, mapped.get(shas[3]!)!, "(iteration 4)", /the subject says iteration 4, but it is loop commit 3 of the run/);
  });

  it("6. a subject naming a node that was not the leftmost open leaf", async () => {
    const dir = await copyOfClean();
    const mapped = await rewrite(dir, (sha, message) => (sha === shas[6] ? message.replace(" node b ", " node c ") : message));
    await expectCaught(dir, mapped.get(shas[6]!)!, "(iteration 7)", /the subject names node c, but the leftmost open leaf was b/);
  });

  it("7. a subject that says execute on a commit that changed only .runner/", async () => {
    const dir = await copyOfClean();
    const mapped = await rewrite(dir, (sha, message) => (sha === shas[0] ? message.replace("decompose guard", "execute guard") : message));
    await expectCaught(dir, mapped.get(shas[0]!)!, "(iteration 1)", /the subject says execute, but the commit changed only \.runner\//);
  });

  it("8. a commit between loop commits that the runner did not make (an agent's own commit kept on the branch), even one that leaves the tree alone", async () => {
    const dir = await copyOfClean();
    const parent = (await gitIn(dir, ["rev-parse", `${shas[2]}`])).trim();
    // Insert a commit after iteration 3, then the rest of the run on top of it.
    await gitIn(dir, ["reset", "-q", "--hard", parent]);
    writeFileSync(path.join(dir, "src", "sneaky.txt"), "unguarded work\n");
    const inserted = await commitAll(dir, "agent: my own work");
    for (const sha of shas.slice(3))
      await execa("git", ["cherry-pick", "--allow-empty", "--keep-redundant-commits", sha], { cwd: dir, env: testEnv(), extendEnv: false });
    await expectCaught(dir, inserted, "(not a loop commit)", /a commit between loop commits that the runner did not make \("agent: my own work"\)/);
  });

  it("9. a loop commit by another identity than the run's", async () => {
    const dir = await copyOfClean();
    const mapped = await rewriteWith(
      dir,
      (sha): Record<string, string> => (sha === shas[4] ? { GIT_AUTHOR_NAME: "Mallory", GIT_AUTHOR_EMAIL: "mallory@example.com" } : {}),
    );
    await expectCaught(
      dir,
      mapped.get(shas[4]!)!,
      "(iteration 5)",
      /made by Mallory <mallory@example\.com>, not the run's identity Test Author <author@example\.com>/,
    );
  });

  it("--json names every violation with its commit; the first is the first bad commit", async () => {
    const dir = await copyOfClean();
    await editTree(dir, (t) => {
      findNode(t, "c").passes = true;
      t.root.passes = true;
    });
    const sha = await commitAll(dir, "fix: c is done");
    const result = await runRaw(dir, ["audit", "--json"]);
    expect(result.exitCode).toBe(1);
    const report = JSON.parse(result.stdout) as { clean: boolean; violations: { commit: string; iteration: number | null; message: string }[] };
    expect(report.clean).toBe(false);
    expect(report.violations.length).toBeGreaterThanOrEqual(1);
    expect(report.violations[0]).toMatchObject({ commit: sha, iteration: null });
  });
});

describe("runner report audits on a thread of its own, given the run it resolved", () => {
  it("its page lists what runner audit finds: a first loop commit whose Runner-Start is not in its history, a hand-edited pass", async () => {
    const dir = await copyOfClean();
    const elsewhere = "f".repeat(40);
    await rewrite(dir, (sha, message) => (sha === shas[0] ? message.replace(/^Runner-Start: [0-9a-f]+$/m, `Runner-Start: ${elsewhere}`) : message));
    await editTree(dir, (t) => {
      findNode(t, "c").passes = true;
      t.root.passes = true;
    });
    await commitAll(dir, "fix: c is done");
    const audit = JSON.parse((await runRaw(dir, ["audit", "--json"])).stdout) as { violations: { message: string }[] };
    expect(audit.violations[0]!.message).toContain(`says the run began at ${elsewhere.slice(0, 12)} (Runner-Start), which is not in its history`);
    expect(audit.violations.some((v) => /passes of "c" changed from false to true without a green guard/.test(v.message))).toBe(true);

    // A probe loaded into the CLI (and its threads) records each thread the process makes and what it answers.
    const probe = path.join(tempDir("runner-thread-probe-"), "probe.mjs");
    const probeLog = `${probe}.log`;
    writeFileSync(
      probe,
      [
        'import wt from "node:worker_threads";',
        'import { appendFileSync } from "node:fs";',
        'import { syncBuiltinESMExports } from "node:module";',
        "const Made = wt.Worker;",
        "wt.Worker = class extends Made {",
        "  constructor(file, options) {",
        "    super(file, options);",
        `    const log = (line) => appendFileSync(${JSON.stringify(probeLog)}, line + "\\n");`,
        // (the thread's program is a line that loads dist/audit-thread.cjs through the bundle's loader)
        '    log("made " + (/audit-thread\\.cjs/.exec(String(file))?.[0] ?? String(file)));',
        '    this.on("message", (message) => log("answered " + (message && message.report ? "a report" : "nothing")));',
        "  }",
        "};",
        "syncBuiltinESMExports();",
      ].join("\n"),
    );
    const report = await runRaw(dir, ["report", "--output", "page.html"], { ...testEnv(), NODE_OPTIONS: `--import=${probe}` });
    expect(report.exitCode, report.stderr).toBe(0);
    // The audit ran on its thread (started ahead by the command), which answered with the audit: the
    // page's findings below are its. (Where the thread's program is not found, the audit runs on the
    // page's thread and gives the same page, only later.)
    expect(readFileSync(probeLog, "utf8").trim().split("\n")).toEqual(["made audit-thread.cjs", "answered a report"]);
    const page = readFileSync(path.join(dir, "page.html"), "utf8");
    expect(page).toContain('<section id="audit">');
    expect(page).toContain(`says the run began at ${elsewhere.slice(0, 12)} (Runner-Start), which is not in its history`);
    expect(page).toMatch(/passes of (&quot;|")c(&quot;|") changed from false to true without a green guard/);
  });
});
