// `runner init`: scaffold .runner/ (CONTRACT §2); refuses if it exists.
import { existsSync } from "node:fs";
import { copyFile, mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { serializeTree } from "../../core/canonical.js";
import { LAYOUT, RUNNER_DIR, RUNNER_GITIGNORE } from "../../core/layout.js";
import type { TaskTree } from "../../core/tree.js";
import { RefusalError, UsageError } from "../../errors.js";
import { projectPath } from "../../adapters/project-files.js";
import { schemaFile } from "../../package-files.js";
import type { GlobalArgs } from "../command-table.js";
import { printLine } from "../output.js";

export type ExecutorChoice = "codex" | "claude" | "command" | "demo";

export async function run(argv: GlobalArgs & { goal?: string; maxAttempts: number; executor: ExecutorChoice }): Promise<number> {
  const root = path.resolve(argv.C);
  const files = await scaffoldRunnerDir(root, { goal: argv.goal, maxAttempts: argv.maxAttempts, executor: argv.executor });
  printLine(`initialized ${RUNNER_DIR}/ in ${root}:`);
  for (const file of files) printLine(`  ${file}`);
  printLine("next: describe the goal in .runner/GOAL.md, check .runner/state/config.toml, commit, then `runner start`.");
  return 0;
}

/** Writes the files of CONTRACT §2 into `root/.runner/`; refuses if it exists. Returns the files written. */
export async function scaffoldRunnerDir(
  root: string,
  options: { goal?: string; title?: string; maxAttempts: number; executor: ExecutorChoice; guardCommand?: string[] },
): Promise<string[]> {
  if (!existsSync(root)) throw new UsageError(`The folder ${root} does not exist; create it or pass an existing one with -C.`);
  if (existsSync(path.join(root, RUNNER_DIR))) {
    throw new RefusalError(`${path.join(root, RUNNER_DIR)} already exists; runner init never overwrites it (edit its files, or remove the folder to start over).`);
  }
  const maxAttempts = options.maxAttempts;
  if (!Number.isSafeInteger(maxAttempts) || maxAttempts < 1) {
    throw new UsageError(`--max-attempts must be a whole number of at least 1, not ${String(maxAttempts)}.`);
  }
  const goal = (options.goal ?? "").trim();
  const title = options.title ?? (goal.split("\n")[0]!.slice(0, 120) || "Project goal");
  const tree: TaskTree = {
    version: 1,
    root: { id: "root", order: 0, title, goal, acceptance: [], passes: false, attempts: 0, max_attempts: maxAttempts, children: [] },
  };
  const write = async (relative: string, text: string) => {
    const file = projectPath(root, relative);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, text, { flag: "wx" });
  };
  await write(LAYOUT.gitignore, RUNNER_GITIGNORE);
  await write(LAYOUT.goal, goal ? `# Goal\n\n${goal}\n` : "# Goal\n\nDescribe what the project must achieve. Every iteration's agent reads this file.\n");
  await write(LAYOUT.tree, serializeTree(tree));
  await write(LAYOUT.config, configTemplate(options.executor, options.guardCommand ?? ["just", "ci"]));
  await write(LAYOUT.assumptions, "# Assumptions\n\nAgents append the assumptions they make here.\n");
  await write(LAYOUT.questions, "# Open questions\n\nAgents append questions for humans here; the loop does not wait for answers.\n");
  await copyFile(schemaFile("task_tree"), projectPath(root, LAYOUT.schema));
  return [LAYOUT.goal, LAYOUT.tree, LAYOUT.schema, LAYOUT.config, LAYOUT.assumptions, LAYOUT.questions, LAYOUT.gitignore];
}

// The options of the pinned agents (Codex CLI 0.169.0, Claude Code 2.1.330; docs/agents.md). Every
// commented option is valid when uncommented (test/integration/init-templates.test.ts).
const EXECUTOR_TEMPLATES: Record<ExecutorChoice, string> = {
  codex: `kind = "codex"                   # "command" | "codex" | "claude"
sandbox = "workspace-write"      # read-only | workspace-write | danger-full-access
# model = "gpt-6.1-sol"          # unset: Codex's default model
# profile = "ci"                 # -p ci: $CODEX_HOME/ci.config.toml on top of config.toml
# config_overrides = ["model_reasoning_effort=high"]
# isolation = "clean"            # user (default): your Codex config and saved sessions; clean: --ignore-user-config --ephemeral
# extra_args = []`,
  claude: `kind = "claude"                  # "command" | "codex" | "claude"
permission_mode = "acceptEdits"  # acceptEdits | manual | default | dontAsk | plan | auto | bypassPermissions (as root: needs IS_SANDBOX=1)
# model = "sonnet"               # unset: Claude Code's default model
# allowed_tools = ["Bash(npm test:*)"]  # added to Bash(<guard command>:*), which the runner always allows
# max_turns = 100
# max_budget_usd = 5.0
# isolation = "clean"            # user (default): your settings, MCP servers and saved sessions; clean: project settings only
# extra_args = []`,
  command: `kind = "command"                 # "command" | "codex" | "claude"
command = ["bash", "agent.sh"]   # run in the repository root, the prompt on stdin`,
  demo: `kind = "demo"                    # the built-in deterministic demo agent (no network)`,
};

function configTemplate(executor: ExecutorChoice, guardCommand: string[]): string {
  return `# runner configuration (see the runner's CONTRACT §5). Unknown keys and wrong types are errors.

[executor]
${EXECUTOR_TEMPLATES[executor]}

[guard]
command = ${JSON.stringify(guardCommand).replace(/","/g, '", "')}         # the guard entrypoint, run after an EXECUTE iteration whose agent said done
# protected_paths = ["justfile"] # the agent may not change these (.runner/state/config.toml always is)

[limits]
iteration_timeout_seconds = 1800 # one budget shared by executor and guard
max_iterations = 50              # default for \`runner run\`
output_cap_bytes = 1048576       # per captured stream
`;
}
