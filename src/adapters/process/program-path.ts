// Finding a program the way execvp does (on PATH unless the name holds a slash), before it is
// started behind a containment wrapper: the wrapper would start fine and only its exec of the
// program would fail, so "not found" and "not executable" are checked here to report them as
// clearly as a direct spawn does.
import { accessSync, closeSync, constants, openSync, readSync, statSync } from "node:fs";
import path from "node:path";

/** What execvp uses when PATH is not set (glibc's confstr(_CS_PATH)). */
const DEFAULT_PATH = "/bin:/usr/bin";

/** Where execvp leads for `program`: the file it would run, or the errno a direct spawn would meet. */
export type ProgramLookup = { file: string; problem?: undefined } | { file?: undefined; problem: "ENOENT" | "EACCES" };

/** Finds `program` as execvp does (on PATH unless the name holds a slash, relative to `cwd`), in one walk of PATH. */
export function lookupProgram(program: string, env: Record<string, string>, cwd: string): ProgramLookup {
  if (program.includes("/")) {
    const file = path.resolve(cwd, program);
    const problem = fileProblem(file);
    return problem === undefined ? { file } : { problem };
  }
  let problem: "ENOENT" | "EACCES" = "ENOENT";
  for (const dir of (env.PATH ?? DEFAULT_PATH).split(":")) {
    // An empty entry means the current directory, as for execvp.
    const file = path.resolve(cwd, dir === "" ? "." : dir, program);
    const found = fileProblem(file);
    if (found === undefined) return { file };
    // execvp goes on after a file it may not execute, and reports EACCES if nothing else is found.
    if (found === "EACCES") problem = "EACCES";
  }
  return { problem };
}

/**
 * A script's interpreter (its `#!` line) that cannot be executed: the kernel then refuses the
 * script with ENOENT, which a shell reports as the script itself "not found". Undefined when the
 * file is no script or its interpreter is there (`#!/usr/bin/env x`: env is checked, not x).
 */
export function interpreterProblem(file: string): string | undefined {
  let head = "";
  try {
    const fd = openSync(file, "r");
    try {
      const buffer = Buffer.alloc(256);
      head = buffer.subarray(0, readSync(fd, buffer, 0, 256, 0)).toString("latin1");
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
  if (!head.startsWith("#!")) return undefined;
  const interpreter = head.slice(2).split("\n")[0]!.trim().split(/\s+/)[0] ?? "";
  if (!interpreter.startsWith("/")) return undefined;
  return fileProblem(interpreter) === undefined ? undefined : interpreter;
}

function fileProblem(file: string): "ENOENT" | "EACCES" | undefined {
  try {
    if (!statSync(file).isFile()) return "EACCES";
    accessSync(file, constants.X_OK);
    return undefined;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EACCES" ? "EACCES" : "ENOENT";
  }
}

/** The absolute path of a system tool on the runner's own PATH or in the usual folders, if there is one. */
export function systemTool(name: string): string | undefined {
  const dirs = [...(process.env.PATH ?? "").split(":").filter((dir) => dir.startsWith("/")), "/usr/bin", "/bin", "/usr/sbin", "/sbin"];
  for (const dir of dirs) {
    const file = path.join(dir, name);
    if (fileProblem(file) === undefined) return file;
  }
  return undefined;
}
