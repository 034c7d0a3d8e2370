// The CLI: parse with yargs, run one command, map errors to exit codes and one-sentence messages
// (CONTRACT §4). Command implementations are imported lazily to keep start-up short.
import yargs, { type Argv } from "yargs";
import { RunnerError } from "../errors.js";
import { printError } from "./output.js";

export interface GlobalArgs {
  C: string;
  debug: boolean;
}

// Each command module types its own argv; yargs has checked the options against the builder.
type Handler = (argv: never) => Promise<number>;

interface CommandSpec {
  command: string;
  describe: string;
  builder?: (y: Argv) => Argv;
  load: () => Promise<{ run: Handler }>;
}

const commands: CommandSpec[] = [
  {
    command: "init",
    describe: "Scaffold .runner/ in this repository (refuses if it exists)",
    builder: (y) =>
      y
        .option("goal", { type: "string", describe: "The project goal (written to .runner/GOAL.md and the root node)" })
        .option("max-attempts", { type: "number", describe: "max_attempts of the root node", default: 3 })
        .option("executor", { choices: ["codex", "claude", "command", "demo"], default: "codex", describe: "The agent the config starts with" }),
    load: () => import("./commands/init.js"),
  },
  {
    command: "validate",
    describe: "Check the tree, the config and node policies; every problem with its JSON path",
    builder: (y) => y.option("json", { type: "boolean", default: false, describe: "Print one JSON document" }),
    load: () => import("./commands/validate.js"),
  },
  {
    command: "next",
    describe: "The leaf `runner step` would select, with its path from the root",
    builder: (y) => y.option("json", { type: "boolean", default: false, describe: "Print one JSON document" }),
    load: () => import("./commands/next.js"),
  },
  {
    command: "status",
    describe: "The tree with passes and attempts, the next leaf, the run and its iteration count",
    builder: (y) =>
      y
        .option("json", { type: "boolean", default: false, describe: "Print one JSON document" })
        .option("run-id", { type: "string", describe: "The run (default: from the runner/<id> branch)" }),
    load: () => import("./commands/status.js"),
  },
  {
    command: "start",
    describe: "Create and check out the run branch runner/<id> (clean working tree required)",
    builder: (y) => y.option("run-id", { type: "string", describe: "The run id (default: the UTC time as YYYYMMDD-HHMMSS)" }),
    load: () => import("./commands/start.js"),
  },
  {
    command: "step",
    describe: "One iteration: select, run the agent, guard, update, commit",
    builder: (y) =>
      y
        .option("run-id", { type: "string", describe: "The run (default: from the runner/<id> branch)" })
        .option("json", { type: "boolean", default: false, describe: "Print one JSON document" }),
    load: () => import("./commands/step.js"),
  },
  {
    command: "run",
    describe: "Step until the root passes, a stop condition, or an error",
    builder: (y) =>
      y
        .option("max-iterations", { type: "number", describe: "Iterations this run may take (default: [limits] max_iterations)" })
        .option("halt-on-stuck", { type: "boolean", default: false, describe: "Stop (exit 3) when the next leaf is stuck instead of asking to decompose it" })
        .option("json", { type: "boolean", default: false, describe: "Stream one JSON event object per line" })
        .option("run-id", { type: "string", describe: "The run (default: from the runner/<id> branch)" }),
    load: () => import("./commands/run.js"),
  },
  {
    command: "log",
    describe: "The iterations of the current run",
    builder: (y) =>
      y
        .option("json", { type: "boolean", default: false, describe: "Print one JSON document" })
        .option("run-id", { type: "string", describe: "The run (default: from the runner/<id> branch)" })
        .option("iteration", { type: "number", describe: "Show one iteration" })
        .option("diagram", { type: "boolean", default: false, describe: "With --iteration: the machine diagram with the path that iteration took highlighted" })
        .option("format", { choices: ["dot", "svg"], default: "dot", describe: "Diagram format" })
        .option("output", { type: "string", describe: "Write the diagram to this file instead of stdout" }),
    load: () => import("./commands/log.js"),
  },
  {
    command: "diagram",
    describe: "The iteration machine as a diagram, generated from the machine itself",
    builder: (y) =>
      y
        .option("format", { choices: ["mermaid", "dot", "json", "svg"], default: "mermaid", describe: "Output format" })
        .option("output", { type: "string", describe: "Write to this file instead of stdout" }),
    load: () => import("./commands/diagram.js"),
  },
  {
    command: "audit",
    describe: "Replay the current run's commits and check every transition against the rules",
    builder: (y) =>
      y
        .option("json", { type: "boolean", default: false, describe: "Print one JSON document" })
        .option("run-id", { type: "string", describe: "The run (default: from the runner/<id> branch)" }),
    load: () => import("./commands/audit.js"),
  },
  {
    command: "demo",
    describe: "Run the whole loop on a throw-away repository with the built-in demo agent (no network)",
    builder: (y) =>
      y
        .option("dir", { type: "string", describe: "Create the demo repository here (default: a new temp folder)" })
        .option("json", { type: "boolean", default: false, describe: "Stream one JSON event object per line" }),
    load: () => import("./commands/demo.js"),
  },
];

export async function main(args: string[]): Promise<number> {
  let exitCode = 0;
  let debug = args.includes("--debug");
  const parser = yargs(args)
    .scriptName("runner")
    .usage("$0 <command> [options]\n\nDrives an AI coding agent through the task tree in .runner/state/tree.json, one committed iteration at a time.")
    .option("C", { type: "string", default: ".", describe: "Work in this folder instead of the current one", requiresArg: true })
    .option("debug", { type: "boolean", default: false, describe: "Show stack traces of errors" })
    .strict()
    .demandCommand(1, "Name a command; `runner --help` lists them.")
    .recommendCommands()
    .help()
    .version(false)
    .wrap(Math.min(100, process.stdout.columns ?? 100))
    .fail((message, error) => {
      throw error ?? new UsageFailure(message);
    });
  for (const spec of commands) {
    parser.command(
      spec.command,
      spec.describe,
      spec.builder ?? ((y: Argv) => y),
      async (argv) => {
        const { run } = await spec.load();
        exitCode = await run(argv as never);
      },
    );
  }
  try {
    const argv = await parser.parseAsync();
    debug = Boolean(argv.debug);
    return exitCode;
  } catch (error) {
    return reportError(error, debug);
  }
}

class UsageFailure extends Error {}

function reportError(error: unknown, debug: boolean): number {
  if (error instanceof UsageFailure) {
    const sentence = error.message.split("\n")[0]!.trim().replace(/[.:]?$/, ".");
    printError(`${sentence} See \`runner --help\`.`);
    return 1;
  }
  if (error instanceof RunnerError) {
    printError(error.message);
    if (debug && error.stack) printError(error.stack);
    return error.exitCode;
  }
  const message = error instanceof Error ? error.message : String(error);
  printError(`Internal error: ${message}. This is a bug in the runner; rerun with --debug for the stack trace.`);
  if (debug && error instanceof Error && error.stack) printError(error.stack);
  return 2;
}
