// `npm ci` (the first step of .ci/run) refuses a lock file that lacks an optional dependency; the
// registry here serves only the linux-x64 build of rust-just, so scripts/complete-lockfile.mjs adds
// the others. This keeps a later `npm install` from silently breaking CI.
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../helpers/sandbox.js";

describe("package-lock.json", () => {
  it("lists every platform package of rust-just, so npm ci accepts it on a clean checkout", () => {
    const lock = JSON.parse(readFileSync(path.join(PROJECT_ROOT, "package-lock.json"), "utf8")) as {
      packages: Record<string, { optionalDependencies?: Record<string, string>; os?: string[]; cpu?: string[] }>;
    };
    const just = lock.packages["node_modules/rust-just"];
    const optional = Object.keys(just?.optionalDependencies ?? {});
    expect(optional.length).toBeGreaterThan(0);
    const missing = optional.filter((name) => lock.packages[`node_modules/${name}`] === undefined);
    expect(missing, "run `node scripts/complete-lockfile.mjs` after npm install").toEqual([]);
    for (const name of optional) expect(lock.packages[`node_modules/${name}`]?.os?.length, name).toBe(1);
  });
});
