// What a person's edit changed, in one vocabulary both ways (CONTRACT §11, `Runner-Change`): the
// edit commands word their trailers with `formatChange`, and `runner audit` computes the changes
// between the trees (or configs) before and after the commit and compares them with what the
// trailers say (`parseChange`) — a runner-made edit says exactly what it did.
import { parse as parseToml } from "smol-toml";
import { canonicalJson } from "../tree/canonical.js";
import { LAYOUT } from "../base/layout.js";
import type { TaskNode, TaskTree } from "../tree/tree.js";
import { isJsonObject } from "../base/json-object.js";

/** A field of an open node a person may change. */
export type EditedField = "title" | "goal" | "acceptance" | "order" | "max_attempts";

export type EditChange =
  | { kind: "added"; node: string; parent: string }
  /** An added subtree that came from a plan file (`runner import`): the same change as "added", told with its source. */
  | { kind: "imported"; node: string; parent: string; file: string; count: number }
  | { kind: "removed"; node: string; parent: string }
  | { kind: "moved"; node: string; from: string; to: string }
  | { kind: "field"; node: string; field: EditedField; from?: number; to?: number }
  | { kind: "new-root"; node: string; over: string }
  /** Leaves a plan marked finished, listed in finished.json for the guard to judge first (`runner import`). */
  | { kind: "finished"; count: number }
  /** Finished items a plan import left out (`--skip-done`), listed in GOAL.md. */
  | { kind: "goal-done"; count: number }
  /** A config key set; `was`: what it held before (told, not compared: the diff says what changed). */
  | { kind: "config"; key: string; value: unknown; was?: Previous }
  | { kind: "config-unset"; key: string; was?: Previous };

/** A config key's value before an edit: unset, or a value. */
export type Previous = { set: false } | { set: true; value: unknown };

const previous = (was: Previous | undefined) => (was === undefined ? "" : ` (was ${was.set ? JSON.stringify(was.value) : "not set"})`);

const quote = (id: string) => JSON.stringify(id);

/** One Runner-Change line. */
export function formatChange(change: EditChange): string {
  switch (change.kind) {
    case "added":
      return `added ${quote(change.node)} under ${quote(change.parent)}`;
    case "imported":
      return `imported ${quote(change.node)} under ${quote(change.parent)} from ${change.file.replace(/\s+/g, " ")} (${change.count} node${change.count === 1 ? "" : "s"})`;
    case "removed":
      return `removed ${quote(change.node)} from ${quote(change.parent)}`;
    case "moved":
      return `moved ${quote(change.node)} from ${quote(change.from)} to ${quote(change.to)}`;
    case "field":
      return `${change.field} of ${quote(change.node)}${change.from !== undefined && change.to !== undefined ? ` from ${change.from} to ${change.to}` : ""}`;
    case "new-root":
      return `new root ${quote(change.node)} over the passed ${quote(change.over)}`;
    case "finished":
      return `${change.count} finished leaves for the guard to judge first`;
    case "goal-done":
      return `${change.count} finished items left out, listed in ${LAYOUT.goal}`;
    case "config":
      return `${change.key} = ${JSON.stringify(change.value)}${previous(change.was)}`;
    case "config-unset":
      return `${change.key} unset${previous(change.was)}`;
  }
}

