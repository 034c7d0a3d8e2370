// The `[executor] kind` values and the `[executor]` keys each takes (CONTRACT §5): config's own
// table, so that reading a config needs no agent module. Each agent module (src/agents/<kind>.ts)
// names its keys from here; test/unit/agents.test.ts checks that every agent of the registry has a
// row and that the schema's kind enum is this table's.
import type { ExecutorConfig } from "../../schemas/types.generated.js";

export type ExecutorKind = NonNullable<ExecutorConfig["kind"]>;

export const EXECUTOR_KEYS = {
  codex: ["model", "profile", "sandbox", "config_overrides", "extra_args", "isolation"],
  claude: ["model", "permission_mode", "allowed_tools", "max_turns", "max_budget_usd", "extra_args", "isolation"],
  gemini: ["model", "approval_mode", "allowed_tools", "extra_args", "isolation"],
  qwen: ["model", "approval_mode", "allowed_tools", "max_turns", "extra_args", "isolation"],
  opencode: ["model", "extra_args", "isolation"],
  copilot: ["model", "allowed_tools", "extra_args", "isolation"],
  pi: ["model", "extra_args", "isolation"],
  cline: ["model", "extra_args", "isolation"],
  command: ["command"],
  demo: ["fail_once"],
} as const satisfies Record<ExecutorKind, readonly (keyof ExecutorConfig)[]>;
