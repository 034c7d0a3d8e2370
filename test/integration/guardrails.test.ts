// Guardrails (CONTRACT §9, issue 6 §1) through the built binary: a node's allowed_write_paths and
// the protected paths fail the guard stage with the offending paths named (and the agent cannot
// change the guard's own files: they are restored before the commit); output fed back to the agent
// is cut to the first 2500 + `\n...\n` + the last 1000 characters; secret-looking environment
// values never reach a file the runner writes; an agent printing 200 MB keeps the runner small.
import { execa } from "execa";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { truncateForAgent } from "../../src/core/base/text-limits.js";
import { node, RUNNER_BIN, tree } from "../helpers/sandbox.js";
import { CONFIG_FILE, scenario, subject, type Scenario } from "../helpers/scenario.js";

const ONE_LEAF = tree(node("root", { children: [node("a")] }));
const JUSTFILE = "# the project's guard\nci:\n    node guard.mjs\n";

async function expectClean(s: Scenario): Promise<void> {
  expect(await s.git(["status", "--porcelain"])).toBe("");
}

describe.concurrent("allowed_write_paths (.runner/nodes/<id>/policy.json)", () => {
  const policy = { ".runner/nodes/a/policy.json": `${JSON.stringify({ allowed_write_paths: ["src/", "README.md"] })}\n` };

  it("an EXECUTE + done iteration writing outside the allowlist fails its guard stage without running the guard; the next failure.md names the paths", async () => {
    const s = await scenario({ tree: ONE_LEAF, files: policy });
    s.script({
      1: { write: { "src/ok.txt": "ok\n", "docs/notes.md": "notes\n", "other.txt": "x\n" }, status: "done" },
      2: { status: "retry" },
    });
    const first = await s.step();
    expect(first.exitCode, first.stderr).toBe(0);
    expect(await s.subjects()).toEqual([subject("t1", 1, "a", "execute", "fail")]);
    expect(s.node("a")).toMatchObject({ passes: false, attempts: 1 });
    expect(s.guardRuns()).toEqual([]);
    expect(s.meta(1).failure).toBe(
      "The iteration changed paths outside the node's allowed_write_paths (docs/notes.md, other.txt); the guard stage failed.",
    );
    expect(first.stdout).toContain("docs/notes.md, other.txt");
    await expectClean(s);

    const second = await s.step();
    expect(second.exitCode, second.stderr).toBe(0);
    const failure = s.agent(2).context["failure.md"]!;
    expect(failure).toContain("allowed_write_paths (docs/notes.md, other.txt)");
    expect(failure).not.toContain("src/ok.txt");
    expect(s.agent(2).stdin).toContain("docs/notes.md, other.txt");
  });

  it("inside the allowlist (and the runner's own notes) the guard runs and passes", async () => {
    const s = await scenario({ tree: ONE_LEAF, files: policy });
    s.script({
      1: { write: { "src/deep/ok.txt": "ok\n", "README.md": "readme\n" }, append: { ".runner/state/assumptions.md": "- one\n" }, status: "done" },
    });
    const result = await s.step();
    expect(result.exitCode, result.stderr).toBe(0);
    expect(await s.subjects()).toEqual([subject("t1", 1, "a", "execute", "pass")]);
    expect(s.guardRuns()).toEqual([1]);
    expect(s.node("a")).toMatchObject({ passes: true, attempts: 0 });
    expect(s.meta(1).failure).toBeNull();
  });
});

