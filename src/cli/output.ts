// What commands print: results on stdout, refusals and errors as one sentence on stderr.

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
