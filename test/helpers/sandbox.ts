// Test sandboxes: temp folders, real git repositories, the built runner binary as a child process,
// and tree builders. Nothing here mocks git or the file system.
import { execa, type Options } from "execa";
import { execFileSync } from "node:child_process";
import { mkdtempSync, mkdirSync, rmSync, writeFileSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll } from "vitest";
import type { TaskNode, TaskTree } from "../../src/core/tree/tree.js";

export const PROJECT_ROOT = path.resolve(import.meta.dirname, "..", "..");
export const RUNNER_BIN = path.join(PROJECT_ROOT, "bin", "runner.js");

const created: string[] = [];
afterAll(() => {
  if (process.env.KEEP_TEST_DIRS) return;
  for (const dir of created) rmSync(dir, { recursive: true, force: true });
});

/** A fresh temp folder, removed after the test file (set KEEP_TEST_DIRS=1 to keep it). */
export function tempDir(prefix = "runner-test-"): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  created.push(dir);
  return dir;
}

/** The runner's own state folder for this test file's repositories (never the user's ~/.local/state). */
let stateDir: string | undefined;
export function testStateDir(): string {
  stateDir ??= tempDir("runner-state-");
  return stateDir;
}

/** Environment for child processes: no user git config, fixed identity unless `identity: false`. */
export function testEnv(extra: Record<string, string> = {}, identity = true): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined) env[key] = value;
  env.GIT_CONFIG_GLOBAL = "/dev/null";
  env.GIT_CONFIG_NOSYSTEM = "1";
  env.RUNNER_STATE_DIR = testStateDir();
  delete env.GIT_AUTHOR_NAME;
  delete env.GIT_AUTHOR_EMAIL;
  delete env.GIT_COMMITTER_NAME;
  delete env.GIT_COMMITTER_EMAIL;
  if (identity) {
    env.GIT_AUTHOR_NAME = "Test Author";
    env.GIT_AUTHOR_EMAIL = "author@example.com";
    env.GIT_COMMITTER_NAME = "Test Author";
    env.GIT_COMMITTER_EMAIL = "author@example.com";
  }
  return { ...env, ...extra };
}

export interface CliResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** A folder holding `runner` (the built binary) for the front of PATH: what `npm install -g` leaves, for steps that call `runner` by name. */
export function runnerOnPath(): string {
  const bin = tempDir("runner-bin-");
  writeFileSync(path.join(bin, "runner"), `#!/bin/sh\nexec node ${JSON.stringify(RUNNER_BIN)} "$@"\n`, { mode: 0o755 });
  return bin;
}

/** Runs the built `runner` binary with `args` in `cwd`. */
export async function runner(
  cwd: string,
  args: string[],
  options: { env?: Record<string, string>; timeout?: number; input?: string; exactOutput?: boolean } = {},
): Promise<CliResult> {
  const result = await execa("node", [RUNNER_BIN, ...args], {
    cwd,
    env: options.env ?? testEnv(),
    extendEnv: false,
    reject: false,
    // exactOutput: stdout byte for byte (by default, as execa does, without its last newline)
    stripFinalNewline: options.exactOutput !== true,
    timeout: options.timeout ?? 60_000,
    input: options.input,
  } satisfies Options);
  return { exitCode: result.exitCode ?? -1, stdout: String(result.stdout), stderr: String(result.stderr) };
}

/** Runs git in `cwd` (test setup and assertions only). */
export async function git(cwd: string, args: string[], env: Record<string, string> = testEnv()): Promise<string> {
  const result = await execa("git", args, { cwd, env, extendEnv: false });
  return String(result.stdout);
}

/** git's stdout byte for byte (its last newline kept), as a Buffer. */
export async function gitBytes(cwd: string, args: string[], env: Record<string, string> = testEnv()): Promise<Buffer> {
  const result = await execa("git", args, { cwd, env, extendEnv: false, encoding: "buffer", stripFinalNewline: false });
  return Buffer.from(result.stdout);
}

export function writeFiles(root: string, files: Record<string, string>): void {
  for (const [relative, text] of Object.entries(files)) {
    const file = path.join(root, relative);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, text);
  }
}

export function readText(root: string, relative: string): string {
  return readFileSync(path.join(root, relative), "utf8");
}

/** A node with defaults; override any field. */
export function node(id: string, fields: Partial<TaskNode> = {}): TaskNode {
  return {
    id,
    order: 0,
    title: `Title of ${id}`,
    goal: `Goal of ${id}`,
    acceptance: [],
    passes: false,
    attempts: 0,
    max_attempts: 3,
    children: [],
    ...fields,
  };
}

export function tree(root: TaskNode): TaskTree {
  return { version: 1, root };
}

/** Whether util-linux `script` is here: it gives the runner a pseudo-terminal (colour, the live progress view). */
export function hasScript(): boolean {
  try {
    execFileSync("script", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** The events of `runner run --json`: every line of stdout one JSON object (a line that is not fails the test). */
export function runEvents(stdout: string): Record<string, unknown>[] {
  return stdout
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}
