// The iteration journal: written before an iteration changes anything, removed once it is
// committed. A runner killed in between leaves it behind, and the next `runner step` finds the
// interrupted iteration here (rather than refusing forever because the working tree is dirty) and
// records it as a runner error. It lives in the git folder: never tracked, never in a commit.
import { readFile, rm } from "node:fs/promises";
import path from "node:path";
import type { InterruptedIteration } from "../core/safety.js";
import { writeFileAtomic } from "./tree-store.js";

/** An interrupted iteration as the next step needs it (core's InterruptedIteration), with its start time. */
export interface JournalEntry extends InterruptedIteration {
  startedAt: string;
}

export const JOURNAL_FILE = "runner-journal.json";

export function journalPath(gitDir: string): string {
  return path.join(gitDir, JOURNAL_FILE);
}

export async function readJournal(gitDir: string): Promise<JournalEntry | undefined> {
  try {
    return JSON.parse(await readFile(journalPath(gitDir), "utf8")) as JournalEntry;
  } catch {
    return undefined; // none (a torn journal cannot exist: it is written atomically)
  }
}

export async function writeJournal(gitDir: string, entry: JournalEntry): Promise<void> {
  // Atomic (a killed runner never leaves half a journal) but not fsync'd: it guards against a killed
  // process, whose writes the page cache keeps, and it is rewritten every iteration.
  await writeFileAtomic(journalPath(gitDir), `${JSON.stringify(entry)}\n`, { durable: false });
}

export async function removeJournal(gitDir: string): Promise<void> {
  await rm(journalPath(gitDir), { force: true });
}
