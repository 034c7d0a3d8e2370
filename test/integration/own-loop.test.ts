// The project runs its own loop: .runner/ in this repository holds the goal, the tree of the
// project's real next work and a config whose guard is `just ci`. It must stay valid.
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/core/config/config.js";
import { PROJECT_ROOT, runner } from "../helpers/sandbox.js";

describe("this repository's own loop", () => {
  it("runner validate accepts its tree and config", async () => {
    const result = await runner(PROJECT_ROOT, ["validate", "--json"]);
    expect(result.exitCode, result.stdout + result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ valid: true });
  });

  it("the guard is `just ci`, the tree has open work, the pinned schema is the runner's own", () => {
    const config = parseConfig(readFileSync(path.join(PROJECT_ROOT, ".runner/state/config.toml"), "utf8"));
    expect(config.ok && config.config.guard.command).toEqual(["just", "ci"]);
    const tree = JSON.parse(readFileSync(path.join(PROJECT_ROOT, ".runner/state/tree.json"), "utf8")) as {
      root: { passes: boolean; children: unknown[] };
    };
    expect(tree.root.passes).toBe(false);
    expect(tree.root.children.length).toBeGreaterThan(0);
    expect(readFileSync(path.join(PROJECT_ROOT, ".runner/state/schema.json"), "utf8")).toBe(
      readFileSync(path.join(PROJECT_ROOT, "schemas/task_tree/v1.schema.json"), "utf8"),
    );
    expect(readFileSync(path.join(PROJECT_ROOT, ".runner/GOAL.md"), "utf8")).toMatch(/^# Goal\n/);
  });
});
