// The agent registry (src/agents/registry.ts) against what the tests pin and the config schema
// accepts: every agent's package and tested version are the ones test/real-agents/versions.json
// installs, every agent is an `[executor] kind` of the schema, and each declares what a new agent
// must (docs/agents.md, "Adding an agent").
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { agentPins } from "../../scripts/install-test-agents.mjs";
import { EXECUTOR_KEYS } from "../../src/core/config/executor-kinds.js";
import { AGENTS } from "../../src/agents/registry.js";
import { PROJECT_ROOT } from "../helpers/sandbox.js";

const pins = agentPins();
const schema = JSON.parse(readFileSync(path.join(PROJECT_ROOT, "schemas/config/v1.schema.json"), "utf8")) as {
  properties: { executor: { properties: Record<string, unknown> & { kind: { enum: string[] } } } };
};

describe("the agent registry", () => {
  it("pins every agent's tested version and package in versions.json, and only those", () => {
    expect(Object.keys(pins).sort()).toEqual(AGENTS.map((agent) => agent.kind).sort());
    for (const agent of AGENTS) {
      expect(pins[agent.kind], agent.kind).toMatchObject({ package: agent.package, bin: agent.program });
      expect(agent.testedVersions, agent.kind).toContain(pins[agent.kind]!.version);
    }
  });

  it("every agent is a kind of the config schema, and every key it takes is a property there", () => {
    const executor = schema.properties.executor.properties;
    for (const agent of AGENTS) {
      expect(executor.kind.enum, agent.kind).toContain(agent.kind);
      for (const key of agent.configKeys) expect(Object.keys(executor), `${agent.kind}: ${key}`).toContain(key);
    }
  });

  it("config's own table of kinds (src/core/config/executor-kinds.ts) is the schema's enum and names each agent's keys", () => {
    expect(Object.keys(EXECUTOR_KEYS).sort()).toEqual([...schema.properties.executor.properties.kind.enum!].sort());
    for (const agent of AGENTS) expect(EXECUTOR_KEYS[agent.kind as keyof typeof EXECUTOR_KEYS], agent.kind).toBe(agent.configKeys);
  });

  it("each agent's version pattern reads its own --version line", () => {
    const said: Record<string, string> = {
      codex: "codex-cli 0.169.0",
      claude: "2.1.330 (Claude Code)",
      copilot: "GitHub Copilot CLI 1.0.102.\nRun 'copilot update' to check for updates.",
    };
    for (const agent of AGENTS) {
      if (said[agent.kind] === undefined) continue;
      expect(agent.version.pattern.exec(said[agent.kind]!)?.[1], agent.kind).toBe(pins[agent.kind]!.version);
    }
  });
});
