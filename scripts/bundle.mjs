// Builds what ships: the CLI bundled from the TypeScript sources into CommonJS, dist/runner.cjs and
// its chunks in dist/chunks/ (and dist/audit-thread.cjs, the program of `runner report`'s audit
// thread), which dist/load.mjs loads with V8's code cache (src/load-bundle.ts; bin/runner.js imports
// it); and the demo agent into dist/demo-agent.mjs. A few bundled files instead of about a hundred:
// Node's module loader resolves, reads and links each file of an import graph on its own, which cost
// about 100 ms per process on the `runner step` path (docs/performance.md). CommonJS because a file
// compiled as a `node:vm` script can start from V8's cached data, which Node 20 keeps for no ES
// module (docs/decisions.md). tsc only type-checks; nothing else is emitted.
//
// Left out of the bundle: @hpcc-js/wasm-graphviz (SVG only, with its WebAssembly), imported from
// node_modules when a diagram is rendered as SVG; ajv's small runtime helpers, which the generated
// validators require from node_modules; and terminal-kit (`runner watch` alone), which requires its
// own modules by computed names that a bundle cannot follow. The MCP SDK and zod (dev dependencies)
// are bundled into `runner mcp`'s chunk alone, and their licences copied to dist/licenses/ (a user
// installs no MCP package: the SDK's own dependencies are an HTTP server stack `runner mcp` never
// loads).
import { build } from "rolldown";
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const dist = path.join(root, "dist");
rmSync(dist, { recursive: true, force: true });

/**
 * The chunk a module of the step's code goes to: the modules its command and the modules that command
 * imports when it runs import, statically, less those of the entry and of `runner next` (which stay
 * where they were, small), are "step" — unless the morning's commands or the audit's thread import
 * them too, then "step-shared", so that a report (twice: its thread's and its own) does not load the
 * step's whole code. Anything else: null (rolldown's own chunks).
 */
let stepGroups;
function stepGroup(id, context) {
  if (stepGroups === undefined) {
    const reach = (files) => {
      const seen = new Set();
      const visit = (module) => {
        if (seen.has(module)) return;
        seen.add(module);
        for (const next of context.getModuleInfo(module)?.importedIds ?? []) visit(next);
      };
      for (const file of files) visit(path.join(root, ...file.split("/")));
      return seen;
    };
    const first = reach(["src/cli/main.ts", "src/cli/commands/next.ts"]);
    // (the command's own module stays a chunk of its own, which imports the step's code when it runs)
    first.add(path.join(root, "src", "cli", "commands", "step.ts"));
    const morning = reach([
      ...["status", "log", "runs", "audit", "report"].map((command) => `src/cli/commands/${command}.ts`),
      "src/adapters/audit/audit-thread.ts",
    ]);
    stepGroups = new Map();
    for (const module of reach(["src/cli/commands/step.ts", "src/step/run-step.ts", "src/cli/progress.ts", "src/cli/run-facts.ts"]))
      if (!first.has(module)) stepGroups.set(module, morning.has(module) ? "step-shared" : "step");
    if (stepGroups.size < 50) throw new Error(`bundle: the step's groups found only ${stepGroups.size} modules (a file moved?)`);
  }
  return stepGroups.get(id) ?? null;
}

const common = {
  platform: "node",
  // A chunk may import what it shares with the entry from dist/runner.cjs itself, which then holds
  // it, instead of every such module becoming a chunk of its own: `runner next` loads 9 files, not
  // 14 (and `runner mcp`'s chunk, which uses the command table, adds none; docs/decisions.md).
  preserveEntrySignatures: "allow-extension",
  external: [/^@hpcc-js\//, /^ajv\/dist\/runtime\//, /^terminal-kit$/],
  // A warning here means code that would not work bundled: fail the build.
  onwarn(warning) {
    throw new Error(`bundle: ${warning.message}`);
  },
};
// The commands are imported lazily: each becomes a chunk of its own (with what it alone needs), so
// `runner next` loads neither the iteration machine nor the git adapters (measured in
// docs/performance.md: one file cost `next --json` about 10 ms more).
const cli = await build({
  ...common,
  // (audit-thread: the program of the thread `runner report` audits the run on, src/adapters/audit/audit-thread.ts)
  input: { runner: path.join(root, "src", "cli", "main.ts"), "audit-thread": path.join(root, "src", "adapters", "audit", "audit-thread.ts") },
  output: {
    dir: dist,
    format: "cjs",
    entryFileNames: "[name].cjs",
    chunkFileNames: "chunks/[name]-[hash].cjs",
    // What `runner step` loads (and `runner run`), in two chunks rather than about 40 (stepGroup): each
    // file costs the loader its own read, hash and compile (about 20 ms of the step's start, measured,
    // docs/performance.md).
    codeSplitting: { includeDependenciesRecursively: false, groups: [{ debugName: "step", name: stepGroup }] },
  },
});
copyBundledLicenses(cli.output);
// The loader of the bundle (not itself in it: it is what compiles it), an ES module of Node's modules alone.
await build({
  ...common,
  input: path.join(root, "src", "load-bundle.ts"),
  output: { file: path.join(dist, "load.mjs"), format: "esm", codeSplitting: false },
});
await build({
  ...common,
  input: path.join(root, "src", "demo", "agent.ts"),
  output: { file: path.join(dist, "demo-agent.mjs"), format: "esm", codeSplitting: false },
});
if (process.argv.includes("--verbose")) {
  const chunks = readdirSync(path.join(dist, "chunks"));
  const size = chunks.reduce((sum, name) => sum + statSync(path.join(dist, "chunks", name)).size, 0);
  console.log(
    `dist/runner.cjs and ${chunks.length} chunks: ${(size / 1024).toFixed(0)} KB; dist/demo-agent.mjs: ${(statSync(path.join(dist, "demo-agent.mjs")).size / 1024).toFixed(0)} KB`,
  );
}

/**
 * The licence of every package bundled from node_modules that a user does not install (not a
 * runtime dependency: its code ships only inside dist/), as dist/licenses/<package>.txt.
 */
function copyBundledLicenses(output) {
  const installed = new Set(Object.keys(JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")).dependencies));
  const bundled = new Set();
  for (const chunk of output) {
    if (chunk.type !== "chunk") continue;
    for (const id of Object.keys(chunk.modules)) {
      const name = /node_modules[\\/]((?:@[^\\/]+[\\/])?[^\\/]+)[\\/]/.exec(id)?.[1]?.replace(/\\/g, "/");
      if (name !== undefined && !installed.has(name)) bundled.add(name);
    }
  }
  if (bundled.size === 0) return;
  const dir = path.join(dist, "licenses");
  mkdirSync(dir, { recursive: true });
  for (const name of [...bundled].sort()) {
    const folder = path.join(root, "node_modules", name);
    const file = readdirSync(folder).find((entry) => /^(licen[cs]e|copying)(\.|$)/i.test(entry));
    const target = path.join(dir, `${name.replace("/", "__")}.txt`);
    if (file !== undefined) copyFileSync(path.join(folder, file), target);
    else {
      const { license, author } = JSON.parse(readFileSync(path.join(folder, "package.json"), "utf8"));
      writeFileSync(
        target,
        `${name}: ${license ?? "no licence named"}${author ? `, by ${typeof author === "string" ? author : author.name}` : ""}\n`,
      );
    }
  }
}
