// Finding a program the way execvp does (on PATH unless the name holds a slash), before it is
// started behind a containment wrapper: the wrapper would start fine and only its exec of the
// program would fail, so "not found" and "not executable" are checked here to report them as
// clearly as a direct spawn does.
import { accessSync, constants, statSync } from "node:fs";
import path from "node:path";

/** What execvp uses when PATH is not set (glibc's confstr(_CS_PATH)). */
const DEFAULT_PATH = "/bin:/usr/bin";

/** Undefined when `program` can be executed; else the errno a direct spawn would have met. */
export function programProblem(program: string, env: Record<string, string>, cwd: string): "ENOENT" | "EACCES" | undefined {
  if (program.includes("/")) return fileProblem(path.resolve(cwd, program));
  let problem: "ENOENT" | "EACCES" = "ENOENT";
  for (const dir of (env.PATH ?? DEFAULT_PATH).split(":")) {
    // An empty entry means the current directory, as for execvp.
    const found = fileProblem(path.resolve(cwd, dir === "" ? "." : dir, program));
    if (found === undefined) return undefined;
    // execvp goes on after a file it may not execute, and reports EACCES if nothing else is found.
    if (found === "EACCES") problem = "EACCES";
  }
  return problem;
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
