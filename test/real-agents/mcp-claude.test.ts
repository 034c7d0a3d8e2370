// A real MCP client: the real Claude Code (pinned in versions.json) with `runner mcp` in its MCP
// configuration (`--mcp-config`, its tools allowed by name), against the scripted Anthropic Messages
// server. Claude Code here is a person's tool, started by the test in the person's repository — not
// a runner's agent — so a person's edit it makes is allowed: its scripted model calls `status`, then
// `add`; the edit is committed on the run branch naming Claude Code (Runner-Client), and the audit
// judges it a valid person's edit.
import { execa } from "execa";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { REAL_AGENT_TEST_TIMEOUT } from "../helpers/real-agent-repo.js";
import { describe, expect, it } from "vitest";
import { agentPins } from "../../scripts/install-test-agents.mjs";
import { startMockAnthropic } from "../helpers/mock-anthropic.js";
import { AGENT_ENV_UNSET, realAgent } from "../helpers/real-agent-repo.js";
import { RUNNER_BIN, tempDir } from "../helpers/sandbox.js";
import { scenario, subject } from "../helpers/scenario.js";

const claude = realAgent("claude", startMockAnthropic);

/** The text of every tool result in a Messages API request's conversation, in order. */
function toolResults(body: unknown): string[] {
  const messages = (body as { messages: { content: string | { type: string; content?: unknown }[] }[] }).messages;
  return messages.flatMap((message) =>
    Array.isArray(message.content)
      ? message.content
          .filter((block) => block.type === "tool_result")
          .map((block) => (typeof block.content === "string" ? block.content : JSON.stringify(block.content)))
      : [],
  );
}
const version = agentPins().claude!.version;

describe(`Claude Code ${version} as the MCP client of \`runner mcp\``, { timeout: REAL_AGENT_TEST_TIMEOUT }, () => {
  it("its model calls status, then add: the edit is committed on the run branch naming Claude Code, and the audit is clean", async () => {
    const s = await scenario({ runId: "cc" });
    s.script({ 1: { status: "retry", summary: "not yet" } });
    expect((await s.step()).exitCode).toBe(0);

    const mock = await claude.mock([
      { kind: "tool", name: "mcp__runner__status", input: {} },
      { kind: "tool", name: "mcp__runner__add", input: { parent_id: "root", title: "Write the docs", goal: "Document usage" } },
      { kind: "final", answer: "Added the task." },
    ]);
    const home = tempDir("runner-claude-mcp-home-");
    mkdirSync(path.join(home, ".claude"));
    // The server Claude Code starts: this runner, in the person's repository, with the person's git identity.
    const server = { type: "stdio", command: process.execPath, args: [RUNNER_BIN, "mcp"], env: s.env };
    const env: Record<string, string> = {
      ...s.env,
      PATH: claude.path(),
      HOME: home,
      CLAUDE_CONFIG_DIR: path.join(home, ".claude"),
      ANTHROPIC_BASE_URL: mock.url,
      ANTHROPIC_API_KEY: "sk-ant-mock-claude-key-123",
    };
    for (const name of AGENT_ENV_UNSET) delete env[name];
    const run = await execa(
      claude.program(),
      [
        "-p",
        "--output-format",
        "json",
        "--mcp-config",
        JSON.stringify({ mcpServers: { runner: server } }),
        "--strict-mcp-config",
        "--allowedTools",
        "mcp__runner__status,mcp__runner__add",
      ],
      { cwd: s.dir, env, extendEnv: false, input: "Add a task for the docs to the plan.", reject: false, timeout: 180_000 },
    );
    expect(run.exitCode, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(JSON.parse(String(run.stdout))).toMatchObject({ is_error: false, result: "Added the task." });

    // The model saw each tool's answer: the run's status, then the commit.
    const turns = mock.requests.filter((request) => request.answeredWith === "tool" || request.answeredWith === "final");
    expect(turns.map((request) => request.position)).toEqual([0, 1, 2]);
    // Claude Code names the server's tools to the model (deferred behind its ToolSearch: listed by name).
    for (const name of ["status", "add", "show", "recheck"]) expect(JSON.stringify(turns[0]!.body)).toContain(`mcp__runner__${name}`);
    const results = toolResults(turns[2]!.body);
    expect(results).toHaveLength(2);
    expect(JSON.parse(results[0]!)).toMatchObject({ run_id: "cc", branch: "runner/cc", iterations: 1, next: { id: "root" } });
    expect(JSON.parse(results[1]!)).toMatchObject({ committed: true, subject: "chore(runner): run cc edit add node write-the-docs" });

    expect(await s.subjects()).toEqual([subject("cc", 1, "root", "decompose", "skipped"), "chore(runner): run cc edit add node write-the-docs"]);
    const message = await s.message();
    expect(message).toContain("Runner-Person: Test Author <author@example.com>\n");
    expect(message).toMatch(new RegExp(`\\nRunner-Client: claude-code ${version.replace(/\./g, "\\.")}\\n`));
    expect(s.node("write-the-docs")).toMatchObject({ goal: "Document usage", passes: false, attempts: 0 });
    const audit = await s.runner(["audit", "--json"]);
    expect(audit.exitCode, audit.stdout + audit.stderr).toBe(0);
    expect(JSON.parse(audit.stdout)).toMatchObject({
      clean: true,
      person_edits: [{ made: "runner", verb: "add", target: "write-the-docs", author: "Test Author <author@example.com>", valid: true }],
    });
  }, 240_000);
});
