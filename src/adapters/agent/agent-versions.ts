// Every agent the runner speaks (src/agents/registry.ts), looked for on this machine for `runner
// doctor`: the program found on PATH, the version it states (`<program> --version`, run from a
// temporary folder with a time limit, all agents at once) and whether the runner's tests drive that
// version. An agent that is not installed is no problem; only the configured one must be there (the
// preflight says so).
import { execFile } from "node:child_process";
import os from "node:os";
import { agentVersion, type AgentDefinition } from "../../agents/agent.js";
import { AGENTS } from "../../agents/registry.js";
import { oneLine } from "../../core/base/text-limits.js";
import { lookupProgram } from "../process/program-path.js";

const VERSION_TIMEOUT_MS = 10_000;

export interface InstalledAgent {
  agent: AgentDefinition;
  /** The program's file, or undefined when it is not on PATH. */
  file: string | undefined;
  /** The version it states, or undefined (not found, or its version command failed: `problem`). */
  version: string | undefined;
  /** Why no version could be read from a program that is there. */
  problem?: string;
  /** Its credential variables that are set (names only; it may also have a login of its own). */
  authSet: string[];
}

/** Looks for every agent of the registry; `env` gives PATH. */
export function installedAgents(env: Record<string, string>): Promise<InstalledAgent[]> {
  const cwd = os.tmpdir();
  return Promise.all(
    AGENTS.map(async (agent): Promise<InstalledAgent> => {
      const { file } = lookupProgram(agent.program, env, cwd);
      const authSet = agent.authEnv.filter((name) => (env[name] ?? "") !== "");
      if (file === undefined) return { agent, file, version: undefined, authSet };
      const said = await run(file, [...agent.version.args], env, cwd);
      if ("error" in said) return { agent, file, version: undefined, problem: said.error, authSet };
      const version = agentVersion(agent, said.output);
      const problem = `\`${agent.program} ${agent.version.args.join(" ")}\` said no version: ${oneLine(said.output, 120) || "nothing"}`;
      return { agent, file, version, ...(version === undefined ? { problem } : {}), authSet };
    }),
  );
}

function run(file: string, args: string[], env: Record<string, string>, cwd: string): Promise<{ output: string } | { error: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { env, cwd, timeout: VERSION_TIMEOUT_MS, encoding: "utf8", maxBuffer: 64 * 1024 }, (error, stdout, stderr) => {
      if (!error) return resolve({ output: `${stdout}\n${stderr}`.trim() });
      const why = error.killed ? `did not answer within ${VERSION_TIMEOUT_MS / 1000} s` : oneLine(stderr || error.message, 200);
      resolve({ error: `its version command failed (${why})` });
    });
  });
}