const ID = String.raw`"([A-Za-z0-9][A-Za-z0-9._-]{0,127})"`;
const LINE_PATTERNS: [RegExp, (m: RegExpExecArray) => EditChange][] = [
  [new RegExp(`^added ${ID} under ${ID}$`), (m) => ({ kind: "added", node: m[1]!, parent: m[2]! })],
  [
    // (the source is told, not checked: the tree says what was added)
    new RegExp(`^imported ${ID} under ${ID}(?: from (.+) \\((\\d+) nodes?\\))?$`),
    (m) => ({ kind: "imported", node: m[1]!, parent: m[2]!, file: m[3] ?? "", count: Number(m[4] ?? 0) }),
  ],
  [new RegExp(`^removed ${ID} from ${ID}$`), (m) => ({ kind: "removed", node: m[1]!, parent: m[2]! })],
  [new RegExp(`^moved ${ID} from ${ID} to ${ID}$`), (m) => ({ kind: "moved", node: m[1]!, from: m[2]!, to: m[3]! })],
  [new RegExp(`^new root ${ID} over the passed ${ID}$`), (m) => ({ kind: "new-root", node: m[1]!, over: m[2]! })],
  [
    // (`runner unstick` adds how many attempts were spent; older edits name the field alone)
    new RegExp(`^(title|goal|acceptance|order|max_attempts) of ${ID}(?: from (-?\\d+) to (-?\\d+))?(?: \\(attempts spent: \\d+\\))?$`),
    (m) => ({
      kind: "field",
      node: m[2]!,
      field: m[1] as EditedField,
      ...(m[3] !== undefined ? { from: Number(m[3]), to: Number(m[4]) } : {}),
    }),
  ],
  [/^([a-z_]+\.[a-z_]+) unset(?: \(was .*\))?$/, (m) => ({ kind: "config-unset", key: m[1]! })],
  [/^(\d+) finished leaves for the guard to judge first$/, (m) => ({ kind: "finished", count: Number(m[1]) })],
  [/^(\d+) finished items left out, listed in \S+$/, (m) => ({ kind: "goal-done", count: Number(m[1]) })],
];

/** A Runner-Change line read back; undefined when it says nothing this vocabulary knows. */
export function parseChange(line: string): EditChange | undefined {
  for (const [pattern, build] of LINE_PATTERNS) {
    const match = pattern.exec(line);
    if (match) return build(match);
  }
  const config = /^([a-z_]+\.[a-z_]+) = (.*)$/.exec(line);
  if (!config) return undefined;
  // The value, then perhaps " (was …)": the longest prefix that is JSON is the value.
  const rest = config[2]!;
  const ends = [rest.length];
  for (let at = rest.lastIndexOf(" (was "); at > 0; at = rest.lastIndexOf(" (was ", at - 1)) ends.push(at);
  for (const end of ends) {
    try {
      return { kind: "config", key: config[1]!, value: JSON.parse(rest.slice(0, end)) as unknown };
    } catch {
      // not JSON up to there
    }
  }
  return undefined;
}

interface Placed {
  node: TaskNode;
  parent: string | undefined;
}

function placed(tree: TaskTree): Map<string, Placed> {
  const map = new Map<string, Placed>();
  const stack: Placed[] = [{ node: tree.root, parent: undefined }];
  while (stack.length > 0) {
    const entry = stack.pop()!;
    map.set(entry.node.id, entry);
    for (const child of entry.node.children) stack.push({ node: child, parent: entry.node.id });
  }
  return map;
}

/**
 * The changes between two trees in edit terms: nodes added (the top of each new subtree), removed
 * (the top of each removed subtree), moved to another parent, fields of a node changed, a new root
 * over the old one. `passes` and `attempts` are not edits (the owned-field rules judge them).
 * Sorted, so two descriptions of one diff compare equal.
 */
export function treeChanges(before: TaskTree, after: TaskTree): EditChange[] {
  const was = placed(before);
  const now = placed(after);
  const changes: EditChange[] = [];
  const newRoot = !was.has(after.root.id) && now.get(before.root.id)?.parent === after.root.id;
  if (newRoot) changes.push({ kind: "new-root", node: after.root.id, over: before.root.id });
  for (const [id, { node, parent }] of now) {
    const old = was.get(id);
    if (!old) {
      if (parent !== undefined && (was.has(parent) || (newRoot && parent === after.root.id))) changes.push({ kind: "added", node: id, parent });
      continue;
    }
    const movedAway = old.parent !== parent && !(newRoot && id === before.root.id);
    if (movedAway && old.parent !== undefined && parent !== undefined) changes.push({ kind: "moved", node: id, from: old.parent, to: parent });
    for (const field of ["title", "goal"] as const) if (node[field] !== old.node[field]) changes.push({ kind: "field", node: id, field });
    if (canonicalJson(node.acceptance) !== canonicalJson(old.node.acceptance)) changes.push({ kind: "field", node: id, field: "acceptance" });
    if (!movedAway && node.order !== old.node.order && !(newRoot && id === before.root.id))
      changes.push({ kind: "field", node: id, field: "order", from: old.node.order, to: node.order });
    if (node.max_attempts !== old.node.max_attempts)
      changes.push({ kind: "field", node: id, field: "max_attempts", from: old.node.max_attempts, to: node.max_attempts });
  }
  for (const [id, { parent }] of was) {
    if (now.has(id) || parent === undefined || !now.has(parent)) continue;
    changes.push({ kind: "removed", node: id, parent });
  }
  return sortChanges(changes);
}

