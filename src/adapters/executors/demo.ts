// kind = "demo": the built-in deterministic demo agent (src/demo/agent.ts), run with this Node.
import { fileURLToPath } from "node:url";
import { runArgv } from "./command.js";
import type { Executor } from "./executor.js";

const agentScript = fileURLToPath(new URL("../../demo/agent.js", import.meta.url));

export const demoExecutor: Executor = {
  run(request) {
    const env = { ...request.env, RUNNER_DEMO_FAIL_ONCE: request.config.fail_once === false ? "0" : "1" };
    return runArgv([process.execPath, agentScript], { ...request, env });
  },
};
