// `runner mcp`: the runner as a Model Context Protocol server over stdio (the official TypeScript
// SDK), for a person's MCP client — Claude Code, Codex, Gemini CLI, Cursor, VS Code. Its tools are
// the commands (src/mcp/tools.ts), its resources the tree, the goal and the iterations
// (src/mcp/resources.ts). A tool's refusal is a tool error whose text is the runner's one sentence.
// stdout is the protocol's: nothing else may be written there (the command modules' data functions
// print nothing; their children's output is piped).
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { AnyCommand } from "../cli/command-table.js";
import type { EditClient } from "../core/commit/commit-message.js";
import { errorMessage, isBug } from "../errors.js";
import { packageVersion } from "../package-files.js";
import { registerResources } from "./resources.js";
import { toolInput } from "./tool-input.js";
import { TOOLS } from "./tools.js";

const INSTRUCTIONS = [
  "runner drives an AI coding agent through the task tree in .runner/state/tree.json, one committed iteration at a time; a leaf passes only on a green guard.",
  "Read with status, next, show, log, runs, validate and audit; report writes an HTML page about the run.",
  "add, edit, move, remove, unstick, extend, import and config are a person's edits of the plan: checked, then committed in the person's git name, naming this client.",
  "While `runner run` works they are refused unless `wait` is true. A refusal is a tool error with one sentence naming the problem and the way out.",
].join(" ");

/** One tool call's answer: the data as structured content (and as JSON text), or a tool error with the runner's sentence. */
async function answer(work: () => Promise<Record<string, unknown>>): Promise<CallToolResult> {
  try {
    const data = await work();
    return { content: [{ type: "text", text: JSON.stringify(data, null, 2) }], structuredContent: data };
  } catch (error) {
    if (!isBug(error)) return { isError: true, content: [{ type: "text", text: errorMessage(error) }] };
    // The client's log has the server's stderr.
    process.stderr.write(`runner mcp: ${error instanceof Error && error.stack ? error.stack : String(error)}\n`);
    return {
      isError: true,
      content: [
        {
          type: "text",
          text: `Internal error: ${errorMessage(error)}. This is a bug in the runner; the stack trace is in the MCP client's log of this server.`,
        },
      ],
    };
  }
}

/**
 * The server for the repository found from `folder` (looked up at every call: `runner init` may come
 * after the client started it); `commands` is the command table its tools' inputs come from.
 */
export function createRunnerServer(folder: string, commands: readonly AnyCommand[]): McpServer {
  const server = new McpServer({ name: "runner", title: "runner", version: packageVersion() }, { instructions: INSTRUCTIONS });
  const client = (): EditClient => {
    const info = server.server.getClientVersion();
    return { name: info?.name ?? "an unnamed MCP client", version: info?.version ?? "" };
  };
  // Calls that take the repository lock run one at a time: the lock (and a `wait`'s hand-over
  // request) names this process, so two of its calls must not hold or ask for it at once.
  let queue: Promise<unknown> = Promise.resolve();
  const exclusive = <T>(work: () => Promise<T>): Promise<T> => {
    const next = queue.then(work, work);
    queue = next.catch(() => undefined);
    return next;
  };
  for (const tool of TOOLS) {
    const spec = commands.find((command) => command.name === tool.command);
    if (!spec) throw new Error(`the tool ${tool.name} names no command ${tool.command}`);
    const input = toolInput(tool.name, spec, tool.omit);
    server.registerTool(
      tool.name,
      { title: tool.title, description: tool.description, inputSchema: input.schema, outputSchema: tool.output, annotations: tool.annotations },
      (raw, extra) =>
        answer(async () => {
          const args = input.args(raw);
          const call = () => tool.call(args, { folder, client, signal: extra.signal }) as Promise<Record<string, unknown>>;
          return tool.exclusive ? exclusive(call) : call();
        }),
    );
  }
  registerResources(server, folder);
  return server;
}

/** Serves on stdin and stdout until the client closes them. */
export async function serveStdio(folder: string, commands: readonly AnyCommand[]): Promise<void> {
  // (a person who typed `runner mcp` in a terminal learns what it waits for; a client's log gets nothing)
  if (process.stdin.isTTY)
    process.stderr.write(
      "runner mcp speaks the Model Context Protocol on stdin and stdout, for an MCP client to start (docs/mcp.md); Ctrl-D or Ctrl-C ends it.\n",
    );
  const server = createRunnerServer(folder, commands);
  const closed = new Promise<void>((resolve) => {
    process.stdin.once("end", resolve);
    process.stdin.once("close", resolve);
  });
  await server.connect(new StdioServerTransport());
  await closed;
  await server.close();
}
