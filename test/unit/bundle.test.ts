// bin/runner.js loads dist/runner.mjs, tsc's output bundled into one module (scripts/bundle.mjs).
// What the bundle still loads from outside itself must be there for a user: Node's own modules, and
// from node_modules only runtime dependencies (never a dev dependency such as the bundler).
import { readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../helpers/sandbox.js";

const bundleFile = path.join(PROJECT_ROOT, "dist", "runner.mjs");

function specifiers(text: string, pattern: RegExp): string[] {
  return [...new Set([...text.matchAll(pattern)].map((match) => match[1]!))].sort();
}

describe("dist/runner.mjs", () => {
  const text = readFileSync(bundleFile, "utf8");
  const pkg = JSON.parse(readFileSync(path.join(PROJECT_ROOT, "package.json"), "utf8")) as { dependencies: Record<string, string> };
  const packageOf = (specifier: string) => specifier.split("/").slice(0, specifier.startsWith("@") ? 2 : 1).join("/");

  it("is what bin/runner.js loads, and is built from the current tsc output", () => {
    expect(readFileSync(path.join(PROJECT_ROOT, "bin", "runner.js"), "utf8")).toContain('from "../dist/runner.mjs"');
    const compiled = statSync(path.join(PROJECT_ROOT, "dist", "src", "cli", "main.js")).mtimeMs;
    expect(statSync(bundleFile).mtimeMs).toBeGreaterThanOrEqual(compiled);
  });

  it("imports statically only Node's own modules", () => {
    const statics = specifiers(text, /^import\s[^"'\n]*?from\s+["']([^"']+)["'];?$/gm);
    expect(statics.length).toBeGreaterThan(0);
    expect(statics.filter((specifier) => !specifier.startsWith("node:"))).toEqual([]);
  });

  it("loads from node_modules only runtime dependencies, lazily (yargs for help, graphviz for SVG) or through ajv's runtime", () => {
    const dynamic = specifiers(text, /\bimport\(\s*["']([^"']+)["']\s*\)/g);
    expect(dynamic).toEqual(["@hpcc-js/wasm-graphviz", "yargs"]);
    const required = specifiers(text, /\brequire\(\s*["']([^"']+)["']\s*\)/g);
    expect(required.length).toBeGreaterThan(0);
    for (const specifier of [...dynamic, ...required]) expect(Object.keys(pkg.dependencies), specifier).toContain(packageOf(specifier));
    expect(required.every((specifier) => specifier.startsWith("ajv/dist/runtime/"))).toBe(true);
  });

  it("holds no path into dist/src (the modules it was made from are not loaded beside it)", () => {
    expect(text).not.toMatch(/["'][^"']*dist\/src\/(cli|core|adapters|step|run)\/[^"']*\.js["']/);
  });
});
