// bin/runner.js loads dist/runner.cjs through dist/load.mjs: the CLI bundled from the sources into
// CommonJS files compiled with V8's code cache (scripts/bundle.mjs, src/load-bundle.ts). What the bundle still loads from outside itself must be there for a user:
// Node's own modules, and from node_modules only runtime dependencies (never a dev dependency such
// as the bundler). What ships is the bundle, the entry and the schemas: no test or benchmark file.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { AGENTS } from "../../src/agents/registry.js";
import { EXECUTOR_CHOICES } from "../../src/cli/commands.js";
import { PROJECT_ROOT } from "../helpers/sandbox.js";

const bundleFiles = [
  path.join(PROJECT_ROOT, "dist", "runner.cjs"),
  ...readdirSync(path.join(PROJECT_ROOT, "dist", "chunks")).map((name) => path.join(PROJECT_ROOT, "dist", "chunks", name)),
];
const pkg = JSON.parse(readFileSync(path.join(PROJECT_ROOT, "package.json"), "utf8")) as {
  version: string;
  dependencies: Record<string, string>;
  files: string[];
};
const packageOf = (specifier: string) =>
  specifier
    .split("/")
    .slice(0, specifier.startsWith("@") ? 2 : 1)
    .join("/");
const isBuiltin = (specifier: string) => specifier.startsWith("node:") || builtinModules.includes(specifier);