describe.concurrent("[guard] protected_paths (default: the guard's files and .runner/state/config.toml)", () => {
  it("done with an edited justfile (and a new .justfile): guard=fail, attempts + 1, both put back, the change kept in protected.patch", async () => {
    const s = await scenario({ tree: ONE_LEAF, files: { justfile: JUSTFILE } });
    const headJustfile = s.read("justfile");
    s.script({
      1: {
        write: { justfile: "ci:\n    true # the agent made its own guard pass\n", ".justfile": "ci:\n    true\n", "src/x.txt": "x\n" },
        status: "done",
      },
      2: { status: "retry" },
    });
    const result = await s.step();
    expect(result.exitCode, result.stderr).toBe(0);
    expect(await s.subjects()).toEqual([subject("t1", 1, "a", "execute", "fail")]);
    expect(s.node("a")).toMatchObject({ passes: false, attempts: 1 });
    expect(s.guardRuns()).toEqual([]);
    // Back as it was, in the working tree and on the branch; the new file is gone.
    expect(s.read("justfile")).toBe(headJustfile);
    expect(await s.git(["show", "HEAD:justfile"])).toBe(headJustfile.trimEnd());
    expect(await s.git(["log", "--format=%s", "--", "justfile"])).toBe("project");
    expect(s.exists(".justfile")).toBe(false);
    expect(await s.git(["ls-tree", "-r", "--name-only", "HEAD"])).not.toMatch(/^\.justfile$/m);
    expect(await s.git(["show", "HEAD:src/x.txt"])).toBe("x");
    const patch = s.read(s.iterFile(1, "protected.patch"));
    expect(patch).toContain("+    true # the agent made its own guard pass");
    expect(patch).toContain("diff --git a/justfile b/justfile");
    expect(patch).toContain("diff --git a/.justfile b/.justfile");
    expect(s.meta(1).failure).toBe(
      "The iteration changed protected paths (.justfile, justfile), which the agent may not touch; the guard stage failed.",
    );
    await expectClean(s);

    await s.step();
    expect(s.agent(2).context["failure.md"]).toContain("changed protected paths (.justfile, justfile)");
  });

  it("done with an edited guard script (named in the guard's argv) and an edited config.toml: both restored, guard=fail", async () => {
    const s = await scenario({ tree: ONE_LEAF });
    const guardScript = s.read("guard.mjs");
    const config = s.read(CONFIG_FILE);
    s.script({
      1: { append: { "guard.mjs": "\nprocess.exit(0);\n", [CONFIG_FILE]: "max_iterations = 9\n" }, write: { "src/x.txt": "x\n" }, status: "done" },
    });
    const result = await s.step();
    expect(result.exitCode, result.stderr).toBe(0);
    expect(await s.subjects()).toEqual([subject("t1", 1, "a", "execute", "fail")]);
    expect(s.node("a").attempts).toBe(1);
    expect(s.guardRuns()).toEqual([]);
    expect(s.read("guard.mjs")).toBe(guardScript);
    expect(s.read(CONFIG_FILE)).toBe(config);
    const patch = s.read(s.iterFile(1, "protected.patch"));
    expect(patch).toContain("+process.exit(0);");
    expect(patch).toContain("+max_iterations = 9");
    expect(s.meta(1).failure).toContain(`changed protected paths (${CONFIG_FILE}, guard.mjs)`);
    await expectClean(s);
  });

  it("a retry that touches a protected file: attempts + 1, guard skipped, the file restored; the commit, which changes only .runner/, says decompose", async () => {
    const s = await scenario({ tree: ONE_LEAF, files: { justfile: JUSTFILE } });
    s.script({ 1: { write: { justfile: "ci:\n    true\n" }, status: "retry" } });
    const result = await s.step();
    expect(result.exitCode, result.stderr).toBe(0);
    expect(await s.subjects()).toEqual([subject("t1", 1, "a", "decompose", "skipped")]);
    const audit = await s.runner(["audit"]);
    expect(audit.exitCode, audit.stderr).toBe(0);
    expect(s.node("a").attempts).toBe(1);
    expect(s.read("justfile")).toBe(JUSTFILE);
    expect(s.read(s.iterFile(1, "protected.patch"))).toContain("+    true");
    await expectClean(s);
  });
});

