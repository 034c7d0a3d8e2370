// The CLI: parse, run one command, map errors to exit codes and one-sentence messages (CONTRACT §4).
// Command implementations are imported lazily, and a plain invocation is parsed without yargs
// (src/cli/fast-parse.ts), to keep start-up short; yargs handles help and every usage error.
import { RunnerError } from "../errors.js";
import { COMMANDS, GLOBAL_OPTIONS, type OptionSpec } from "./commands.js";
import { fastParse } from "./fast-parse.js";
import { printError } from "./output.js";
import { importExternal } from "../external-import.js";

export interface GlobalArgs {
  C: string;
  debug: boolean;
}

export async function main(args: string[]): Promise<number> {
  const fast = fastParse(args);
  if (fast) {
    try {
      const { run } = await fast.spec.load();
      return await run(fast.argv as never);
    } catch (error) {
      return reportError(error, fast.argv.debug === true);
    }
  }
  return mainWithYargs(args);
}

function yargsOption(option: OptionSpec) {
  return {
    type: option.type,
    describe: option.describe,
    ...(option.default !== undefined ? { default: option.default } : {}),
    ...(option.choices ? { choices: [...option.choices] } : {}),
    ...(option.type !== "boolean" ? { requiresArg: true } : {}),
  };
}

async function mainWithYargs(args: string[]): Promise<number> {
  const { default: yargs } = await importExternal("yargs", () => import("yargs"));
  let exitCode = 0;
  let hint: string | undefined;
  const debug = args.includes("--debug");
  const parser = yargs(args)
    .scriptName("runner")
    .usage("$0 <command> [options]\n\nDrives an AI coding agent through the task tree in .runner/state/tree.json, one committed iteration at a time.")
    .strict()
    .demandCommand(1, "Name a command")
    .recommendCommands()
    .help()
    .version(false)
    .wrap(Math.min(100, process.stdout.columns || 100))
    .fail((message, error) => {
      // yargs' own complaints (YError) are usage errors; anything else came from a command.
      if (error && error.name !== "YError") throw error;
      // recommendCommands reports its suggestion first, then the error itself.
      if (!error && message?.startsWith("Did you mean")) {
        hint = message;
        return;
      }
      throw new UsageFailure(`${message || error?.message || "Invalid usage"}${hint ? `\n${hint}` : ""}`);
    });
  for (const [name, option] of Object.entries(GLOBAL_OPTIONS)) parser.option(name, yargsOption(option));
  for (const spec of COMMANDS) {
    parser.command(
      spec.command,
      spec.describe,
      (y) => {
        for (const [name, option] of Object.entries(spec.options)) y.option(name, yargsOption(option));
        return y;
      },
      async (argv) => {
        const { run } = await spec.load();
        exitCode = await run(argv as never);
      },
    );
  }
  try {
    await parser.parseAsync();
    return exitCode;
  } catch (error) {
    return reportError(error, debug);
  }
}

class UsageFailure extends Error {}

function reportError(error: unknown, debug: boolean): number {
  if (error instanceof UsageFailure) {
    const lines = error.message.split("\n").map((line) => line.trim()).filter(Boolean);
    const hint = lines.find((line) => line.startsWith("Did you mean"));
    const main = (lines.find((line) => line !== hint) ?? "Invalid usage").replace(/[.:]$/, "");
    printError(`${main}${hint ? ` (${hint[0]!.toLowerCase()}${hint.slice(1).replace(/\?$/, "")}?)` : ""}. See \`runner --help\`.`);
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
