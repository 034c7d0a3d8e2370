// The on-disk form of a tree (CONTRACT §3). Apart from canonical.ts (RFC 8785 and fingerprints) so
// that writing and checking a tree loads neither the canonicalize package nor node:crypto.
import { isInCanonicalForm, sortedCopy, type TaskTree } from "./tree.js";

/**
 * The on-disk form of a tree: keys in schema order, every children array sorted by (order, id),
 * two-space indent, `\n` line ends and one trailing newline. The same tree always gives the same bytes.
 */
export function serializeTree(tree: TaskTree): string {
  return `${serializeTreeBody(tree)}\n`;
}

/**
 * `serializeTree` without the trailing newline (a writer adds it as one byte, instead of a second
 * copy of a large string). A tree already in canonical form (as the runner's state update leaves
 * it) is written as it is; any other is copied in sorted form first.
 */
export function serializeTreeBody(tree: TaskTree): string {
  return JSON.stringify(isInCanonicalForm(tree) ? tree : sortedCopy(tree), null, 2);
}
