// What commands print: results on stdout, refusals and errors as one sentence on stderr.
import { bugSentence, errorMessage, isBug } from "../errors.js";

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

export function printLine(line = ""): void {
  process.stdout.write(`${line}\n`);
}

/** Text printed exactly as it is (a file's bytes as text: no newline added). */
export function printText(text: string): void {
  process.stdout.write(text);
}

export function printError(line: string): void {
  process.stderr.write(`${line}\n`);
}

/** One sentence on stderr (a bug says so), the stack trace only with --debug. */
export function reportError(error: unknown, debug: boolean): void {
  if (isBug(error)) printError(bugSentence(error));
  else printError(errorMessage(error));
  if (debug && error instanceof Error && error.stack) printError(error.stack);
}
