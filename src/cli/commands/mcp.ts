// `runner mcp`: serve the runner to a person's MCP client over stdio (src/mcp/server.ts). The MCP
// SDK is bundled into this command's chunk alone: no other command loads it.
import path from "node:path";
import { serveStdio } from "../../mcp/server.js";
import type { GlobalArgs } from "../command-table.js";

export async function run(argv: GlobalArgs): Promise<number> {
  await serveStdio(path.resolve(argv.C));
  return 0;
}
