// Runs a real agent CLI the way the runner does: its own process group, the prompt on stdin, and the
// whole group killed at the deadline. (Killing only the pid is not enough: on Node < 22.15
// @openai/codex's bin/codex.js spawns the native binary as a child that keeps stdout open.)
import { spawn } from "node:child_process";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

export interface AgentRun {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
  killedAtDeadline: boolean;
}

export interface AgentRunOptions {
  cwd: string;
  env: Record<string, string | undefined>;
  input: string;
  deadlineMs: number;
  /** Called once the process runs; the run ends when it exits or the deadline kills its group. */
  whileRunning?: (isRunning: () => boolean) => Promise<void>;
}

export async function runAgent(file: string, argv: string[], options: AgentRunOptions): Promise<AgentRun> {
  const started = Date.now();
  const child = spawn(file, argv, { cwd: options.cwd, env: options.env as NodeJS.ProcessEnv, detached: true, stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  let exited = false;
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  child.stdin.on("error", () => {});
  child.stdin.end(options.input);
  let killedAtDeadline = false;
  const killGroup = () => {
    try {
      process.kill(-child.pid!, "SIGKILL");
    } catch {
      // already gone
    }
  };
  const timer = setTimeout(() => {
    killedAtDeadline = true;
    killGroup();
  }, options.deadlineMs);
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("close", (code, signal) => {
      exited = true;
      resolve({ code, signal });
    }),
  );
  if (options.whileRunning) {
    await options.whileRunning(() => !exited);
    killGroup();
  }
  const { code, signal } = await done;
  clearTimeout(timer);
  killGroup();
  return { exitCode: code, signal, stdout, stderr, ms: Date.now() - started, killedAtDeadline };
}

/** Polls `condition` every 50 ms until it holds or `ms` pass; returns whether it held. */
export async function waitFor(condition: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return condition();
}

/** The JSON objects of a JSON-lines stream (other lines skipped). */
export function jsonLines(text: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const line of text.split("\n")) {
    const trimmed = line.trim();
    if (!trimmed.startsWith("{")) continue;
    try {
      out.push(JSON.parse(trimmed) as Record<string, unknown>);
    } catch {
      // not one JSON object
    }
  }
  return out;
}

export interface AgentSandbox {
  root: string;
  repo: string;
  home: string;
}

/** A temp folder with a real git repository (one commit) and an empty HOME (with .codex/ and .claude/) for the agent. */
export function makeAgentSandbox(prefix: string): AgentSandbox {
  const root = mkdtempSync(path.join(os.tmpdir(), `${prefix}-`));
  const repo = path.join(root, "repo");
  const home = path.join(root, "home");
  mkdirSync(repo);
  // Codex refuses a CODEX_HOME that does not exist ("CODEX_HOME points to …, but that path does not exist").
  mkdirSync(path.join(home, ".codex"), { recursive: true });
  mkdirSync(path.join(home, ".claude"), { recursive: true });
  const git = (...args: string[]) => execFileSync("git", args, { cwd: repo, stdio: "pipe" });
  git("init", "-q", "-b", "work");
  writeFileSync(path.join(repo, "README.md"), "test repository\n");
  git("add", "README.md");
  git("-c", "user.name=test", "-c", "user.email=test@example.com", "commit", "-q", "-m", "init");
  return { root, repo, home };
}
