// kind = "codex": OpenAI Codex CLI in non-interactive mode (`codex exec`). Flags as documented in
// the Codex CLI reference (developers.openai.com/codex/cli/reference; see docs/decisions.md):
//   codex exec --json --skip-git-repo-check -C <repo> --sandbox <mode>
//              --output-schema <runner>/schemas/agent_output/v1.schema.json
//              --output-last-message <iteration>/output.json
//              [-m <model>] [-p <profile>] [-c key=value ...] [extra_args ...] -
// The prompt goes on stdin (`-`); the JSONL events go to executor.log; Codex writes its final
// message, shaped by the output schema, to output.json.
import type { ExecutorConfig } from "../../schemas/types.generated.js";
import { schemaFile } from "../../package-files.js";
import { runArgv } from "./command.js";
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
    "--output-schema",
    schemaFile("agent_output"),
    "--output-last-message",
    request.outputFile,
  ];
  if (config.model) argv.push("-m", config.model);
  if (config.profile) argv.push("-p", config.profile);
  for (const override of config.config_overrides ?? []) argv.push("-c", override);
  argv.push(...(config.extra_args ?? []), "-");
  return argv;
}

export const codexExecutor: Executor = {
  run(request) {
    return runArgv(codexArgv(request.config, request), request);
  },
};
