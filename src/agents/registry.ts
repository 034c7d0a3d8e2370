// Every agent the runner speaks, one module each (src/agents/<kind>.ts). This list drives the
// `[executor] kind` values and the keys each takes (src/core/config/config.ts), `runner init --executor`
// and its templates, the preflight (the program and how to install it), `runner doctor` (every
// agent found on the machine, its version, the versions tested) and the executor for a kind
// (src/adapters/executors/registry.ts). Adding an agent: docs/agents.md, "Adding an agent".
import type { AgentDefinition } from "./agent.js";
import { claude } from "./claude.js";
import { cline } from "./cline.js";
import { codex } from "./codex.js";
import { copilot } from "./copilot.js";
import { gemini } from "./gemini.js";
import { opencode } from "./opencode.js";
import { pi } from "./pi.js";
import { qwen } from "./qwen.js";

export const AGENTS: readonly AgentDefinition[] = [codex, claude, gemini, qwen, opencode, copilot, pi, cline];

/** The agent of an `[executor] kind`, or undefined for a kind that is no agent ("command", "demo"). */
export function findAgent(kind: string): AgentDefinition | undefined {
  return AGENTS.find((agent) => agent.kind === kind);
}

export function agentFor(kind: string): AgentDefinition {
  const agent = findAgent(kind);
  if (!agent) throw new Error(`no agent of kind "${kind}"`);
  return agent;
}
