// `runner init`: scaffold .runner/ (CONTRACT §2, docs/contract.md) at the top of a git repository;
// refuses if it exists, and anywhere but a repository's top folder.
import { existsSync, realpathSync } from "node:fs";
import { copyFile, mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { AGENTS, agentFor } from "../../agents/registry.js";
import { serializeTree } from "../../core/tree/canonical.js";
import { LAYOUT, RUNNER_DIR, RUNNER_GITIGNORE } from "../../core/base/layout.js";
import { PlanEditError } from "../../core/edit/plan-edit.js";
import { formatFinished } from "../../core/plan/plan-finished.js";
import { doneSection, importPlan, type ImportedPlan } from "../../core/plan/plan-import.js";
import { countNodes, goalMarkdown, goalTree, type TaskTree } from "../../core/tree/tree.js";
import { RefusalError, UsageError } from "../../errors.js";
import { GitRepo } from "../../adapters/git/git.js";
import { guardDefinitionSummary } from "../../adapters/guard/guard-definition.js";
import { projectPath } from "../../adapters/files/project-files.js";
import { readPlanFile, refuseOversizedTree } from "../../adapters/files/plan-file.js";
import { DEFAULT_GUARD_COMMAND } from "../../core/config/config.js";
import { schemaFile } from "../../package-files.js";
import type { GlobalArgs } from "../command-table.js";
import { printLine } from "../output.js";

/** What `init --executor` takes (src/cli/commands.ts): every agent of src/agents/registry.ts, the bare command, the demo agent. */
export type ExecutorChoice = string;

export async function run(
  argv: GlobalArgs & { goal?: string; maxAttempts: number; executor: ExecutorChoice; plan?: string; skipDone?: boolean; tag?: string },
): Promise<number> {
  const root = path.resolve(argv.C);
  if (argv.plan === undefined && (argv.skipDone || argv.tag !== undefined))
    throw new UsageError(`--${argv.skipDone ? "skip-done" : "tag"} goes with --plan FILE; give the plan, or leave it out.`);
  await requireRepositoryTop(root);
  const plan = argv.plan === undefined ? undefined : await readPlan(argv.plan, argv);
  const tree = plan?.tree;
  const goal = tree ? tree.root.goal || tree.root.title : argv.goal;
  const files = await scaffoldRunnerDir(root, {
    goal,
    maxAttempts: argv.maxAttempts,
    executor: argv.executor,
    ...(plan ? { tree: plan.tree, finished: plan.finished, goalDocument: `${goalMarkdown(goal ?? "")}${doneSection(plan.done)}` } : {}),
  });
  if (plan) {
    printLine(
      `imported ${countNodes(plan.tree) - 1} nodes from ${argv.plan}${plan.tag !== undefined ? ` (tag ${plan.tag})` : ""} under the root "${plan.tree.root.title}".`,
    );
    if (plan.finished.length > 0)
      printLine(
        `${plan.finished.length} of its leaves are finished in the plan (${LAYOUT.finished}): the guard alone judges them first, one guard run for all of them when it is green.`,
      );
    if (plan.done.length > 0) printLine(`left out ${plan.done.length} finished items (--skip-done); ${LAYOUT.goal} lists them as work already done.`);
  }
  printLine(`initialized ${RUNNER_DIR}/ in ${root}:`);
  for (const file of files) printLine(`  ${file}`);
  const summary = await guardDefinitionSummary(new GitRepo(root), DEFAULT_GUARD_COMMAND).catch(() => undefined);
  printLine(
    summary === undefined
      ? `the guard \`${DEFAULT_GUARD_COMMAND.join(" ")}\` is protected by its definition (its files and package.json scripts), read from each iteration's starting commit.`
      : `the guard \`${DEFAULT_GUARD_COMMAND.join(" ")}\` is protected by: ${summary} (as committed now; the agent's changes to them are taken back).`,
  );
  printLine("next: describe the goal in .runner/GOAL.md, check .runner/state/config.toml, commit, then `runner start`.");
  return 0;
}

/**
 * The tree of a plan file (Markdown, ralph's prd.json, task-master's tasks.json); one sentence for
 * what cannot be mapped, and for a tree over the size every later command reads (refused before
 * anything is written).
 */
async function readPlan(
  file: string,
  argv: { maxAttempts: number; goal?: string; skipDone?: boolean; tag?: string },
): Promise<ImportedPlan & { tree: TaskTree }> {
  const { name, bytes, options } = await readPlanFile(path.resolve(file), `--plan ${file}`, argv);
  try {
    const plan = importPlan(name, bytes, { ...options, maxAttempts: argv.maxAttempts });
    refuseOversizedTree(name, serializeTree(plan.tree));
    return plan;
  } catch (error) {
    if (error instanceof PlanEditError) throw new RefusalError(`${error.message.replace(/\.$/, "")}; nothing was written.`);
    throw error;
  }
}

/** `.runner/` belongs at the top of a git repository: a subfolder would get a second one, and no repository none. */
async function requireRepositoryTop(folder: string): Promise<void> {
  const top = await new GitRepo(folder).topLevel();
  if (top === undefined)
    throw new RefusalError(
      `${folder} is not in a git repository; run \`git init\` there first (the runner commits every iteration), then \`runner init\`.`,
    );
  if (realpathSync(top) !== realpathSync(folder)) {
    throw new RefusalError(`${folder} is inside the git repository whose top folder is ${top}; run \`runner init\` there (or pass -C ${top}).`);
  }
}

/** Writes the files of CONTRACT §2 into `root/.runner/`; refuses if it exists. Returns the files written. */
export async function scaffoldRunnerDir(
  root: string,
  options: {
    goal?: string;
    title?: string;
    maxAttempts: number;
    executor: ExecutorChoice;
    guardCommand?: string[];
    tree?: TaskTree;
    /** Leaves an imported plan marks finished (.runner/state/finished.json). */
    finished?: readonly string[];
    /** GOAL.md's whole text, when the caller made it. */
    goalDocument?: string;
  },
): Promise<string[]> {
  if (!existsSync(root)) throw new UsageError(`The folder ${root} does not exist; create it or pass an existing one with -C.`);
  if (existsSync(path.join(root, RUNNER_DIR))) {
    throw new RefusalError(
      `${path.join(root, RUNNER_DIR)} already exists; runner init never overwrites it (edit its files, or remove the folder to start over).`,
    );
  }
  const maxAttempts = options.maxAttempts;
  if (!Number.isSafeInteger(maxAttempts) || maxAttempts < 1) {
    throw new UsageError(`--max-attempts must be a whole number of at least 1, not ${String(maxAttempts)}.`);
  }
  const goal = (options.goal ?? "").trim();
  const tree: TaskTree = options.tree ?? goalTree(goal, maxAttempts, options.title);
  const write = async (relative: string, text: string) => {
    const file = projectPath(root, relative);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, text, { flag: "wx" });
  };
  await write(LAYOUT.gitignore, RUNNER_GITIGNORE);
  await write(
    LAYOUT.goal,
    options.goalDocument ??
      (goal ? goalMarkdown(goal) : "# Goal\n\nDescribe what the project must achieve. Every iteration's agent reads this file.\n"),
  );
  await write(LAYOUT.tree, serializeTree(tree));
  const finished = options.finished ?? [];
  if (finished.length > 0) await write(LAYOUT.finished, formatFinished(finished));
  await write(LAYOUT.config, configTemplate(options.executor, options.guardCommand ?? DEFAULT_GUARD_COMMAND));
  await write(LAYOUT.assumptions, "# Assumptions\n\nAgents append the assumptions they make here.\n");
  await write(LAYOUT.questions, "# Open questions\n\nAgents append questions for humans here; the loop does not wait for answers.\n");
  await copyFile(schemaFile("task_tree"), projectPath(root, LAYOUT.schema));
  return [
    LAYOUT.goal,
    LAYOUT.tree,
    ...(finished.length > 0 ? [LAYOUT.finished] : []),
    LAYOUT.schema,
    LAYOUT.config,
    LAYOUT.assumptions,
    LAYOUT.questions,
    LAYOUT.gitignore,
  ];
}

