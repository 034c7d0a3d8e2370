// The core modules the in-process benchmarks call, from the build under test: built as tsc's
// separate files (builds before the single bundle had dist/src/core/), or else bundled here from
// that checkout's sources (the shipped bundle holds only the CLI).
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { DIST, RUNNER_ROOT } from "./common.mjs";

let loaded;

export async function coreModules() {
  loaded ??= load();
  return loaded;
}

async function load() {
  const legacy = path.join(DIST, "src", "core");
  if (existsSync(path.join(legacy, "select.js"))) {
    const from = (name) => import(pathToFileURL(path.join(legacy, name)).href);
    const [select, invariants, update, canonical] = await Promise.all([
      from("select.js"),
      from("invariants.js"),
      from("state-update.js"),
      from("canonical.js"),
    ]);
    return { ...select, ...invariants, ...canonical, applyStateUpdates: update.applyStateUpdatesInPlace ?? update.applyStateUpdates };
  }
  // Inside the checkout's node_modules: the generated validators require ajv's helpers from there.
  const dir = path.join(RUNNER_ROOT, "node_modules", ".cache", "runner-bench");
  mkdirSync(dir, { recursive: true });
  const entry = path.join(dir, "entry.ts");
  const core = path.join(RUNNER_ROOT, "src", "core");
  writeFileSync(
    entry,
    ["select.js", "invariants.js", "state-update.js", "serialize.js"]
      .map((name) => `export * from ${JSON.stringify(sourceFile(core, name.replace(/\.js$/, ".ts")))};`)
      .join("\n"),
  );
  const { build } = await import("rolldown");
  const file = path.join(dir, "core.mjs");
  await build({ input: entry, platform: "node", logLevel: "silent", output: { file, format: "esm", codeSplitting: false } });
  return import(pathToFileURL(file).href);
}

/**
 * Modules of `src/<folder>/` of the checkout under test, bundled here into one ESM file (the shipped
 * bundle holds only the CLI); `pick` maps the module's exports to what the caller needs; `external`: packages
 * left to node_modules.
 */
export async function sourceModules(folder, files, pick, { external = [] } = {}) {
  const dir = path.join(RUNNER_ROOT, "node_modules", ".cache", "runner-bench");
  mkdirSync(dir, { recursive: true });
  const name = `${folder}-${files.map((file) => file.replace(/\.ts$/, "")).join("-")}`.replaceAll("/", "-");
  const entry = path.join(dir, `${name}.ts`);
  writeFileSync(entry, files.map((file) => `export * from ${JSON.stringify(sourceFile(path.join(RUNNER_ROOT, "src", folder), file))};`).join("\n"));
  const { build } = await import("rolldown");
  const file = path.join(dir, `${name}.mjs`);
  await build({ input: entry, platform: "node", logLevel: "silent", external, output: { file, format: "esm", codeSplitting: false } });
  return pick(await import(pathToFileURL(file).href));
}

/**
 * `file` in `folder` of the checkout under test, or in a folder below it: the sources were grouped
 * by concept (src/core/tree/, src/adapters/git/, …), and a bench compares checkouts of before and after.
 */
export function sourceFile(folder, file) {
  const direct = path.join(folder, file);
  if (existsSync(direct)) return direct;
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const below = path.join(folder, entry.name, file);
    if (existsSync(below)) return below;
  }
  throw new Error(`${file} is in no folder of ${folder}`);
}