describe.concurrent("what reaches the agent and the logs", () => {
  it("guard output of 10,000 characters reaches failure.md and the prompt as its first 2500, `\\n...\\n`, its last 1000; guard.log keeps it all", async () => {
    const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    let seed = 7;
    const big = Array.from({ length: 10_000 }, () => alphabet[(seed = (seed * 1103515245 + 12345) % 2147483648) % alphabet.length]).join("");
    const s = await scenario({ tree: ONE_LEAF });
    s.script({ 1: { write: { "src/x.txt": "x\n" }, status: "done", guard: { exit: 1, print: big } }, 2: { status: "retry" } });
    expect((await s.step()).exitCode).toBe(0);
    expect(await s.subjects()).toEqual([subject("t1", 1, "a", "execute", "fail")]);
    expect(s.read(s.iterFile(1, "guard.log"))).toContain(big);

    await s.step();
    const excerpt = truncateForAgent(`${big}\n`);
    expect(excerpt.length).toBe(2500 + 5 + 1000);
    expect(excerpt.startsWith(big.slice(0, 2500))).toBe(true);
    const failure = s.agent(2).context["failure.md"]!;
    expect(failure).toContain(excerpt);
    expect(failure).toContain(`${big.slice(0, 2500)}\n...\n${big.slice(-999)}\n`);
    expect(failure).not.toContain(big.slice(2500, 2560));
    expect(failure).not.toContain(big.slice(8000, 8060));
    expect(s.agent(2).stdin).toContain(excerpt);
    expect(s.agent(2).stdin).not.toContain(big.slice(5000, 5060));
  });

  it("secret-looking environment values are *** in executor.log, guard.log, prompt.md, context/*.md, meta.json, events.jsonl and commit messages", async () => {
    const secret = "tok-9f8e7d6c5b4a3210";
    const s = await scenario({
      tree: ONE_LEAF,
      env: { MY_TOKEN: secret, DB_PASSWORD: "hunter2-hunter2" },
      executor: ["node", "agent.mjs", `--api-key=${secret}`],
      files: { ".runner/GOAL.md": `# Goal\n\nUse the token ${secret} and the password hunter2-hunter2 carefully.\n` },
    });
    s.script({
      1: {
        write: { "src/x.txt": "x\n" },
        print: `stdout token=${secret}`,
        printErr: `stderr token=${secret}`,
        status: "done",
        summary: `used ${secret} and hunter2-hunter2`,
        guard: { exit: 1, print: `guard saw ${secret}` },
      },
      2: { status: "retry", summary: `again ${secret}` },
    });
    const first = await s.step();
    const second = await s.step();
    expect(first.exitCode, first.stderr).toBe(0);
    expect(second.exitCode, second.stderr).toBe(0);

    const files: Record<string, string> = {};
    for (const iteration of [1, 2]) {
      for (const name of ["executor.log", "guard.log", "prompt.md", "meta.json"]) {
        const file = s.iterFile(iteration, name);
        if (s.exists(file)) files[file] = s.read(file);
      }
    }
    for (const name of readdirSync(path.join(s.dir, ".runner/context"))) files[`.runner/context/${name}`] = s.read(`.runner/context/${name}`);
    files["events.jsonl"] = s.read(".runner/iterations/t1/events.jsonl");
    files["commit messages"] = await s.git(["log", "--format=%B", "main..HEAD"]);
    files["runner output"] = first.stdout + first.stderr + second.stdout + second.stderr;
    for (const [file, text] of Object.entries(files)) {
      expect(text, file).not.toContain(secret);
      expect(text, file).not.toContain("hunter2-hunter2");
    }
    // The secrets were there to redact.
    expect(files[s.iterFile(1, "executor.log")]).toContain("stdout token=***");
    expect(files[s.iterFile(1, "executor.log")]).toContain("stderr token=***");
    expect(files[s.iterFile(1, "guard.log")]).toContain("guard saw ***");
    expect(files[s.iterFile(1, "prompt.md")]).toContain("Use the token *** and the password *** carefully.");
    expect(files[".runner/context/goal.md"]).toContain("Use the token ***");
    expect(files[".runner/context/failure.md"]).toContain("guard saw ***");
    expect(files[".runner/context/history.md"]).toContain("used *** and ***");
    const meta = JSON.parse(files[s.iterFile(1, "meta.json")]!) as { summary: string; failure: string; executor: { argv: string[] } };
    expect(meta.summary).toBe("used *** and ***");
    expect(meta.failure).toContain("guard saw ***");
    expect(meta.executor.argv).toEqual(["node", "agent.mjs", "--api-key=***"]);
    expect(files["commit messages"]).toContain("used *** and ***");
    expect(files["commit messages"]).toContain("again ***");
    expect(Object.keys(files).length).toBeGreaterThanOrEqual(12);
  });

  it("an agent printing 200 MB with output_cap_bytes = 1 MiB: the step completes, executor.log stays under 2 MiB, the runner's peak RSS under 300 MB", async () => {
    const script = `head -c 200000000 /dev/zero | tr '\\0' x; printf '%s' '{"status":"retry","summary":"printed 200 MB"}' > "$RUNNER_OUTPUT_FILE"`;
    const s = await scenario({ tree: ONE_LEAF, executor: ["bash", "-c", script], limits: "output_cap_bytes = 1048576" });
    const rssFile = path.join(s.scriptDir, "rss.txt");
    const useTime = existsSync("/usr/bin/time");
    const child = useTime
      ? execa("/usr/bin/time", ["-f", "%M", "-o", rssFile, "node", RUNNER_BIN, "step"], { cwd: s.dir, env: s.env, extendEnv: false, reject: false })
      : execa("node", [RUNNER_BIN, "step"], { cwd: s.dir, env: s.env, extendEnv: false, reject: false });
    // Without GNU time: poll the runner's high-water mark while it runs.
    let polledKb = 0;
    const poll = setInterval(() => {
      try {
        const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"));
        if (match) polledKb = Math.max(polledKb, Number(match[1]));
      } catch {
        // exited
      }
    }, 25);
    const result = await child;
    clearInterval(poll);
    expect(result.exitCode, String(result.stderr)).toBe(0);
    expect(await s.subjects()).toEqual([subject("t1", 1, "a", "decompose", "skipped")]);
    const log = s.iterFile(1, "executor.log");
    const size = statSync(path.join(s.dir, log)).size;
    expect(size).toBeGreaterThanOrEqual(1_048_576);
    expect(size).toBeLessThan(2 * 1024 * 1024);
    const tail = s.read(log).slice(-300);
    expect(tail).toMatch(/stdout 200000000 bytes, stderr 0 bytes, 198951424 dropped over the cap of 1048576 per stream/);
    const peakKb = useTime ? Number(readFileSync(rssFile, "utf8").trim().split("\n").pop()) : polledKb;
    console.log(`200 MB agent: runner peak RSS ${Math.round(peakKb / 1024)} MB, executor.log ${size} bytes`);
    expect(peakKb).toBeGreaterThan(10_000);
    expect(peakKb).toBeLessThan(300 * 1024);
  });
});
