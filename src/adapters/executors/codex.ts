// kind = "codex": OpenAI Codex CLI in non-interactive mode (`codex exec`), as Codex 0.169.0 takes it
// (docs/agents.md, docs/decisions.md):
//   codex exec --json --skip-git-repo-check -C <repo> --sandbox <mode> -c allow_login_shell=false
//              [--ignore-user-config --ephemeral]
//              --output-schema <runner>/schemas/agent_output/v1.agent.json
//              --output-last-message <iteration>/output.json
//              [-m <model>] [-p <profile>] [-c key=value ...] [extra_args ...] -
// `allow_login_shell=false`: Codex runs commands in `bash -lc` by default, and a login shell's
// /etc/profile resets PATH, so the agent would not find `just` for the guard. The isolation flags
// come with isolation = "clean". The prompt goes on stdin (`-`); the JSONL events go to executor.log
// and become the live lines; Codex writes its final message, shaped by the output schema, to
// output.json (an empty file when the turn failed).
import type { ExecutorConfig } from "../../schemas/types.generated.js";
import { agentSchemaFile, isolationOf, runAgentCli } from "./agent-cli.js";
import type { Executor, ExecutorRequest } from "./executor.js";

export const CODEX_DEFAULT_SANDBOX = "workspace-write";

export function codexArgv(config: ExecutorConfig, request: Pick<ExecutorRequest, "root" | "outputFile">): string[] {
  const argv = [
    "codex",
    "exec",
    "--json",
    "--skip-git-repo-check",
    "-C",
    request.root,
    "--sandbox",
    config.sandbox ?? CODEX_DEFAULT_SANDBOX,
    "-c",
    "allow_login_shell=false",
  ];
  if ((config.isolation ?? "user") === "clean") argv.push("--ignore-user-config", "--ephemeral");
  argv.push("--output-schema", agentSchemaFile(), "--output-last-message", request.outputFile);
  if (config.model) argv.push("-m", config.model);
  if (config.profile) argv.push("-p", config.profile);
  for (const override of config.config_overrides ?? []) argv.push("-c", override);
  argv.push(...(config.extra_args ?? []), "-");
  return argv;
}

export const codexExecutor: Executor = {
  async run(request) {
    const result = await runAgentCli("codex", codexArgv(request.config, request), request);
    return { ...result, isolation: isolationOf(request) };
  },
};
