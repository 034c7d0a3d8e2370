// The on-disk form of a tree (CONTRACT §3). Apart from canonical.ts (RFC 8785 and fingerprints) so
// that writing and checking a tree loads neither the canonicalize package nor node:crypto.
import { isInCanonicalForm, sortedCopy, type TaskNode, type TaskTree } from "./tree.js";

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

/** About this many characters per piece of `serializeTreePieces`. */
const PIECE_CHARS = 256 * 1024;
/** Subtrees up to this many nodes are written by JSON.stringify itself (faster than a walk in JavaScript). */
const NATIVE_NODES = 512;

/**
 * `serializeTree`'s text in pieces of about 256 K characters, made as they are written: a tree of
 * 100,000 nodes (40 MB of text) never exists as one string, nor does the whole output of
 * JSON.stringify with its buffers. The text is exactly `serializeTree`'s (JSON.stringify with a
 * two-space indent, then one newline): a large node's own fields and the brackets around its children
 * are written here, every subtree of up to a few hundred nodes by JSON.stringify, its lines indented
 * to their depth (a string value holds no raw newline: JSON escapes it).
 */
export function* serializeTreePieces(tree: TaskTree): Generator<string> {
  const canonical = isInCanonicalForm(tree) ? tree : sortedCopy(tree);
  const sizes = subtreeSizes(canonical.root);
  let out = `{\n  "version": ${JSON.stringify(canonical.version)},\n  "root": `;
  // What is left to write, last first: text, or a node to write at an indent.
  const todo: (string | { node: TaskNode; indent: string })[] = ["\n}\n", { node: canonical.root, indent: "  " }];
  while (todo.length > 0) {
    const next = todo.pop()!;
    if (typeof next === "string") out += next;
    else {
      const { node, indent } = next;
      if ((sizes.get(node) ?? 0) <= NATIVE_NODES) {
        out += JSON.stringify(node, null, 2).replaceAll("\n", `\n${indent}`);
      } else {
        // The node's fields but its children, as JSON.stringify writes them, then each child.
        const { children, ...fields } = node;
        const head = JSON.stringify(fields, null, 2).replaceAll("\n", `\n${indent}`);
        out += `${head.slice(0, -2 - indent.length)},\n${indent}  "children": [`;
        const inner = `${indent}    `;
        todo.push(`\n${indent}  ]\n${indent}}`);
        for (let i = children.length - 1; i >= 0; i--) {
          todo.push({ node: children[i]!, indent: inner });
          todo.push(`${i === 0 ? "" : ","}\n${inner}`);
        }
      }
    }
    if (out.length >= PIECE_CHARS) {
      yield out;
      out = "";
    }
  }
  if (out !== "") yield out;
}

/** The number of nodes of every subtree (the node itself included). */
function subtreeSizes(root: TaskNode): Map<TaskNode, number> {
  const sizes = new Map<TaskNode, number>();
  const order: TaskNode[] = [];
  const stack = [root];
  while (stack.length > 0) {
    const node = stack.pop()!;
    order.push(node);
    for (const child of node.children) stack.push(child);
  }
  for (let i = order.length - 1; i >= 0; i--) {
    const node = order[i]!;
    let size = 1;
    for (const child of node.children) size += sizes.get(child)!;
    sizes.set(node, size);
  }
  return sizes;
}
