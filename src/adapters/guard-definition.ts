// The guard's definition as a commit has it (src/core/guard-definition.ts), read from git alone:
// the files it needs are read at the revision, round after round, until nothing is left unread.
import { protectGuardDefinition, type ResolvedConfig } from "../core/config.js";
import { deriveGuardDefinition, type GuardDefinition } from "../core/guard-definition.js";
import type { GitRepo } from "./git.js";

/** Rounds of reading (each follows one more level of definitions calling definitions). */
const MAX_ROUNDS = 12;

export interface DefinitionAt {
  guard: readonly string[];
  definition: GuardDefinition;
  texts: ReadonlyMap<string, string | null>;
}

/** The definition of `guard` at `revision`, with the texts it was derived from. */
export async function guardDefinitionAt(git: GitRepo, revision: string, guard: readonly string[]): Promise<DefinitionAt> {
  const texts = new Map<string, string | null>();
  let derived = deriveGuardDefinition(guard, texts);
  for (let round = 0; round < MAX_ROUNDS && derived.unread.length > 0; round++) {
    const read = await git.filesAtRevision(revision, derived.unread);
    derived.unread.forEach((file, i) => texts.set(file, read[i] ?? null));
    derived = deriveGuardDefinition(guard, texts);
  }
  return { guard, definition: derived.definition, texts };
}

/** The config as a step applies it: the guard's definition at the starting commit protected too (none before the first commit). */
export async function withGuardDefinition(git: GitRepo, head: string | undefined, config: ResolvedConfig): Promise<ResolvedConfig> {
  if (head === undefined) return config;
  const { definition } = await guardDefinitionAt(git, head, config.guard.command);
  return protectGuardDefinition(config, definition);
}
