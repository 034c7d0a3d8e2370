// The executor for each `[executor] kind`: the bare command, the demo agent, or a session of one of
// the agents in src/agents/registry.ts.
import { findAgent } from "../../agents/registry.js";
import type { ExecutorKind } from "../../core/config/config.js";
import { runAgentSession } from "./agent-session.js";
import { commandExecutor } from "./command.js";
import { demoExecutor } from "./demo.js";
import type { Executor } from "./executor.js";

export function executorFor(kind: ExecutorKind): Executor {
  if (kind === "command") return commandExecutor;
  if (kind === "demo") return demoExecutor;
  const agent = findAgent(kind);
  if (!agent) throw new Error(`executor kind "${kind}" is not available in this build`);
  return { run: (request) => runAgentSession(agent, request) };
}
