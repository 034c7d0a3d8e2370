// bin/runner.js runs dist/runner.cjs, tsc's output bundled into one file (scripts/bundle.mjs), with
// V8's code cache in dist/code-cache/. What the bundle still loads from outside itself must be there
// for a user: Node's own modules, and from node_modules only runtime dependencies (never a dev
// dependency such as the bundler). The cache may make a start faster; it must never change what runs.
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../helpers/sandbox.js";

const bundleFile = path.join(PROJECT_ROOT, "dist", "runner.cjs");
const bin = path.join(PROJECT_ROOT, "bin", "runner.js");

function specifiers(text: string, pattern: RegExp): string[] {
  return [...new Set([...text.matchAll(pattern)].map((match) => match[1]!))].sort();
}

describe("dist/runner.cjs", () => {
  const text = readFileSync(bundleFile, "utf8");
  const pkg = JSON.parse(readFileSync(path.join(PROJECT_ROOT, "package.json"), "utf8")) as { dependencies: Record<string, string> };
  const packageOf = (specifier: string) => specifier.split("/").slice(0, specifier.startsWith("@") ? 2 : 1).join("/");

  it("is what bin/runner.js runs, strict, and built from the current tsc output", () => {
    expect(readFileSync(path.join(PROJECT_ROOT, "bin", "load-cli.js"), "utf8")).toContain('new URL("../dist/runner.cjs", import.meta.url)');
    expect(text.startsWith('"use strict";\n')).toBe(true);
    const compiled = statSync(path.join(PROJECT_ROOT, "dist", "src", "cli", "main.js")).mtimeMs;
    expect(statSync(bundleFile).mtimeMs).toBeGreaterThanOrEqual(compiled);
  });

  it("requires only Node's own modules, and from node_modules only ajv's runtime helpers", () => {
    const required = specifiers(text, /\brequire(?:\$\d+)?\(\s*["']([^"']+)["']\s*\)/g);
    const builtins = required.filter((specifier) => specifier.startsWith("node:") || specifier === "url");
    const packages = required.filter((specifier) => !builtins.includes(specifier));
    expect(builtins.length).toBeGreaterThan(3);
    expect(packages.length).toBeGreaterThan(0);
    expect(packages.filter((specifier) => !specifier.startsWith("ajv/dist/runtime/"))).toEqual([]);
    expect(Object.keys(pkg.dependencies)).toContain("ajv");
  });

  it("imports the ES-module-only packages (yargs, graphviz) through the entry's import(), never on its own", () => {
    // A bare import() in a node:vm script fails without an experimental flag (or warns): each one
    // is only the fallback of a call through the entry's import() (run from source or as modules).
    const imported = specifiers(text, /\bimport\(\s*["']([^"']+)["']\s*\)/g);
    const hosted = specifiers(text, /\bimportExternal\(\s*["']([^"']+)["'],\s*\(\)\s*=>\s*import\(\s*["']\1["']\s*\)\s*\)/g);
    expect(hosted).toEqual(["@hpcc-js/wasm-graphviz", "yargs"]);
    expect(imported).toEqual(hosted);
    expect(text.match(/\bimport\(/g)).toHaveLength(hosted.length);
    for (const specifier of hosted) expect(Object.keys(pkg.dependencies)).toContain(packageOf(specifier));
  });
});

describe("bin/runner.js and its code cache", () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it("writes a cache once a command succeeds, and a cache (even a corrupt one) never changes the answer", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "runner-cache-"));
    dirs.push(dir);
    expect(spawnSync(process.execPath, [bin, "init", "--goal", "Cache check"], { cwd: dir, encoding: "utf8" }).status).toBe(0);
    const next = () => spawnSync(process.execPath, [bin, "next", "--json"], { cwd: dir, encoding: "utf8" });
    const cacheDir = path.join(PROJECT_ROOT, "dist", "code-cache");
    const nextCaches = () => readdirSync(cacheDir).filter((name) => name.startsWith("next-"));
    rmSync(cacheDir, { recursive: true, force: true });
    const first = next();
    expect(first.status, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ complete: false, node: { id: "root" } });
    expect(nextCaches()).toHaveLength(1);
    const second = next();
    expect(second.stdout).toBe(first.stdout);
    // Garbage where the cache was: V8 rejects it, the command still answers the same, and the cache is written anew.
    const cacheFile = path.join(cacheDir, nextCaches()[0]!);
    writeFileSync(cacheFile, Buffer.alloc(4096, 7));
    const third = next();
    expect(third.status, third.stderr).toBe(0);
    expect(third.stdout).toBe(first.stdout);
    expect(third.stderr).toBe("");
    expect(readFileSync(cacheFile).equals(Buffer.alloc(4096, 7))).toBe(false);
  });

  it("without a build, says so in one sentence and exits 1", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "runner-unbuilt-"));
    dirs.push(dir);
    mkdirSync(path.join(dir, "bin"));
    for (const name of ["runner.js", "load-cli.js"]) copyFileSync(path.join(PROJECT_ROOT, "bin", name), path.join(dir, "bin", name));
    const result = spawnSync(process.execPath, [path.join(dir, "bin", "runner.js"), "status"], { encoding: "utf8" });
    expect(result.status).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr.trim().split("\n")).toEqual([`runner is not built (${path.join(dir, "dist", "runner.cjs")} is missing): run \`npm run build\` (or \`npm ci\`) in ${dir}.`]);
  });
});
