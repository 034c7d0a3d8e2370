// kind = "demo": the built-in deterministic demo agent (src/demo/agent.ts), run with this Node.
import path from "node:path";
import { runArgv } from "./command.js";
import type { Executor } from "./executor.js";
import { packageRoot } from "../../package-files.js";

/** src/demo/agent.ts as built (scripts/bundle.mjs), found from the package root. */
const agentScript = () => path.join(packageRoot(), "dist", "demo-agent.mjs");

export const demoExecutor: Executor = {
  run(request) {
    const env = { ...request.env, RUNNER_DEMO_FAIL_ONCE: request.config.fail_once === false ? "0" : "1" };
    return runArgv([process.execPath, agentScript()], { ...request, env });
  },
};
