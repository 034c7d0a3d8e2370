// The executor for each `[executor] kind`.
import type { ExecutorKind } from "../../core/config.js";
import { claudeExecutor } from "./claude.js";
import { codexExecutor } from "./codex.js";
import { commandExecutor } from "./command.js";
import { demoExecutor } from "./demo.js";
import type { Executor } from "./executor.js";

const executors: Partial<Record<ExecutorKind, Executor>> = {
  command: commandExecutor,
  demo: demoExecutor,
  codex: codexExecutor,
  claude: claudeExecutor,
};

export function executorFor(kind: ExecutorKind): Executor {
  const executor = executors[kind];
  if (!executor) throw new Error(`executor kind "${kind}" is not available in this build`);
  return executor;
}
