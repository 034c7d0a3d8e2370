// `runner mcp`: serve the runner to a person's MCP client over stdio (src/mcp/server.ts). The MCP
// SDK is bundled into this command's chunk alone: no other command loads it. The command table (whose
// options are the tools' inputs) is handed in by the table itself: imported, it would close a cycle.
import path from "node:path";
import { serveStdio } from "../../mcp/server.js";
import type { AnyCommand, GlobalArgs } from "../command-table.js";

/** The command's `run`, serving the tools of `commands`. */
export function serving(commands: readonly AnyCommand[]): (argv: GlobalArgs) => Promise<number> {
  return async (argv) => {
    await serveStdio(path.resolve(argv.C), commands);
    return 0;
  };
}
