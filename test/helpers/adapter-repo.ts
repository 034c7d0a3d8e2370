// A repository whose executor is a fake `codex` or `claude` (test/helpers/fake-agents.ts), guarded by
// check.mjs (src/<leaf>.txt must say "ok <leaf>"), on its run branch.
import { expect } from "vitest";
import { installFakeAgents, LEAF_FILE_GUARD, type FakeAgents } from "./fake-agents.js";
import { writeFiles, type tree } from "./sandbox.js";
import { CONFIG_FILE, scenario, type Scenario } from "./scenario.js";

/** An API key in the runner's environment: redacted wherever the runner writes. */
export const SECRET = "sk-test-secret-123456";

/** A repository whose executor is the given config, guarded by check.mjs, on run branch `runId`. */
export async function adapterRepo(
  runId: string,
  executorToml: string,
  options: { limits?: string; tree?: ReturnType<typeof tree> } = {},
): Promise<{ s: Scenario; fakes: FakeAgents }> {
  const fakes = installFakeAgents();
  const s = await scenario({
    runId,
    start: false,
    tree: options.tree,
    env: { ...fakes.env, OPENAI_API_KEY: SECRET },
    files: { "check.mjs": LEAF_FILE_GUARD },
  });
  writeFiles(s.dir, {
    [CONFIG_FILE]: [
      "[executor]",
      executorToml.trim(),
      "",
      "[guard]",
      'command = ["node", "check.mjs"]',
      "",
      "[limits]",
      "iteration_timeout_seconds = 60",
      ...(options.limits ? [options.limits] : []),
      "",
    ].join("\n"),
  });
  await s.git(["commit", "-q", "-am", "use a real agent"]);
  const start = await s.runner(["start", "--run-id", runId]);
  expect(start.stderr).toBe("");
  expect(start.exitCode).toBe(0);
  return { s, fakes };
}
