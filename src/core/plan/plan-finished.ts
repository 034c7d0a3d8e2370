// Work a plan says is finished, and how the guard judges it first (docs/plans.md, docs/decisions.md
// "Half-done plans"). `runner init --plan` and `runner import` list the leaves the plan marks finished
// in .runner/state/finished.json — a file only a person's edit changes: it is always protected, so an
// agent's change to it is taken back and fails its iteration, and audit flags a loop commit that
// changed it. A listed leaf that no iteration of the run has touched is *pending*: when selection
// reaches it, the step runs no agent but the guard alone (a re-check), and one green guard passes it
// together with every other pending leaf (the batch), since the guard judges the whole commit, not a
// leaf. A red guard leaves them all open; only the selected one is then done with its first judgement.
import { LAYOUT } from "../base/layout.js";
import type { LoopRecord } from "../commit/loop-history.js";
import { orderedChildren, type TaskNode, type TaskTree } from "../tree/tree.js";
import { jsonObject } from "../base/json-object.js";

export const FINISHED_FILE = LAYOUT.finished;

const ABOUT =
  "Leaves the imported plan marks finished: each is judged first by the guard alone, without an agent (docs/plans.md). Written by `runner init --plan` and `runner import`; the agent cannot change it.";

/** The file's text: the same ids give the same bytes. */
export function formatFinished(ids: readonly string[]): string {
  return `${JSON.stringify({ version: 1, about: ABOUT, finished: ids }, null, 2)}\n`;
}

/** The ids of finished.json, or the problem that makes it unreadable (one phrase). */
export function parseFinished(text: string): { ok: true; ids: string[] } | { ok: false; problem: string } {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return { ok: false, problem: "is not valid JSON" };
  }
  const record = jsonObject(data);
  if (!record || record.version !== 1) return { ok: false, problem: 'must be an object with "version": 1' };
  const ids = record.finished;
  if (!Array.isArray(ids) || ids.some((id) => typeof id !== "string")) return { ok: false, problem: 'must have "finished": a list of node ids' };
  return { ok: true, ids: ids as string[] };
}

/** How long the list of a batch may grow (its ids, space-separated): it is given to the guard in one environment variable. */
export const MAX_BATCH_CHARS = 32 * 1024;

/**
 * The pending leaves, in the order selection reaches them: listed in finished.json, open, never
 * attempted, and named by no loop commit of this run (no iteration has judged them yet).
 */
export function pendingFinished(tree: TaskTree, finished: readonly string[], records: readonly LoopRecord[]): string[] {
  if (finished.length === 0) return [];
  const listed = new Set(finished);
  for (const record of records) if (record.subject.kind !== "repair") listed.delete(record.subject.nodeId);
  const pending: string[] = [];
  const stack: TaskNode[] = [tree.root];
  while (stack.length > 0 && listed.size > 0) {
    const node = stack.pop()!;
    if (node.passes) continue;
    if (node.children.length === 0) {
      if (listed.has(node.id) && node.attempts === 0) pending.push(node.id);
      continue;
    }
    const children = orderedChildren(node);
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
  return pending;
}

/**
 * The leaves one re-check judges when selection reached `selectedId`: it first, then the other
 * pending leaves in order, as many as MAX_BATCH_CHARS allows; undefined when it is not pending
 * (the agent works on it as on any leaf).
 */
export function recheckBatch(pending: readonly string[], selectedId: string): string[] | undefined {
  if (!pending.includes(selectedId)) return undefined;
  const batch = [selectedId];
  let length = selectedId.length;
  for (const id of pending) {
    if (id === selectedId) continue;
    if (length + 1 + id.length > MAX_BATCH_CHARS) break;
    batch.push(id);
    length += 1 + id.length;
  }
  return batch;
}
