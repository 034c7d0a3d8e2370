// The `just` the runner was installed with (the rust-just package, a dependency), put first on the
// PATH of the agent and of the guard: the guard is `just ci` by default, and the agent must be able
// to run it too, whatever the user's PATH holds.
import { existsSync } from "node:fs";
import path from "node:path";
import { packageRoot } from "../package-files.js";

let cached: string | null | undefined;

/**
 * The node_modules/.bin folder holding the `just` launcher of the rust-just package: the nearest
 * node_modules, from the runner's package up, that has rust-just installed; undefined when none has.
 */
export function justBinDir(): string | undefined {
  if (cached !== undefined) return cached ?? undefined;
  cached = null;
  for (let dir = packageRoot(); ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, "node_modules", "rust-just", "lib", "index.mjs"))) {
      cached = path.join(dir, "node_modules", ".bin");
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
