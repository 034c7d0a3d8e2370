// The CLI: parse the command line (src/cli/parse.ts), run one command, and turn what it returns or
// throws into an exit code (src/exit-codes.ts) and, for an error, one sentence on stderr.
import { EXIT, exitCodeOfError } from "../exit-codes.js";
import { packageVersion } from "../package-files.js";
import { printLine, reportError } from "./output.js";
import { parseCommandLine } from "./parse.js";
import { checkWorkFolder } from "./repo.js";

export async function main(argv: string[]): Promise<number> {
  const debug = argv.includes("--debug");
  quietOnClosedPipe();
  try {
    const parsed = parseCommandLine(argv);
    if (parsed.kind === "help") {
      process.stdout.write(parsed.text);
      return EXIT.ok;
    }
    if (parsed.kind === "version") {
      printLine(packageVersion());
      return EXIT.ok;
    }
    checkWorkFolder(parsed.args.C);
    const { run } = await parsed.spec.load();
    return await run(parsed.args);
  } catch (error) {
    reportError(error, debug);
    return exitCodeOfError(error);
  }
}

/**
 * A reader that stops early (`runner status | head -1`) closes the pipe: the command ends quietly, as
 * git and other tools do, instead of dying with a `write EPIPE` stack trace.
 */
function quietOnClosedPipe(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code !== "EPIPE") throw error;
      process.exit(process.exitCode ?? 0);
    });
  }
}
