// Files shipped with the runner (schemas, built-in templates), found from this module's location:
// src/ when run from source (tests), dist/ when bundled (dist/runner.cjs and its chunks in dist/chunks/).
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

let cached: string | undefined;

/** The runner package's root folder (the one holding package.json and schemas/). */
export function packageRoot(): string {
  if (cached) return cached;
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, "package.json")) || !existsSync(path.join(dir, "schemas"))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error("cannot find the runner package root");
    dir = parent;
  }
  cached = dir;
  return dir;
}

export function schemaFile(name: "task_tree" | "agent_output" | "config" | "policy"): string {
  return path.join(packageRoot(), "schemas", name, "v1.schema.json");
}

/** The runner's version, from its package.json. */
export function packageVersion(): string {
  return (JSON.parse(readFileSync(path.join(packageRoot(), "package.json"), "utf8")) as { version: string }).version;
}

/**
 * A section of the contract as a sentence cites it for a user: the package ships docs/contract.md
 * (package.json "files"), so the citation names that file where it is installed.
 */
export function contractSection(section: number): string {
  return `docs/contract.md §${section} (${path.join(packageRoot(), "docs", "contract.md")})`;
}

/** The configuration reference the package ships (docs/configuration.md), where it is installed. */
export function configurationDoc(): string {
  return path.join(packageRoot(), "docs", "configuration.md");
}
