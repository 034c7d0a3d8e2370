// Helpers for the guardrail, crash-safety, lock and bad-input tests: the runner binary with the
// signal it died of, snapshots of everything a refused command must leave alone, and cheap copies
// of a template repository.
import { execa } from "execa";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { expect } from "vitest";
import { git, RUNNER_BIN, testEnv } from "./sandbox.js";

export interface RawResult {
  /** null when the runner died of a signal. */
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  pid: number | undefined;
}

/** Runs the built binary and reports how it ended, a death by signal included. */
export async function runRaw(cwd: string, args: string[], env: Record<string, string> = testEnv(), timeout = 90_000): Promise<RawResult> {
  const child = execa("node", [RUNNER_BIN, ...args], { cwd, env, extendEnv: false, reject: false, timeout });
  const result = await child;
  return {
    exitCode: result.exitCode ?? null,
    signal: result.signal ?? null,
    stdout: String(result.stdout),
    stderr: String(result.stderr),
    pid: child.pid,
  };
}

/** What a command that refuses must leave exactly as it was. */
export interface RepoSnapshot {
  head: string;
  branch: string;
  porcelain: string;
  treeBytes: Buffer | undefined;
}

export async function snapshot(dir: string, treeFile = ".runner/state/tree.json"): Promise<RepoSnapshot> {
  const env = testEnv();
  const head = await git(dir, ["rev-parse", "--verify", "-q", "HEAD"], env).catch(() => "(no commits)");
  const branch = await git(dir, ["symbolic-ref", "-q", "HEAD"], env).catch(() => "(detached)");
  const porcelain = await git(dir, ["status", "--porcelain", "--untracked-files=all"], env);
  const file = path.join(dir, treeFile);
  return { head: head.trim(), branch: branch.trim(), porcelain, treeBytes: existsSync(file) ? readFileSync(file) : undefined };
}

export function expectSameSnapshot(after: RepoSnapshot, before: RepoSnapshot, label: string): void {
  expect(after.head, `${label}: HEAD`).toBe(before.head);
  expect(after.branch, `${label}: branch`).toBe(before.branch);
  expect(after.porcelain, `${label}: git status`).toBe(before.porcelain);
  expect(after.treeBytes?.equals(before.treeBytes ?? Buffer.alloc(0)) ?? before.treeBytes === undefined, `${label}: tree bytes`).toBe(true);
}

/** Temp files of atomic writes (`.<name>.<pid>.tmp`) left in a folder. */
export function tempFilesIn(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((name) => /^\..+\.tmp$/.test(name));
}

/** The lines of stderr, blank ones dropped. */
export function stderrLines(stderr: string): string[] {
  return stderr.split("\n").filter((line) => line.trim() !== "");
}

/** Whether a message tells the user to run git by hand (the runner must clean up itself). */
export const ASKS_FOR_GIT = /`git |git (reset|stash|checkout|commit|add|rm|clean)\b|commit or stash/;