/** The changes between two configs, each flattened to `section.key` → value. */
export function configChanges(before: Readonly<Record<string, unknown>>, after: Readonly<Record<string, unknown>>): EditChange[] {
  const changes: EditChange[] = [];
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (!(key in after)) changes.push({ kind: "config-unset", key });
    else if (!(key in before) || canonicalJson(before[key]) !== canonicalJson(after[key])) changes.push({ kind: "config", key, value: after[key] });
  }
  return sortChanges(changes);
}

/** config.toml's text as `section.key` → value; undefined when it is no TOML. */
export function configValues(text: string): Record<string, unknown> | undefined {
  try {
    return flattenConfig(parseToml(text) as Record<string, unknown>);
  } catch {
    return undefined;
  }
}

/** A config as `section.key` → value (tables one level deep, as config.toml has them). */
export function flattenConfig(raw: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const flat: Record<string, unknown> = {};
  for (const [section, table] of Object.entries(raw)) {
    if (isJsonObject(table)) {
      for (const [key, value] of Object.entries(table)) flat[`${section}.${key}`] = value;
    } else {
      flat[section] = table;
    }
  }
  return flat;
}

function changeKey(change: EditChange): string {
  switch (change.kind) {
    case "field":
      return `field ${change.node} ${change.field}`;
    case "config":
    case "config-unset":
      return `config ${change.key}`;
    case "imported":
      return `added ${change.node}`;
    case "finished":
    case "goal-done":
      return change.kind;
    default:
      return `${change.kind} ${change.node}`;
  }
}

function sortChanges(changes: EditChange[]): EditChange[] {
  return changes.sort((a, b) => (changeKey(a) < changeKey(b) ? -1 : changeKey(a) > changeKey(b) ? 1 : 0));
}

/**
 * What the trailers say against what the commit did: the lines of changes said but not made, and of
 * changes made but not said (each as `formatChange` words it). A said change matches a made one of
 * the same node and field (or key); where the saying gives values (from/to, a config value), they
 * must be the made ones.
 */
export function unsaidChanges(said: readonly EditChange[], made: readonly EditChange[]): { notMade: string[]; notSaid: string[] } {
  const madeBy = new Map(made.map((change) => [changeKey(change), change]));
  const notMade: string[] = [];
  const matched = new Set<string>();
  for (const change of said) {
    const key = changeKey(change);
    const actual = madeBy.get(key);
    if (actual === undefined || !agrees(change, actual)) notMade.push(formatChange(change));
    else matched.add(key);
  }
  const notSaid = made.filter((change) => !matched.has(changeKey(change))).map(formatChange);
  return { notMade, notSaid };
}

function agrees(said: EditChange, made: EditChange): boolean {
  if (said.kind === "imported") return made.kind === "added" && made.node === said.node && made.parent === said.parent;
  if (said.kind !== made.kind) return false;
  switch (said.kind) {
    case "field": {
      const actual = made as typeof said;
      return said.from === undefined || (said.from === actual.from && said.to === actual.to);
    }
    case "config":
      return canonicalJson(said.value) === canonicalJson((made as typeof said).value);
    case "finished":
      return said.count === (made as typeof said).count;
    case "goal-done":
      // (GOAL.md is prose: that the import changed it is what can be checked)
      return true;
    default:
      return formatChange(said) === formatChange(made);
  }
}