// The [executor] table of each choice. An agent's options are its module's `template` (the pinned
// versions, docs/agents.md). Every commented option is valid when uncommented
// (test/integration/init-templates.test.ts).
function executorTemplate(choice: ExecutorChoice): string {
  const kinds = ["command", ...AGENTS.map((agent) => agent.kind)].map((kind) => `"${kind}"`).join(" | ");
  const kindLine = (comment: string) => `${`kind = "${choice}"`.padEnd(32)} # ${comment}`;
  if (choice === "demo") return kindLine("the built-in deterministic demo agent (no network)");
  if (choice === "command") return `${kindLine(kinds)}\ncommand = ["bash", "agent.sh"]   # run in the repository root, the prompt on stdin`;
  return `${kindLine(kinds)}\n${agentFor(choice).template}`;
}

function configTemplate(executor: ExecutorChoice, guardCommand: string[]): string {
  return `# runner configuration: every key is described in the runner's docs/configuration.md (also in its
# npm package). Unknown keys and wrong types are errors; \`runner validate\` and \`runner doctor\` check it.

[executor]
${executorTemplate(executor)}

[guard]
command = ${JSON.stringify(guardCommand).replace(/","/g, '", "')}         # the guard entrypoint, run after an EXECUTE iteration whose agent said done
# protected_paths = ["justfile"] # the agent may not change these (.runner/state/config.toml always is)

[limits]
iteration_timeout_seconds = 1800 # one budget shared by executor and guard
max_iterations = 50              # default for \`runner run\`
output_cap_bytes = 1048576       # per captured stream
# max_stalled_iterations = 3     # \`runner run\` stops after this many iterations in a row that change nothing (0: never)
# max_consecutive_runner_errors = 3  # errors a retry can cure (a crash, bad output) retried until this many in a row
# retry_backoff_seconds = 30     # the first wait before such a retry (it doubles)
# max_limit_wait_seconds = 21600 # the longest wait for an agent's rate or usage limit to reset
# max_run_seconds = 28800        # budgets of one \`runner run\`: time, tokens, cost (USD)
# max_run_tokens = 5000000
# max_run_cost_usd = 20.0

# Commands \`runner run\` starts on its events, each given the event as one JSON line on stdin.
# [hooks]
# on_run_end = ["sh", "-c", "jq -r .reason | curl -s -d @- https://ntfy.sh/my-runner-topic"]
# on_stuck = ["notify-send", "runner: a leaf is stuck"]
# on_iteration = ["sh", "-c", "cat >> /tmp/runner-events.jsonl"]
# timeout_seconds = 30
# bell = true                    # ring the terminal bell when the run ends or a leaf is stuck
`;
}
