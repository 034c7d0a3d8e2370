// 7. MCP start: `runner mcp` from its start to the answer of its first tool call (`status`), as an MCP
// client (the SDK's own, over stdio) sees it, against `node -e 0`, alternating runs.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { log, RUNNER_BIN, summary, timeRun } from "./lib/common.mjs";
import { resetRepo } from "./lib/fixtures.mjs";

/** Milliseconds from spawning `runner mcp` to the answer of `status` (initialize included). */
async function firstAnswer(repo) {
  const start = process.hrtime.bigint();
  const client = new Client({ name: "runner-bench", version: "1" });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [RUNNER_BIN, "mcp"], cwd: repo.dir, env: repo.env }));
  const result = await client.callTool({ name: "status", arguments: {} });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  await client.close();
  if (result.isError) throw new Error(`runner mcp status failed: ${JSON.stringify(result.content)}`);
  return ms;
}

export async function mcpStart(repo, base, reps) {
  resetRepo(repo, base);
  log(`  mcp start: runner mcp to its first answer (status) vs node -e 0, ${reps} runs each`);
  const node = () => timeRun(["node", "-e", "0"], { cwd: repo.dir, env: repo.env }).ms;
  await firstAnswer(repo);
  const answers = [];
  const nodes = [];
  for (let i = 0; i < reps; i++) {
    answers.push(await firstAnswer(repo));
    nodes.push(node());
  }
  const a = summary(answers);
  const b = summary(nodes);
  return { firstAnswer: a, nodeE0: b, ratio: Number((a.median / b.median).toFixed(2)) };
}
