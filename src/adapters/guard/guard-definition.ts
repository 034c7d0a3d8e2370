// The guard's definition as a commit has it (src/core/guard/guard-definition.ts), read from git alone:
// the files it needs are read at the revision, round after round, until nothing is left unread.
import { protectGuardDefinition, type ResolvedConfig } from "../../core/config/config.js";
import { lstatSync } from "node:fs";
import { readFile } from "node:fs/promises";
import {
  changedScriptEntries,
  deriveGuardDefinition,
  describeGuardDefinition,
  LIKELY_DEFINITION_FILES,
  restoreScriptEntries,
  type GuardDefinition,
  type ProtectedScripts,
} from "../../core/guard/guard-definition.js";
import type { GitRepo } from "../git/git.js";
import type { IterationLog } from "../records/iteration-log.js";
import { projectPath } from "../files/project-files.js";
import { writeSafely } from "../files/safe-files.js";

/** Rounds of reading (each follows one more level of definitions calling definitions). */
const MAX_ROUNDS = 12;

export interface DefinitionAt {
  guard: readonly string[];
  definition: GuardDefinition;
  texts: ReadonlyMap<string, string | null>;
}

/** The definition of `guard` at `revision`, with the texts it was derived from (read through `git`: a repository or an open object reader). */
export async function guardDefinitionAt(git: Pick<GitRepo, "filesAtRevision">, revision: string, guard: readonly string[]): Promise<DefinitionAt> {
  const texts = new Map<string, string | null>();
  let derived = deriveGuardDefinition(guard, texts);
  // (the files most definitions lead to are read in the first round: one git process for the common guards)
  let wanted = [...new Set([...derived.unread, ...LIKELY_DEFINITION_FILES])];
  for (let round = 0; round < MAX_ROUNDS && wanted.length > 0; round++) {
    const read = await git.filesAtRevision(revision, wanted);
    wanted.forEach((file, i) => texts.set(file, read[i] ?? null));
    derived = deriveGuardDefinition(guard, texts);
    wanted = derived.unread;
  }
  return { guard, definition: derived.definition, texts };
}

/** The config as a step applies it: the guard's definition at the starting commit protected too (none before the first commit). */
export async function withGuardDefinition(git: GitRepo, head: string | undefined, config: ResolvedConfig): Promise<ResolvedConfig> {
  if (head === undefined) return config;
  const { definition } = await guardDefinitionAt(git, head, config.guard.command);
  return protectGuardDefinition(config, definition);
}

/**
 * Takes back the agent's change of a protected package.json script entry (issue 19): the start's
 * entries put back, the agent's other changes to the manifest (a dependency) kept; the manifest
 * restored whole when it is no longer a JSON object, or when nothing else changed. The agent's
 * version is kept in the iteration's log (protected-scripts.patch). Returns the entries named
 * ("package.json scripts.test") and the manifests now as the start has them.
 */
export async function takeBackScriptEntries(
  root: string,
  git: GitRepo,
  start: string,
  scripts: readonly ProtectedScripts[],
  changedPaths: readonly string[],
  log: IterationLog,
): Promise<{ named: string[]; unchanged: string[] }> {
  const named: string[] = [];
  const unchanged: string[] = [];
  let patch = "";
  for (const protectedScripts of scripts) {
    const { manifest } = protectedScripts;
    if (!changedPaths.includes(manifest)) continue;
    const file = projectPath(root, manifest);
    const info = lstatSync(file, { throwIfNoEntry: false });
    const agentText = info?.isFile() ? await readFile(file, "utf8") : null;
    const changed = changedScriptEntries(protectedScripts, agentText);
    if (changed.length === 0) continue;
    named.push(...changed.map((name) => `${manifest} scripts.${name}`));
    patch += await git.raw(["diff", "--no-color", "--no-ext-diff", "--no-textconv", start, "--", manifest]).catch(() => "");
    const restored = agentText === null ? undefined : restoreScriptEntries(protectedScripts, agentText);
    const startText = await git.showFile(start, manifest);
    if (restored === undefined || (startText !== undefined && sameJson(startText, restored))) {
      await git.restorePaths([manifest], start);
      unchanged.push(manifest);
    } else {
      writeSafely(file, restored);
    }
  }
  if (patch !== "") log.write("protected-scripts.patch", patch);
  return { named, unchanged };
}

function sameJson(a: string, b: string): boolean {
  try {
    return JSON.stringify(JSON.parse(a)) === JSON.stringify(JSON.parse(b));
  } catch {
    return false;
  }
}

/** For `runner init` and `runner doctor`: what protects `guard` at HEAD, in a sentence's end ("justfile, scripts/ci.sh"); undefined before the first commit. */
export async function guardDefinitionSummary(git: GitRepo, guard: readonly string[]): Promise<string | undefined> {
  const head = await git.resolve("HEAD");
  if (head === undefined) return undefined;
  return describeGuardDefinition((await guardDefinitionAt(git, head, guard)).definition);
}
