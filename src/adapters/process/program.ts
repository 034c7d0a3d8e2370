// The guard's program, as the iteration found it before the agent ran: where PATH leads, and the
// file's identity (device, inode, size, modification and change times — the change time cannot be
// set back by a process). If the file is not the same when the guard is to run, the agent changed
// the program that judges it.
import { statSync } from "node:fs";
import type { ProgramIdentity } from "../../core/step/step-facts.js";
import { lookupProgram } from "./program-path.js";

/** The file execvp would run for `program` (on PATH unless it holds a slash, relative to `cwd`), and its identity. */
export function identifyProgram(program: string, env: Record<string, string>, cwd: string): ProgramIdentity {
  return identifyFile(lookupProgram(program, env, cwd).file);
}

/** A program's file as found (by the preflight), and its identity. */
export function identifyFile(file: string | undefined): ProgramIdentity {
  const signature = file === undefined ? undefined : signatureOf(file);
  return signature === undefined ? { file: undefined, signature: undefined } : { file, signature };
}

export function signatureOf(file: string): string | undefined {
  try {
    const info = statSync(file);
    if (!info.isFile()) return undefined;
    return `${info.dev}:${info.ino}:${info.size}:${info.mtimeMs}:${info.ctimeMs}:${info.mode}`;
  } catch {
    return undefined;
  }
}
