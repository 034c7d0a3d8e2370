// `runner init --executor K` writes a config whose every option is valid for the pinned agents: the
// file validates as written, and again with every commented-out option of [executor] switched on;
// no model the pinned Codex does not know (gpt-5-codex) is suggested; the Claude template names
// every permission mode the schema accepts.
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { AGENTS } from "../../src/agents/registry.js";
import { git, PROJECT_ROOT, runner, tempDir } from "../helpers/sandbox.js";

const CONFIG = ".runner/state/config.toml";

/** The config with every commented-out option (`# key = value`) and table (`# [hooks]`) switched on. */
function everyOptionOn(text: string): string {
  return text
    .split("\n")
    .map((line) => (/^# (?:[a-z_]+ = |\[[a-z]+\]$)/.test(line) ? line.slice(2) : line))
    .join("\n");
}

describe("runner init templates", () => {
  for (const executor of [...AGENTS.map((agent) => agent.kind), "command", "demo"]) {
    it(`--executor ${executor}: valid as written and with every commented option switched on`, async () => {
      const dir = tempDir(`runner-init-${executor}-`);
      await git(dir, ["init", "-q"]);
      const init = await runner(dir, ["init", "--executor", executor, "--goal", "Test the templates"]);
      expect(init.stderr).toBe("");
      expect(init.exitCode).toBe(0);
      const written = readFileSync(path.join(dir, CONFIG), "utf8");
      const validate = await runner(dir, ["validate"]);
      expect(validate.stderr).toBe("");
      expect(validate.exitCode).toBe(0);
      const all = everyOptionOn(written);
      writeFileSync(path.join(dir, CONFIG), all);
      const again = await runner(dir, ["validate"]);
      expect(again.stderr, all).toBe("");
      expect(again.exitCode).toBe(0);
      expect(written).not.toContain("gpt-5-codex");
      expect(all).toMatch(/^\[hooks\]$/m);
      expect(all).toMatch(/^max_run_cost_usd = /m);
    });
  }

  it("the Claude template names every permission mode the config schema accepts, and the isolation switch", async () => {
    const dir = tempDir("runner-init-modes-");
    await git(dir, ["init", "-q"]);
    await runner(dir, ["init", "--executor", "claude"]);
    const written = readFileSync(path.join(dir, CONFIG), "utf8");
    const schema = JSON.parse(readFileSync(path.join(PROJECT_ROOT, "schemas/config/v1.schema.json"), "utf8")) as {
      properties: { executor: { properties: { permission_mode: { enum: string[] } } } };
    };
    for (const mode of schema.properties.executor.properties.permission_mode.enum) expect(written).toContain(mode);
    expect(written).toContain("IS_SANDBOX=1");
    expect(written).toMatch(/^# isolation = "clean"/m);
  });
});