describe("dist/runner.cjs and its chunks", () => {
  const text = bundleFiles.map((file) => readFileSync(file, "utf8")).join("\n");

  it("is what bin/runner.js loads", () => {
    expect(readFileSync(path.join(PROJECT_ROOT, "bin", "runner.js"), "utf8")).toContain('loadBundle(dist, "runner.cjs")');
  });

  it("imports only Node's own modules, and from node_modules only runtime dependencies", () => {
    expect(text).not.toMatch(/^import\s/m);
    // (the loader's `require` is a function alone: src/load-bundle.ts)
    expect(text).not.toMatch(/\brequire\.(resolve|cache|main|extensions)\b/);
    const imported = [
      ...[...text.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g)].map((match) => match[1]!),
      // (not ajv's code generation, which writes `require("…")` into the source of standalone validators)
      ...[...text.matchAll(/(?<!`)\brequire\(\s*["']([^"']+)["']\s*\)/g)].map((match) => match[1]!),
    ];
    const packages = [...new Set(imported.filter((specifier) => !isBuiltin(specifier) && !specifier.startsWith(".")).map(packageOf))].sort();
    expect(imported.filter(isBuiltin).length).toBeGreaterThan(3);
    for (const name of packages) expect(Object.keys(pkg.dependencies), `${name} is imported by the bundle`).toContain(name);
    // The graph renderer (with its WebAssembly) is loaded only for SVG, from node_modules.
    expect(packages).toContain("@hpcc-js/wasm-graphviz");
  });
});

/**
 * The files of the bundle a command loads: the entry, the command's chunk (the one the entry's
 * command table requires for it) with what it requires when it runs, and what each of them requires
 * as it loads (and, for `report`, its audit's thread).
 */
function loadedBy(command: string): Set<string> {
  const entry = path.join(PROJECT_ROOT, "dist", "runner.cjs");
  const requires = (file: string, lazily: boolean) =>
    [
      ...readFileSync(file, "utf8").matchAll(
        lazily ? /\brequire\(\s*"(\.[^"]+)"\s*\)/g : /^(?:const|let|var)\s[^;]*?=\s*require\(\s*"(\.[^"]+)"\s*\)/gm,
      ),
    ].map((match) => path.resolve(path.dirname(file), match[1]!));
  const loaded = new Set<string>();
  const visit = (file: string, lazily = false) => {
    if (loaded.has(file) && !lazily) return;
    loaded.add(file);
    for (const required of requires(file, lazily)) visit(required);
  };
  visit(entry);
  const chunk = requires(entry, true).find((file) => path.basename(file).startsWith(`${command}-`));
  expect(chunk, `the command table's chunk of ${command}`).toBeDefined();
  visit(chunk!, true);
  if (command === "report") visit(path.join(PROJECT_ROOT, "dist", "audit-thread.cjs"));
  return loaded;
}

describe("what every `runner` call loads", () => {
  it("`runner step` loads the step's code in two chunks; `runner report` (with its audit's thread) and `runner status` load none of the step-only one", () => {
    const stepOnly = bundleFiles.filter((file) => /\bfunction runStep\b/.test(readFileSync(file, "utf8")));
    expect(stepOnly.map((file) => path.basename(file))).toEqual([expect.stringMatching(/^step-[\w-]+\.cjs$/)]);
    const stepFiles = loadedBy("step");
    expect([...stepFiles].map((file) => path.basename(file))).toEqual(
      expect.arrayContaining([path.basename(stepOnly[0]!), expect.stringMatching(/^step-shared-/)]),
    );
    for (const command of ["report", "status"])
      expect(
        [...loadedBy(command)].filter((file) => stepOnly.includes(file)),
        command,
      ).toEqual([]);
  });

  it("dist/runner.cjs (the parser and the command table) requires no agent module", () => {
    const entry = readFileSync(path.join(PROJECT_ROOT, "dist", "runner.cjs"), "utf8");
    const imported = [...entry.matchAll(/^(?:const|let|var)\s[^;]*?=\s*require\(\s*["']([^"']+)["']\s*\)/gm)].map((match) => match[1]!);
    expect(imported.length).toBeGreaterThan(0);
    expect(imported.filter((specifier) => /\/(registry|claude|codex|gemini|opencode|qwen|copilot)-/.test(specifier))).toEqual([]);
  });

  it("the MCP SDK and zod are bundled into `runner mcp`'s chunk alone: `runner next` loads none of them, and nothing else imports that chunk", () => {
    const withSdk = bundleFiles.filter((file) => /class McpServer\b|\$ZodType\b/.test(readFileSync(file, "utf8")));
    expect(withSdk.map((file) => path.basename(file))).toEqual([expect.stringMatching(/^mcp-[\w-]+\.cjs$/)]);
    const mcpChunk = path.basename(withSdk[0]!);
    // The files `runner next` loads: the entry, the next command's chunk, and what they import.
    const loaded = loadedBy("next");
    expect([...loaded].filter((file) => withSdk.includes(file))).toEqual([]);
    // (nor the step's code, grouped into one chunk for `runner step`: the machine, XState, the git adapters)
    expect(
      [...loaded].filter((file) => /\bclass StateNode\b|\bfunction runStep\b/.test(readFileSync(file, "utf8"))).map((file) => path.basename(file)),
    ).toEqual([]);

    const importers = bundleFiles.filter((file) => readFileSync(file, "utf8").includes(mcpChunk));
    expect(importers.map((file) => path.relative(path.join(PROJECT_ROOT, "dist"), file))).toEqual(["runner.cjs"]);
    expect(readFileSync(path.join(PROJECT_ROOT, "dist", "runner.cjs"), "utf8")).toContain(`require("./chunks/${mcpChunk}")`);
  });

  it("`init --executor` takes every agent of the registry, the bare command and the demo agent", () => {
    expect(EXECUTOR_CHOICES).toEqual([...AGENTS.map((agent) => agent.kind), "command", "demo"]);
  });
});

describe("what ships", () => {
  it("npm pack lists the entry, the bundle, the demo agent and the schemas, and no test or benchmark file", () => {
    const packed = spawnSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: PROJECT_ROOT, encoding: "utf8" });
    expect(packed.status, packed.stderr).toBe(0);
    const files = (JSON.parse(packed.stdout) as { files: { path: string }[] }[])[0]!.files.map((file) => file.path);
    expect(files).toEqual(
      expect.arrayContaining([
        "bin/runner.js",
        "dist/runner.cjs",
        "dist/load.mjs",
        "dist/audit-thread.cjs",
        "dist/demo-agent.mjs",
        "schemas/task_tree/v1.schema.json",
        "package.json",
      ]),
    );
    expect(files.some((file) => file.startsWith("dist/chunks/"))).toBe(true);
    // (the code cache is this machine's: each install writes its own, src/load-bundle.ts)
    expect(files.filter((file) => file.startsWith("dist/cache/"))).toEqual([]);
    // The code of packages bundled without being installed (the MCP SDK, zod) ships with its licence.
    expect(files).toEqual(expect.arrayContaining(["dist/licenses/@modelcontextprotocol__sdk.txt", "dist/licenses/zod.txt"]));
    for (const name of ["@modelcontextprotocol/sdk", "zod"]) expect(Object.keys(pkg.dependencies), name).not.toContain(name);
    expect(
      files.filter((file) => /(^|\/)(test|bench)\/|\.test\.|\.map$|tsbuildinfo/.test(file)),
      "nothing but what runs",
    ).toEqual([]);
  });
});

describe("bin/runner.js", () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it("without a build, says so in one sentence and exits 1", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "runner-unbuilt-"));
    dirs.push(dir);
    mkdirSync(path.join(dir, "bin"));
    copyFileSync(path.join(PROJECT_ROOT, "bin", "runner.js"), path.join(dir, "bin", "runner.js"));
    const result = spawnSync(process.execPath, [path.join(dir, "bin", "runner.js"), "status"], { encoding: "utf8" });
    expect(result.status).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr.trim().split("\n")).toEqual([
      `runner is not built (${path.join(dir, "dist", "runner.cjs")} is missing): run \`npm run build\` (or \`npm ci\`) in ${dir}.`,
    ]);
  });
});

