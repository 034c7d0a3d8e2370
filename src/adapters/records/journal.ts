// The iteration journal: written before an iteration changes anything, removed once it is
// committed. A runner killed in between leaves it behind, and the next `runner step` finds the
// interrupted iteration here (rather than refusing forever because the working tree is dirty) and
// records it as a runner error. It lives in the runner's own state folder, outside the repository
// (src/adapters/state/runner-state.ts): the agent cannot forge it, and it holds the git control files as
// they were before the agent (what the next step puts back).
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { readFile, rm } from "node:fs/promises";
import type { InterruptedIteration } from "../../core/step/safety.js";
import type { ContainmentRecord } from "../process/containment.js";
import type { ControlSnapshot } from "../../core/step/step-facts.js";
import { writeFileAtomic } from "../files/tree-store.js";

/** An interrupted iteration as the next step needs it (core's InterruptedIteration), with its start time. */
export interface JournalEntry extends InterruptedIteration {
  startedAt: string;
  /** The git control files before the agent ran. */
  control?: ControlSnapshot;
  /** The agent's (then the guard's) contained run: the next step ends what is left of it first. */
  containment?: ContainmentRecord;
}

export async function readJournal(file: string): Promise<JournalEntry | undefined> {
  try {
    return JSON.parse(await readFile(file, "utf8")) as JournalEntry;
  } catch {
    return undefined; // none (a torn journal cannot exist: it is written atomically)
  }
}

export async function writeJournal(file: string, entry: JournalEntry): Promise<void> {
  // Atomic (a killed runner never leaves half a journal) but not fsync'd: it guards against a killed
  // process, whose writes the page cache keeps, and it is rewritten every iteration.
  await writeFileAtomic(file, `${JSON.stringify(entry)}\n`, { durable: false });
}

export async function removeJournal(file: string): Promise<void> {
  await rm(file, { force: true });
}

/**
 * Adds the containment record of a run that has just started to the journal, at once (a runner
 * killed a moment later must leave it behind for the next step to end what is left of the run).
 */
export function recordContainment(file: string, record: ContainmentRecord): void {
  let entry: JournalEntry;
  try {
    entry = JSON.parse(readFileSync(file, "utf8")) as JournalEntry;
  } catch {
    return; // no iteration under way: nothing to record it in
  }
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify({ ...entry, containment: record })}\n`);
  renameSync(temp, file);
}
