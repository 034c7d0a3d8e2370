// Where each run began (CONTRACT §7, `Runner-Start`): `runner start` records the commit it left the
// new run branch at, in the runner's state folder outside the repository, before any agent runs.
// The run's first loop commit names it in its `Runner-Start` trailer (read by the step before the
// agent runs), so that `runner audit` judges every commit after it — a hand commit before the first
// iteration included — and the record travels with the branch in the runner's own words.
import { readFileSync } from "node:fs";
import path from "node:path";
import { writeFileAtomic } from "../files/tree-store.js";
import type { RepositoryStatePaths } from "./runner-state.js";

const FILE = "run-starts.json";
const SHA = /^[0-9a-f]{40,64}$/;

/** Every recorded run start of this checkout: run id → commit. Unreadable or odd entries are left out. */
export function readRunStarts(state: Pick<RepositoryStatePaths, "dir">): Record<string, string> {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path.join(state.dir, FILE), "utf8"));
  } catch {
    return {};
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) return {};
  const starts: Record<string, string> = {};
  for (const [runId, sha] of Object.entries(value)) if (typeof sha === "string" && SHA.test(sha)) starts[runId] = sha;
  return starts;
}

/** Records that run `runId` begins at `sha` (a later `runner start` of the same id replaces it). */
export async function recordRunStart(state: Pick<RepositoryStatePaths, "dir">, runId: string, sha: string): Promise<void> {
  await writeFileAtomic(path.join(state.dir, FILE), `${JSON.stringify({ ...readRunStarts(state), [runId]: sha }, null, 2)}\n`);
}
