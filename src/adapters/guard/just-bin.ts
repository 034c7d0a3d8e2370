// The `just` the runner was installed with (the rust-just package, a dependency), put first on the
// PATH of the agent and of the guard: the guard is `just ci` by default, and the agent must be able
// to run it too, whatever the user's PATH holds. The folder is the platform package's bin/ (the
// native binary alone, so nothing else of node_modules comes onto the PATH), else, when that cannot
// be found, the node_modules/.bin holding rust-just's launcher.
import { existsSync } from "node:fs";
import { arch, platform } from "node:os";
import path from "node:path";
import { packageRoot } from "../../package-files.js";

let cached: string | null | undefined;

/** rust-just's platform package name and binary, as its launcher (rust-just/lib/index.mjs) picks them. */
function platformBinary(): { pkg: string; file: string } {
  const windows = platform() === "win32" || platform() === "cygwin";
  return { pkg: `rust-just-${windows ? "windows" : platform()}-${arch()}`, file: windows ? "just.exe" : "just" };
}

/** The folder holding the runner's `just`, from the nearest node_modules (the runner's package up) that has rust-just; undefined when none has. */
export function justBinDir(): string | undefined {
  if (cached !== undefined) return cached ?? undefined;
  cached = null;
  const { pkg, file } = platformBinary();
  for (let dir = packageRoot(); ; dir = path.dirname(dir)) {
    const modules = path.join(dir, "node_modules");
    if (existsSync(path.join(modules, "rust-just", "lib", "index.mjs"))) {
      const native = path.join(modules, pkg, "bin");
      cached = existsSync(path.join(native, file)) ? native : path.join(modules, ".bin");
      break;
    }
    if (path.dirname(dir) === dir) break;
  }
  return cached ?? undefined;
}

/** `env` with the runner's `just` folder first on PATH (once); unchanged when there is none. */
export function withRunnerJust(env: Record<string, string>): Record<string, string> {
  const dir = justBinDir();
  if (dir === undefined) return env;
  const rest = (env.PATH ?? "").split(path.delimiter).filter((entry) => entry !== "" && entry !== dir);
  return { ...env, PATH: [dir, ...rest].join(path.delimiter) };
}
