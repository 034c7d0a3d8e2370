// The guard's program, as the iteration found it before the agent ran: where PATH leads, and the
// file's identity (device, inode, size, modification and change times — the change time cannot be
// set back by a process). If the file is not the same when the guard is to run, the agent changed
// the program that judges it.
import { statSync } from "node:fs";
import path from "node:path";

import type { ProgramIdentity } from "../core/step-facts.js";

/** Finds `program` as the shell would (a path with a slash is relative to `cwd`), and its identity. */
export function identifyProgram(program: string, cwd: string, pathVariable: string | undefined): ProgramIdentity {
  const candidates = program.includes("/") ? [path.resolve(cwd, program)] : (pathVariable ?? "").split(path.delimiter).filter(Boolean).map((dir) => path.resolve(cwd, dir, program));
  for (const file of candidates) {
    const signature = signatureOf(file);
    if (signature !== undefined) return { file, signature };
  }
  return { file: undefined, signature: undefined };
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