describe("V8's code cache (src/load-bundle.ts)", () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  /** A copy of the built package (its own dist/, no cache yet) and a way to run its CLI. */
  function installed() {
    const dir = mkdtempSync(path.join(tmpdir(), "runner-code-cache-"));
    dirs.push(dir);
    for (const name of ["bin", "dist", "schemas", "package.json"]) cpSync(path.join(PROJECT_ROOT, name), path.join(dir, name), { recursive: true });
    rmSync(path.join(dir, "dist", "cache"), { recursive: true, force: true });
    symlinkSync(path.join(PROJECT_ROOT, "node_modules"), path.join(dir, "node_modules"));
    const runner = (...args: string[]) => spawnSync(process.execPath, [path.join(dir, "bin", "runner.js"), ...args], { encoding: "utf8" });
    const caches = () => readdirSync(path.join(dir, "dist", "cache")).sort();
    return { dir, runner, caches };
  }
  const sha256 = (file: string) => createHash("sha256").update(readFileSync(file, "utf8")).digest("hex").slice(0, 32);

  it("is written once, by the first process, for each file it loaded, named by the sha-256 of the file's text", () => {
    const { dir, runner, caches } = installed();
    expect(runner("--version").stdout).toBe(`${pkg.version}\n`);
    const written = caches();
    expect(written).toContain(`runner.cjs-${sha256(path.join(dir, "dist", "runner.cjs"))}.bin`);
    expect(written.every((name) => /^[\w-]+\.cjs-[0-9a-f]{32}\.bin$/.test(name))).toBe(true);
    const before = readFileSync(path.join(dir, "dist", "cache", written[0]!));
    expect(runner("--version").stdout).toBe(`${pkg.version}\n`);
    expect(caches()).toEqual(written);
    expect(readFileSync(path.join(dir, "dist", "cache", written[0]!)).equals(before), "a cache V8 accepts is kept as it is").toBe(true);
  });

  it("never changes what runs: a corrupt cache is rejected and written anew, and a file changed to a text of the same length is not run from the old text's cache", () => {
    const { dir, runner, caches } = installed();
    runner("--version");
    const entry = path.join(dir, "dist", "runner.cjs");
    const cacheFile = path.join(dir, "dist", "cache", caches().find((name) => name.startsWith("runner.cjs-"))!);
    writeFileSync(cacheFile, Buffer.alloc(readFileSync(cacheFile).length, 7));
    expect(runner("--version").stdout).toBe(`${pkg.version}\n`);
    expect(readFileSync(cacheFile).every((byte) => byte === 7)).toBe(false);
    // V8 checks only the length of the text a cache was made from: a file of the same length with
    // another text must not start from the first one's cache.
    const text = readFileSync(entry, "utf8");
    const call = "printLine(require_layout.packageVersion());";
    expect(text).toContain(call);
    const edited = 'printLine("edited");';
    writeFileSync(entry, text.replace(call, edited.padEnd(call.length, " ")));
    expect(readFileSync(entry, "utf8").length).toBe(text.length);
    expect(runner("--version").stdout).toBe("edited\n");
  });
});
