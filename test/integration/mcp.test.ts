// `runner mcp` (issue 31): the built binary as an MCP server over stdio, in real git repositories,
// driven by the MCP SDK's own client. Every tool answers what the command prints with --json; a
// person's edit through MCP is the command line's edit (same checks, same commit, same lock), with the
// client named in a Runner-Client trailer, and audited clean; every refusal is a tool error with one
// sentence and nothing written — bad input, an unknown node, a run at work (unless `wait`), and a
// call from inside an agent's containment. Resources: the tree, the goal, an iteration and its log.
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { expectSameSnapshot, runRaw, snapshot } from "../helpers/bad-input.js";
import { answerOf, connectMcp, TEST_CLIENT, toolError, type McpSession } from "../helpers/mcp-client.js";
import { node, PROJECT_ROOT, RUNNER_BIN, tempDir, tree } from "../helpers/sandbox.js";
import { CONFIG_FILE, scenario, subject, TREE_FILE, type Scenario } from "../helpers/scenario.js";

const PERSON = "Test Author <author@example.com>";
const CLIENT_TRAILER = `Runner-Client: ${TEST_CLIENT.name} ${TEST_CLIENT.version}`;

async function waitFor(condition: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The CLI's `--json` answer. */
async function cliJson(s: Scenario, args: string[]): Promise<unknown> {
  const result = await s.runner([...args, "--json"]);
  expect(result.stderr).toBe("");
  return JSON.parse(result.stdout);
}

/** A refused call: a tool error whose sentence matches, and the repository exactly as it was. */
async function expectRefused(s: Scenario, mcp: McpSession, tool: string, args: Record<string, unknown>, pattern: RegExp): Promise<void> {
  const before = await snapshot(s.dir);
  expect(toolError(await mcp.call(tool, args))).toMatch(pattern);
  expectSameSnapshot(await snapshot(s.dir), before, `${tool} ${JSON.stringify(args)}`);
}

/** A two-leaf run with two iterations (a passed, b failed once) and a person's edit made by hand on the command line. */
async function runWithHistory(): Promise<Scenario> {
  const s = await scenario({ runId: "m1", tree: tree(node("root", { children: [node("a", { order: 0 }), node("b", { order: 1 })] })) });
  s.script({
    1: { write: { "src/a.txt": "a\n" }, status: "done", summary: "wrote a" },
    2: { write: { "src/b.txt": "b\n" }, status: "done", summary: "wrote b", guard: { exit: 1, print: "FAIL b is wrong" } },
  });
  for (let i = 0; i < 2; i++) expect((await s.step()).exitCode).toBe(0);
  expect((await s.runner(["edit", "b", "--goal", "A better goal"])).exitCode).toBe(0);
  return s;
}

describe("runner mcp: the tools", () => {
  it("lists every tool with a JSON Schema of its input (from the command table) and of its answer, and hints of what it changes", async () => {
    const s = await scenario();
    const mcp = await connectMcp(s.dir, s.env);
    expect(mcp.client.getServerVersion()).toMatchObject({ name: "runner" });
    const { tools } = await mcp.client.listTools();
    expect(tools.map((t) => t.name)).toEqual([
      "status",
      "next",
      "show",
      "log",
      "validate",
      "audit",
      "report",
      "runs",
      "add",
      "edit",
      "move",
      "remove",
      "unstick",
      "extend",
      "import",
      "config",
      "recheck",
    ]);
    for (const t of tools) {
      expect(t.inputSchema, t.name).toMatchObject({ type: "object", additionalProperties: false });
      expect(t.outputSchema, t.name).toMatchObject({ type: "object" });
      expect(t.description?.length, t.name).toBeGreaterThan(40);
    }
    const add = tools.find((t) => t.name === "add")!;
    expect(add.inputSchema).toMatchObject({
      required: ["parent_id"],
      properties: {
        parent_id: { type: "string" },
        title: { type: "string" },
        acceptance: { type: "array", items: { type: "string" } },
        max_attempts: { type: "integer", minimum: 1 },
        from_file: { type: "string" },
        wait: { type: "boolean" },
      },
    });
    expect(Object.keys(tools.find((t) => t.name === "log")!.inputSchema.properties ?? {})).toEqual(["run_id", "iteration"]);
    expect(Object.keys(tools.find((t) => t.name === "next")!.inputSchema.properties ?? {})).toEqual([]);
    const readOnly = tools.filter((t) => t.annotations?.readOnlyHint).map((t) => t.name);
    expect(readOnly).toEqual(["status", "next", "show", "log", "validate", "audit", "runs"]);
    expect(tools.find((t) => t.name === "remove")!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
  });

  it("status, next, show, log, validate, audit and runs answer what the command prints with --json; report writes the page and returns its path", async () => {
    const s = await runWithHistory();
    const mcp = await connectMcp(s.dir, s.env);
    expect(answerOf(await mcp.call("status"))).toEqual(await cliJson(s, ["status"]));
    expect(answerOf(await mcp.call("next"))).toEqual(await cliJson(s, ["next"]));
    expect(answerOf(await mcp.call("show", { node_id: "b" }))).toEqual(await cliJson(s, ["show", "b"]));
    expect(answerOf(await mcp.call("log"))).toEqual(await cliJson(s, ["log"]));
    expect(answerOf(await mcp.call("log", { iteration: 2 }))).toEqual({ run_id: "m1", iteration: await cliJson(s, ["log", "--iteration", "2"]) });
    expect(answerOf(await mcp.call("validate"))).toEqual(await cliJson(s, ["validate"]));
    expect(answerOf(await mcp.call("audit"))).toEqual(await cliJson(s, ["audit"]));
    expect(answerOf(await mcp.call("runs"))).toEqual(await cliJson(s, ["runs"]));
    const shown = answerOf<{ history: { guard_output_tail: string[] }[]; person_edits: { verb: string }[] }>(
      await mcp.call("show", { node_id: "b" }),
    );
    expect(shown.history[0]!.guard_output_tail).toContain("FAIL b is wrong");
    expect(shown.person_edits.map((edit) => edit.verb)).toEqual(["edit"]);

    const report = answerOf<{ path: string; run_id: string }>(await mcp.call("report"));
    expect(report).toEqual({ path: path.join(s.dir, ".runner/iterations/m1/report.html"), run_id: "m1" });
    expect(readFileSync(report.path, "utf8")).toContain('<section id="person-edits">');
    const out = path.join(tempDir("runner-mcp-report-"), "page.html");
    expect(answerOf(await mcp.call("report", { output: out }))).toEqual({ path: out, run_id: "m1" });
    expect(existsSync(out)).toBe(true);
    // Read-only tools changed nothing (the report lies in the ignored log folder).
    expect(await s.git(["status", "--porcelain"])).toBe("");
  });

  it("a person's edits through MCP are the command line's: same trees, config and commits, plus the client named; audit clean", async () => {
    const start = async () => {
      const s = await scenario({
        runId: "m2",
        tree: tree(
          node("root", {
            children: [
              node("z", { order: 0 }),
              node("a", { order: 1, attempts: 3, max_attempts: 3 }),
              node("b", { order: 2 }),
              node("c", { order: 3 }),
            ],
          }),
        ),
      });
      s.script({ 1: { write: { "src/z.txt": "z\n" }, status: "done" }, 2: { write: { "src/a.txt": "a\n" }, status: "done" } });
      expect((await s.step()).exitCode).toBe(0);
      return s;
    };
    const viaMcp = await start();
    const viaCli = await start();
    const mcp = await connectMcp(viaMcp.dir, viaMcp.env);
    const edits: [string, Record<string, unknown>, string[]][] = [
      [
        "add",
        { parent_id: "root", title: "Write the docs", goal: "Document usage", acceptance: ["docs/usage.md exists"] },
        ["add", "root", "--title", "Write the docs", "--goal", "Document usage", "--acceptance", "docs/usage.md exists"],
      ],
      ["edit", { node_id: "b", goal: "New goal", max_attempts: 5 }, ["edit", "b", "--goal", "New goal", "--max-attempts", "5"]],
      ["move", { node_id: "c", parent: "b" }, ["move", "c", "--parent", "b"]],
      ["unstick", { node_id: "a", attempts: 1 }, ["unstick", "a", "--attempts", "1"]],
      ["remove", { node_id: "write-the-docs" }, ["remove", "write-the-docs"]],
      [
        "config",
        { key: "guard.command", set: ['["node", "guard.mjs", "fixed"]'] },
        ["config", "guard.command", "--set", '["node", "guard.mjs", "fixed"]'],
      ],
    ];
    for (const [verb, args, cli] of edits) {
      const answer = answerOf<{ committed: boolean; message: string; commit: string; subject: string; person: string; run_id: string }>(
        await mcp.call(verb, args),
      );
      const printed = await viaCli.runner(cli);
      expect(printed.exitCode, printed.stderr).toBe(0);
      expect(answer).toMatchObject({ committed: true, commit: await viaMcp.head(), person: PERSON, run_id: "m2" });
      // The CLI prints the same two sentences, with its own commit's sha.
      expect(answer.message.replace(/[0-9a-f]{7}/g, "SHA")).toBe(
        printed.stdout
          .split("\n")
          .join(" ")
          .replace(/[0-9a-f]{7}/g, "SHA"),
      );
      expect(answer.subject).toBe((await viaCli.git(["log", "-1", "--format=%s"])).trim());
      const message = await viaMcp.message();
      expect(message).toContain(`\n${CLIENT_TRAILER}\n`);
      expect(message.replace(` through \`runner mcp\``, "").replace(`${CLIENT_TRAILER}\n`, "")).toBe(await viaCli.message());
      expect(viaMcp.read(TREE_FILE)).toBe(viaCli.read(TREE_FILE));
      expect(viaMcp.read(CONFIG_FILE)).toBe(viaCli.read(CONFIG_FILE));
    }
    expect(viaMcp.node("a")).toMatchObject({ attempts: 3, max_attempts: 4 });
    // The same value again: refused like a no-op edit, no commit.
    await expectRefused(
      viaMcp,
      mcp,
      "config",
      { key: "guard.command", set: ['["node", "guard.mjs", "fixed"]'] },
      /^Nothing to change: guard\.command is already \["node","guard\.mjs","fixed"\]\.$/,
    );

    // The audit judges each as a person's edit made by a runner command, valid; the run goes on with them.
    expect((await viaMcp.step()).exitCode).toBe(0);
    const audit = answerOf<{ clean: boolean; person_edits: { made: string; verb: string; valid: boolean; author: string }[] }>(
      await mcp.call("audit"),
    );
    expect(audit.clean).toBe(true);
    expect(audit.person_edits.map((edit) => [edit.made, edit.verb, edit.valid, edit.author])).toEqual(
      ["add", "edit", "move", "unstick", "remove", "config"].map((verb) => ["runner", verb, true, PERSON]),
    );
    expect((await viaMcp.runner(["audit"])).exitCode).toBe(0);
    expect(await viaMcp.subjects()).toEqual([
      subject("m2", 1, "z", "execute", "pass"),
      "chore(runner): run m2 edit add node write-the-docs",
      "chore(runner): run m2 edit edit node b",
      "chore(runner): run m2 edit move node c",
      "chore(runner): run m2 edit unstick node a",
      "chore(runner): run m2 edit remove node write-the-docs",
      "chore(runner): run m2 edit config guard.command",
      subject("m2", 2, "a", "execute", "pass"),
    ]);
  }, 240_000);

  it("extend after the root passed, add --from-file and import a plan: person's edits as well", async () => {
    const s = await scenario({ runId: "m3", tree: tree(node("root", { passes: true })) });
    const mcp = await connectMcp(s.dir, s.env);
    expect(answerOf(await mcp.call("extend", { title: "Follow-up work", goal: "More" }))).toMatchObject({
      committed: true,
      subject: "chore(runner): run m3 edit extend node root-2",
    });
    expect(s.readTree().root).toMatchObject({
      id: "root-2",
      children: [
        { id: "root", passes: true },
        { id: "follow-up-work", passes: false },
      ],
    });
    const file = path.join(tempDir("runner-mcp-nodes-"), "nodes.json");
    writeFileSync(file, JSON.stringify([{ title: "Part one", children: [{ title: "Detail" }] }]));
    expect(answerOf(await mcp.call("add", { parent_id: "follow-up-work", from_file: file }))).toMatchObject({ committed: true });
    expect(s.node("part-one").children.map((child) => child.id)).toEqual(["detail"]);
    expect(await s.message()).toContain(CLIENT_TRAILER);
    const plan = path.join(tempDir("runner-mcp-plan-"), "PLAN.md");
    writeFileSync(plan, "# More work\n\n- [ ] Alpha\n- [ ] Beta\n");
    const imported = answerOf<{ committed: boolean; subject: string }>(await mcp.call("import", { file: plan, under: "follow-up-work" }));
    expect(imported.committed).toBe(true);
    expect(imported.subject).toMatch(/^chore\(runner\): run m3 edit import node /);
    expect(await s.message()).toContain(CLIENT_TRAILER);
    expect(JSON.stringify(s.node("follow-up-work"))).toContain('"title":"Alpha"');
    expect((await s.runner(["audit"])).exitCode).toBe(0);
  });

  it("recheck: a green guard passes the leaf (committed like an iteration), a red one leaves it open — an answer, not an error", async () => {
    const s = await scenario({ runId: "m4", tree: tree(node("root", { children: [node("a", { order: 0 }), node("b", { order: 1 })] })) });
    s.script({ 1: {}, 2: { guard: { exit: 1, print: "FAIL still broken" } } });
    const mcp = await connectMcp(s.dir, s.env);
    expect(answerOf(await mcp.call("recheck", { node_id: "a" }))).toMatchObject({
      passed: true,
      outcome: "committed",
      node_id: "a",
      kind: "recheck",
      guard_outcome: "pass",
      passes_after: true,
    });
    const red = answerOf<{ passed: boolean; message: string; guard_output_tail: string[] }>(await mcp.call("recheck"));
    expect(red).toMatchObject({ passed: false, node_id: "b", guard_outcome: "fail", passes_after: false });
    expect(red.guard_output_tail).toContain("FAIL still broken");
    expect(await s.subjects()).toEqual([subject("m4", 1, "a", "recheck", "pass"), subject("m4", 2, "b", "recheck", "fail")]);
  });
});

describe("runner mcp: every refusal is a tool error with one sentence, nothing written", () => {
  it("bad input: an unknown argument, a wrong type, a number out of range, a missing argument, a bad run id", async () => {
    const s = await scenario({ tree: tree(node("root", { children: [node("a", { order: 0, passes: true }), node("b", { order: 1 })] })) });
    const mcp = await connectMcp(s.dir, s.env);
    await expectRefused(
      s,
      mcp,
      "add",
      { parent_id: "b", titel: "x" },
      /^The add tool has no argument `titel` \(did you mean `title`\?\); its arguments are parent_id, title, goal, acceptance, order, max_attempts, id, from_file, wait\.$/,
    );
    await expectRefused(s, mcp, "next", { json: true }, /^The next tool has no argument `json`; it takes none\.$/);
    await expectRefused(s, mcp, "add", { parent_id: "b", title: 3 }, /^`title` must be a string, not 3\.$/);
    await expectRefused(
      s,
      mcp,
      "add",
      { parent_id: "b", title: "x", max_attempts: 0 },
      /^`max_attempts` must be a whole number of at least 1, not 0\.$/,
    );
    await expectRefused(s, mcp, "add", { parent_id: "b", title: "x", order: 1.5 }, /^`order` must be a whole number, not 1\.5\.$/);
    await expectRefused(s, mcp, "add", { parent_id: "b", title: "x", acceptance: "one" }, /^`acceptance` must be an array of strings, not "one"\.$/);
    await expectRefused(s, mcp, "add", { parent_id: "b", title: "x", wait: "yes" }, /^`wait` must be true or false, not "yes"\.$/);
    await expectRefused(s, mcp, "add", { title: "x" }, /^The add tool needs `parent_id`: The open node to add under\.$/);
    await expectRefused(s, mcp, "add", { parent_id: "b" }, /^`runner add` needs --title/);
    await expectRefused(s, mcp, "status", { run_id: "bad id!" }, /^Run id "bad id!" is not valid: use 1 to 64 letters/);
    await expectRefused(s, mcp, "config", { key: "limits.max_iterations", set: ["-3"] }, /^With limits\.max_iterations = -3 the config is invalid/);
  });

  it("an unknown node, a passed node, a node id taken: the command line's sentences", async () => {
    const s = await scenario({ tree: tree(node("root", { children: [node("a", { order: 0, passes: true }), node("b", { order: 1 })] })) });
    const mcp = await connectMcp(s.dir, s.env);
    await expectRefused(
      s,
      mcp,
      "edit",
      { node_id: "nope", title: "T" },
      /^There is no node "nope" in the tree; `runner status` lists the node ids\.$/,
    );
    await expectRefused(s, mcp, "show", { node_id: "nope" }, /^Node "nope" is not in the task tree; `runner status` lists the nodes\.$/);
    await expectRefused(s, mcp, "remove", { node_id: "a" }, /^Node "a" has passed, and passed nodes are immutable/);
    await expectRefused(s, mcp, "add", { parent_id: "b", title: "T", id: "a" }, /^the new node's id "a" is already used in the tree/);
    await expectRefused(s, mcp, "log", { iteration: 3 }, /^Run t1 has no iteration 3; `runner log` lists them\.$/);
  });

  it("outside a repository with .runner/: each call says so (the server itself runs)", async () => {
    const dir = tempDir("runner-mcp-empty-");
    const s = await scenario();
    const mcp = await connectMcp(dir, s.env);
    expect(toolError(await mcp.call("status"))).toMatch(/^No \.runner\/ folder in .* or above it; run `runner init` in your repository first\.$/);
    expect(toolError(await mcp.call("add", { parent_id: "root", title: "x" }))).toMatch(/^No \.runner\/ folder/);
  });

  it("while `runner run` works: refused unless `wait`; a cancelled wait writes nothing; `wait: true` is made between two iterations", async () => {
    const s = await scenario({ runId: "busy", tree: tree(node("root", { children: [node("a", { order: 0 }), node("b", { order: 1 })] })) });
    const gate = path.join(s.scriptDir, "gate");
    s.script({
      // The first agent waits until the test opens the gate: the run is at work for as long as the test needs.
      1: { write: { "src/a.txt": "a\n" }, status: "done", sh: `while [ ! -f '${gate}' ]; do sleep 0.1; done` },
      2: { write: { "src/b.txt": "b\n" }, status: "done" },
      3: { write: { "src/late.txt": "late\n" }, status: "done" },
    });
    const run = runRaw(s.dir, ["run"], s.env);
    await waitFor(() => s.agentRan(1), "the run's first agent");
    const mcp = await connectMcp(s.dir, s.env);
    const waiting = path.join(s.dir, ".git", "runner.lock.waiting");

    const head = await s.head();
    expect(toolError(await mcp.call("add", { parent_id: "root", title: "Late work" }))).toMatch(
      /^Another runner \(runner run, pid \d+, since .*\) is working in this repository; call the tool again with `wait: true` to make the edit between two of its iterations, or try again when it has stopped\.$/,
    );
    expect(toolError(await mcp.call("recheck", { node_id: "a" }))).toMatch(
      /^Another runner \(runner run, pid \d+, since .*\) is working in this repository/,
    );
    // Read tools answer: the run at work is named.
    expect(answerOf<{ in_progress: { command: string } }>(await mcp.call("status")).in_progress).toMatchObject({ command: "runner run" });

    // A wait the client gives up on: nothing is made, the run is not asked to hand over any more.
    const cancel = new AbortController();
    const cancelled = mcp.call("add", { parent_id: "root", title: "Cancelled work", wait: true }, { signal: cancel.signal });
    await waitFor(() => existsSync(waiting), "the waiting edit's request");
    cancel.abort();
    await expect(cancelled).rejects.toThrow();
    await waitFor(() => !existsSync(waiting), "the cancelled edit to stop waiting");

    const queued = mcp.call("edit", { node_id: "b", title: "B, edited while the run worked", wait: true });
    await waitFor(() => existsSync(waiting), "the queued edit's request");
    expect(await s.head()).toBe(head);
    writeFileSync(gate, "");
    const made = answerOf<{ committed: boolean; subject: string }>(await queued);
    expect(made).toMatchObject({ committed: true, subject: "chore(runner): run busy edit edit node b" });
    const done = await run;
    expect(done.exitCode, done.stdout + done.stderr).toBe(0);
    expect(await s.subjects()).toEqual([
      subject("busy", 1, "a", "execute", "pass"),
      "chore(runner): run busy edit edit node b",
      subject("busy", 2, "b", "execute", "pass"),
    ]);
    expect(s.node("b").title).toBe("B, edited while the run worked");
    expect(existsSync(waiting)).toBe(false);
  }, 120_000);

  it("from inside an agent's containment: an agent that starts `runner mcp` and calls add is refused, nothing committed; it may still read", async () => {
    const s = await scenario({ runId: "door" });
    const client = path.join(s.scriptDir, "mcp-agent.mjs");
    const sdk = (file: string) =>
      JSON.stringify(path.join(PROJECT_ROOT, "node_modules", "@modelcontextprotocol", "sdk", "dist", "esm", "client", file));
    writeFileSync(
      client,
      [
        `import { Client } from ${sdk("index.js")};`,
        `import { StdioClientTransport } from ${sdk("stdio.js")};`,
        'import { writeFileSync } from "node:fs";',
        'const client = new Client({ name: "agent-made-client", version: "0" });',
        `await client.connect(new StdioClientTransport({ command: process.execPath, args: [${JSON.stringify(RUNNER_BIN)}, "mcp"], env: process.env }));`,
        'const status = await client.callTool({ name: "status", arguments: {} });',
        'const add = await client.callTool({ name: "add", arguments: { parent_id: "root", title: "Agent steers", wait: true } });',
        'const config = await client.callTool({ name: "config", arguments: { key: "guard.command", set: ["[\\"true\\"]"] } });',
        'const recheck = await client.callTool({ name: "recheck", arguments: {} });',
        'writeFileSync(process.env.SCENARIO_DIR + "/mcp-agent.json", JSON.stringify({ status, add, config, recheck }));',
        "await client.close();",
      ].join("\n"),
    );
    s.script({ 1: { sh: `node '${client}'`, status: "retry", summary: "tried to steer" } });
    const step = await s.step();
    expect(step.exitCode, step.stderr).toBe(0);
    const seen = JSON.parse(readFileSync(path.join(s.scriptDir, "mcp-agent.json"), "utf8")) as Record<
      string,
      { isError?: boolean; content: { text: string }[]; structuredContent?: Record<string, unknown> }
    >;
    expect(seen.status!.isError ?? false).toBe(false);
    expect(seen.status!.structuredContent).toMatchObject({ run_id: "door", next: { id: "root" } });
    for (const [tool, command] of [
      ["add", "runner add"],
      ["config", "runner config"],
      ["recheck", "runner recheck"],
    ] as const) {
      expect(seen[tool]!.isError, tool).toBe(true);
      expect(seen[tool]!.content.map((block) => block.text)).toEqual([
        expect.stringMatching(
          new RegExp(
            `^\`${command}\` is a person's command, and this process runs inside a runner's agent containment \\(.+\\); an agent cannot steer a run — write what a person should change in \\.runner/state/questions\\.md or in your summary instead\\.$`,
          ),
        ),
      ]);
    }
    // Only the iteration's own commit; the tree and the guard as they were.
    expect(await s.subjects()).toEqual([subject("door", 1, "root", "decompose", "skipped")]);
    expect(s.readTree().root.children).toEqual([]);
    expect(s.read(CONFIG_FILE)).toContain('command = ["node", "guard.mjs"]');
  });
});

describe("runner mcp: resources", () => {
  it("the tree and the goal as their files are; an iteration as `runner log --iteration N --json`; an iteration's log files, never through a link", async () => {
    const s = await runWithHistory();
    const mcp = await connectMcp(s.dir, s.env);
    const read = async (uri: string) => (await mcp.client.readResource({ uri })).contents[0] as { uri: string; mimeType: string; text: string };
    expect((await mcp.client.listResources()).resources.map((r) => r.uri)).toEqual(expect.arrayContaining(["runner://tree", "runner://goal"]));
    expect((await mcp.client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate)).toEqual([
      "runner://runs/{run_id}/iterations/{iteration}",
      "runner://runs/{run_id}/iterations/{iteration}/{file}",
    ]);
    expect(await read("runner://tree")).toMatchObject({ mimeType: "application/json", text: s.read(TREE_FILE) });
    expect(await read("runner://goal")).toMatchObject({ mimeType: "text/markdown", text: s.read(".runner/GOAL.md") });
    // The current run's iterations are listed.
    expect((await mcp.client.listResources()).resources.map((r) => r.uri)).toEqual(
      expect.arrayContaining(["runner://runs/m1/iterations/2", "runner://runs/m1/iterations/1"]),
    );
    expect(JSON.parse((await read("runner://runs/m1/iterations/2")).text)).toEqual(await cliJson(s, ["log", "--iteration", "2"]));
    expect((await read("runner://runs/m1/iterations/2/meta.json")).text).toBe(s.read(s.iterFile(2, "meta.json")));
    expect((await read("runner://runs/m1/iterations/2/guard.log")).text).toContain("FAIL b is wrong");

    await expect(read("runner://runs/m1/iterations/2/secrets.txt")).rejects.toThrow(
      /"secrets\.txt" is not a file of an iteration's log; those are meta\.json/,
    );
    await expect(read("runner://runs/m1/iterations/9/meta.json")).rejects.toThrow(/\.runner\/iterations\/m1\/0009 is not a folder here/);
    await expect(read("runner://runs/m1/iterations/9")).rejects.toThrow(/Run m1 has no iteration 9/);
    // A link an agent planted in place of a log file, or of an iteration's folder, is not followed.
    const outside = tempDir("runner-mcp-outside-");
    writeFileSync(path.join(outside, "executor.log"), "a secret outside the repository\n");
    const log = path.join(s.dir, s.iterFile(1, "executor.log"));
    rmSync(log);
    symlinkSync(path.join(outside, "executor.log"), log);
    await expect(read("runner://runs/m1/iterations/1/executor.log")).rejects.toThrow(/is not a regular file \(a link, perhaps\); it is not read/);
    const folder = path.dirname(path.join(s.dir, s.iterFile(2, "meta.json")));
    rmSync(folder, { recursive: true });
    symlinkSync(outside, folder);
    await expect(read("runner://runs/m1/iterations/2/executor.log")).rejects.toThrow(/\.runner\/iterations\/m1\/0002 is not a folder here/);
    // The goal and the tree are in the agent's reach too: a FIFO is never waited on, a link never followed.
    rmSync(path.join(s.dir, ".runner/GOAL.md"));
    execFileSync("mkfifo", [path.join(s.dir, ".runner/GOAL.md")]);
    await expect(read("runner://goal")).rejects.toThrow(/\.runner\/GOAL\.md is not a regular file \(a link, perhaps\); it is not read/);
    rmSync(path.join(s.dir, TREE_FILE));
    symlinkSync(path.join(outside, "executor.log"), path.join(s.dir, TREE_FILE));
    await expect(read("runner://tree")).rejects.toThrow(/is not a regular file \(a link, perhaps\); it is not read/);
  });
});

describe("runner mcp: its process", () => {
  it("answers on stdout with the protocol alone, and ends with exit 0 when the client closes its stdin", async () => {
    const s = await scenario();
    mkdirSync(path.join(s.dir, "sub"));
    const server = spawn(process.execPath, [RUNNER_BIN, "-C", "sub", "mcp"], { cwd: s.dir, env: s.env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    server.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    const ended = new Promise<number | null>((resolve) => server.on("close", resolve));
    const initialize = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: TEST_CLIENT },
    };
    server.stdin.write(`${JSON.stringify(initialize)}\n`);
    await waitFor(() => stdout.includes("\n"), "the answer to initialize");
    server.stdin.end();
    expect(await ended).toBe(0);
    const lines = stdout.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      jsonrpc: "2.0",
      id: 1,
      result: { serverInfo: { name: "runner" }, capabilities: { tools: {}, resources: {} } },
    });
  });
});
