// The MCP SDK's own client against the built binary: `node bin/runner.js mcp` started over stdio in a
// real repository, as an MCP client (Claude Code, Codex, …) starts it. Every session a test opens is
// closed after the test file.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, expect } from "vitest";
import { RUNNER_BIN } from "./sandbox.js";

export interface McpSession {
  client: Client;
  /** tools/call; the result as the client got it (a refusal: isError with one text block). */
  call(name: string, args?: Record<string, unknown>, options?: { signal?: AbortSignal }): Promise<CallToolResult>;
  /** What the server wrote on stderr so far. */
  stderr(): string;
  close(): Promise<void>;
}

const open: McpSession[] = [];
afterAll(async () => {
  for (const session of open.splice(0)) await session.close().catch(() => undefined);
});

/** The client's name and version in `initialize` (the Runner-Client trailer of a person's edit names them). */
export const TEST_CLIENT = { name: "runner-test-client", version: "1.2.3" };

/** `runner mcp` in `dir` (the environment `env`), connected. */
export async function connectMcp(dir: string, env: Record<string, string>, args: string[] = []): Promise<McpSession> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [RUNNER_BIN, ...args, "mcp"], cwd: dir, env, stderr: "pipe" });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  const client = new Client(TEST_CLIENT);
  await client.connect(transport);
  const session: McpSession = {
    client,
    call: async (name, toolArgs = {}, options = {}) =>
      (await client.callTool({ name, arguments: toolArgs }, undefined, { timeout: 120_000, signal: options.signal })) as CallToolResult,
    stderr: () => stderr,
    close: () => client.close(),
  };
  open.push(session);
  return session;
}

/** The text of a tool error, checked to be one: isError, one text block, one line. */
export function toolError(result: CallToolResult): string {
  expect(result.isError, JSON.stringify(result)).toBe(true);
  expect(result.content).toHaveLength(1);
  const block = result.content[0]!;
  expect(block.type).toBe("text");
  const text = (block as { text: string }).text;
  expect(text.split("\n"), text).toHaveLength(1);
  expect(text.length).toBeGreaterThan(10);
  return text;
}

/** The structured answer of a tool call that succeeded (its text block is the same JSON). */
export function answerOf<T = Record<string, unknown>>(result: CallToolResult): T {
  expect(result.isError ?? false, JSON.stringify(result.content)).toBe(false);
  const block = result.content[0] as { type: string; text: string };
  expect(JSON.parse(block.text)).toEqual(result.structuredContent);
  return result.structuredContent as T;
}
