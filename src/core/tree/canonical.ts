// Canonical tree serialization (CONTRACT §3, in serialize.ts) and RFC 8785 fingerprints.
import canonicalize from "canonicalize";
import { createHash } from "node:crypto";
import { sortedCopy, type TaskNode, type TaskTree } from "./tree.js";

export { serializeTree, serializeTreeBody } from "./serialize.js";

/** RFC 8785 (JCS) form of any JSON value; nodes are compared in this form for immutability. */
export function canonicalJson(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new TypeError("value has no JSON form");
  return text;
}

/** The RFC 8785 form of one node, its subtree included. */
export function canonicalNode(node: TaskNode): string {
  return canonicalJson(node);
}

/** sha256 of the RFC 8785 form of the tree with its children sorted: equal for equal trees. */
export function treeFingerprint(tree: TaskTree): string {
  return createHash("sha256")
    .update(canonicalJson(sortedCopy(tree)))
    .digest("hex");
}
