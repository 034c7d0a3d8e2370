// The layer check of `just ci` (`just layers`, .dependency-cruiser.cjs, run on src and machines by
// every `npm test`) fails on a planted upward import (test/fixtures/layers: src/core importing an adapter), on a planted cycle
// and on a planted cycle of two concept folders; and every module of src/core and src/adapters sits in a concept's folder.
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { PROJECT_ROOT, tempDir } from "../helpers/sandbox.js";

const DEPCRUISE = path.join(PROJECT_ROOT, "node_modules", ".bin", "depcruise");
const CONFIG = path.join(PROJECT_ROOT, ".dependency-cruiser.cjs");

function check(cwd: string, ...folders: string[]): { ok: boolean; output: string } {
  try {
    return { ok: true, output: execFileSync(DEPCRUISE, [...folders, "--config", CONFIG, "--output-type", "err"], { cwd, encoding: "utf8" }) };
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string };
    return { ok: false, output: `${failed.stdout ?? ""}${failed.stderr ?? ""}` };
  }
}

describe("the layers of the code", () => {
  it("a planted upward import (core → adapters) and a planted cycle fail the check", () => {
    const dir = tempDir("runner-layers-");
    cpSync(path.join(PROJECT_ROOT, "test", "fixtures", "layers"), dir, { recursive: true });
    cpSync(path.join(PROJECT_ROOT, "tsconfig.json"), path.join(dir, "tsconfig.json"));
    const upward = check(dir, "src");
    expect(upward.ok).toBe(false);
    expect(upward.output).toMatch(/core-is-the-floor: src\/core\/upward\.ts → src\/adapters\/reader\.ts/);
    writeFileSync(path.join(dir, "src", "adapters", "reader.ts"), 'import { value } from "./again.js";\nexport const readIt = () => value;\n');
    writeFileSync(path.join(dir, "src", "adapters", "again.ts"), 'import { readIt } from "./reader.js";\nexport const value = String(readIt);\n');
    const cycle = check(dir, "src");
    expect(cycle.output).toMatch(/no-circular: src\/adapters\/(reader|again)\.ts/);
  });

  it("two concept folders that import each other fail the check, though no two modules form a cycle", () => {
    const dir = tempDir("runner-layers-");
    cpSync(path.join(PROJECT_ROOT, "tsconfig.json"), path.join(dir, "tsconfig.json"));
    for (const folder of ["tree", "base"]) mkdirSync(path.join(dir, "src", "core", folder), { recursive: true });
    writeFileSync(path.join(dir, "src", "core", "base", "limits.ts"), "export const LIMIT = 3;\n");
    writeFileSync(path.join(dir, "src", "core", "base", "problems.ts"), 'import { shape } from "../tree/shape.js";\nexport const problem = shape;\n');
    writeFileSync(path.join(dir, "src", "core", "tree", "shape.ts"), 'import { LIMIT } from "../base/limits.js";\nexport const shape = LIMIT;\n');
    const concepts = check(dir, "src");
    expect(concepts.ok).toBe(false);
    expect(concepts.output).toMatch(/no-circular-concepts: src\/core\/(tree|base)/);
    expect(concepts.output).not.toMatch(/no-circular: /);
  });

  it("every module of src/core and src/adapters is in a concept's folder, none loose at the top", () => {
    for (const layer of ["core", "adapters"]) {
      const loose = readdirSync(path.join(PROJECT_ROOT, "src", layer), { withFileTypes: true }).filter((entry) => entry.isFile());
      expect(loose.map((entry) => `src/${layer}/${entry.name}`)).toEqual([]);
    }
  });
});
