// `runner doctor` lists every agent the runner speaks (src/agents/registry.ts) as found on the
// machine: its version, whether the runner is tested with it, or that it is not installed — none of
// which is a problem unless the configured agent is missing (the preflight's check says so).
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { scenario } from "../helpers/scenario.js";
import { tempDir } from "../helpers/sandbox.js";

/** A folder of fake agent programs, each printing `said` for --version (and exiting with `exit`). */
function fakeAgents(programs: Record<string, { said: string; exit?: number }>): string {
  const dir = tempDir("runner-doctor-agents-");
  mkdirSync(dir, { recursive: true });
  for (const [name, { said, exit }] of Object.entries(programs)) {
    const file = path.join(dir, name);
    writeFileSync(file, `#!/bin/sh\necho ${JSON.stringify(said)}${exit ? " >&2" : ""}\nexit ${exit ?? 0}\n`);
    chmodSync(file, 0o755);
  }
  return dir;
}

describe("runner doctor: the agents on this machine", () => {
  it("names each agent's version and whether it is tested; one that is not installed is no problem", async () => {
    const s = await scenario({ runId: "doc-agents" });
    const bin = fakeAgents({ codex: { said: "codex-cli 0.169.0" }, claude: { said: "2.0.1 (Claude Code)" } });
    const { OPENAI_API_KEY: _o, CODEX_API_KEY: _c, ANTHROPIC_API_KEY: _a, ANTHROPIC_AUTH_TOKEN: _t, CLAUDE_CODE_OAUTH_TOKEN: _k, ...rest } = s.env;
    // Credentials are named, never shown.
    s.env = { ...rest, PATH: `${bin}:${s.env.PATH}`, OPENAI_API_KEY: "sk-doctor-secret-1234" };
    const doctor = await s.runner(["doctor"]);
    expect(doctor.stdout).toMatch(/^agents the runner speaks, as found on this machine \(and the versions it is tested with\):$/m);
    expect(doctor.stdout).toContain(`\n  codex: 0.169.0, tested (Codex CLI, ${bin}/codex; OPENAI_API_KEY set)\n`);
    expect(doctor.stdout).toContain(
      `\n  claude: 2.0.1, not a tested version (tested: 2.1.330) (Claude Code, ${bin}/claude; none of ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN, CLAUDE_CODE_OAUTH_TOKEN set (its own login may do))`,
    );
    expect(doctor.stdout).not.toContain("sk-doctor-secret");
    expect(doctor.exitCode, doctor.stderr).toBe(0);

    const json = JSON.parse((await s.runner(["doctor", "--json"])).stdout) as { ok: boolean; agents: Record<string, unknown>[] };
    expect(json.ok).toBe(true);
    expect(json.agents.find((agent) => agent.kind === "codex")).toEqual({
      kind: "codex",
      title: "Codex CLI",
      package: "@openai/codex",
      path: `${bin}/codex`,
      version: "0.169.0",
      tested_versions: ["0.169.0"],
      tested: true,
      configured: false,
      problem: null,
      credentials_set: ["OPENAI_API_KEY"],
    });
    expect(json.agents.find((agent) => agent.kind === "claude")).toMatchObject({ version: "2.0.1", tested: false, tested_versions: ["2.1.330"] });
  });

  it("an agent missing from PATH is listed with the way to install it; a version command that fails is named", async () => {
    const s = await scenario({ runId: "doc-missing" });
    const bin = fakeAgents({ claude: { said: "Error: claude native binary not installed.", exit: 1 } });
    // Only the fake folder, node's and the system's: no codex anywhere.
    s.env = { ...s.env, PATH: `${bin}:${path.dirname(process.execPath)}:/usr/bin:/bin` };
    const doctor = await s.runner(["doctor"]);
    expect(doctor.stdout).toContain("\n  codex: not found (tested: 0.169.0; `npm install -g @openai/codex`)\n");
    expect(doctor.stdout).toMatch(
      /^ {2}claude: version unknown, its version command failed \(Error: claude native binary not installed\.\); tested: 2\.1\.330 \(Claude Code, .*\/claude; .*\)$/m,
    );
  });
});
