// `runner config`: keys of config.toml set or unset in place, all of them in one edit — the rest of
// the file (comments, on the changed line too, blank lines, spacing, key order) stays byte for byte
// — and the result checked as a whole before anything is written, so that switching the agent
// (kind, command, a key that no longer applies) is one edit however invalid each halfway state is.
// The file is edited through its syntax tree (toml-eslint-parser gives every key and value with its
// place in the text; docs/decisions.md 2026-11-26 says why not a line-level edit), and the result is
// parsed again and compared with what the edit means: anything else is refused, never written.
import { formatChange, type Previous } from "./edit-changes.js";
import { parseTOML } from "toml-eslint-parser";
import type { AST } from "toml-eslint-parser";
import { parse as parseToml, stringify as stringifyToml } from "smol-toml";
import { canonicalJson } from "../tree/canonical.js";
import { parseConfig } from "../config/config.js";
import { formatProblem } from "../base/problems.js";
import { PlanEditError } from "./plan-edit.js";
import { jsonObject } from "../base/json-object.js";

/** Keys whose value is an argv: a plain string is split on whitespace (`npm test` → ["npm", "test"]). */
const ARGV_KEYS = new Set(["guard.command", "guard.setup", "executor.command", "hooks.on_iteration", "hooks.on_run_end", "hooks.on_stuck"]);

/** The TOML value a person typed: a TOML literal (`5`, `true`, `["a", "b"]`, `"x"`), else the text as a string. */
export function configValue(key: string, text: string): unknown {
  let value: unknown;
  try {
    value = (parseToml(`v = ${text}`) as { v: unknown }).v;
  } catch {
    value = text;
  }
  if (ARGV_KEYS.has(key) && typeof value === "string") return value.split(/\s+/).filter(Boolean);
  return value;
}

/** One change a person asks for: a key set to a value, or a key unset (its default applies again). */
export type ConfigChange = { key: string; value: unknown } | { key: string; unset: true };

export interface ConfigEdit {
  /** The new text of config.toml. */
  text: string;
  /** The keys changed, in the order given (what the commit's subject and Runner-Key trailers name). */
  keys: string[];
  /** One sentence part per key changed: `executor.kind = "command" (was "codex")` (its Runner-Change trailer). */
  changes: string[];
}

type Raw = Record<string, Record<string, unknown> | unknown>;

const KEY = /^([a-z_]+)\.([a-z_]+)$/;

function splitKey(key: string): [string, string] {
  const match = KEY.exec(key);
  if (!match)
    throw new PlanEditError(`${JSON.stringify(key)} is not a config key; name it as section.key, e.g. guard.command or limits.max_iterations.`);
  return [match[1]!, match[2]!];
}

const shown = (value: unknown) => JSON.stringify(value);

function currentValue(raw: Raw, section: string, name: string): unknown {
  return jsonObject(raw[section])?.[name];
}

/** What the file means after the changes: what the edited text must parse to. */
function expectedAfter(raw: Raw, changes: readonly ConfigChange[]): Raw {
  const next = JSON.parse(JSON.stringify(raw)) as Raw;
  for (const change of changes) {
    const [section, name] = splitKey(change.key);
    const table = (next[section] ??= {}) as Record<string, unknown>;
    // (a section left without keys keeps its header: an empty table)
    if ("unset" in change) delete table[name];
    else table[name] = change.value;
  }
  return next;
}

/** Joins sentence parts: `a`, `a and b`, `a, b and c`. */
function listed(parts: readonly string[]): string {
  return parts.length <= 1 ? (parts[0] ?? "") : `${parts.slice(0, -1).join(", ")}, and ${parts[parts.length - 1]}`;
}

/**
 * The config text with every change made, checked as a whole. A change that changes nothing is left
 * out; when every one is such, the edit is refused ("Nothing to change: …"), as a `runner edit`
 * that changes nothing is. A bad key, a key named twice or an invalid result is one sentence.
 */
export function editConfig(text: string, changes: readonly ConfigChange[]): ConfigEdit {
  const seen = new Set<string>();
  for (const change of changes) {
    splitKey(change.key);
    if (seen.has(change.key)) throw new PlanEditError(`${change.key} is named twice; give each key once (one --set or one --unset).`);
    seen.add(change.key);
  }
  let raw: Raw;
  try {
    raw = parseToml(text) as Raw;
  } catch {
    throw new PlanEditError(
      "config.toml is not valid TOML (`runner validate` says where); fix it by hand and commit it, then change keys with `runner config`.",
    );
  }
  const effective: ConfigChange[] = [];
  const described: string[] = [];
  const unchanged: string[] = [];
  for (const change of changes) {
    const [section, name] = splitKey(change.key);
    const was = currentValue(raw, section, name);
    const before: Previous = was === undefined ? { set: false } : { set: true, value: was };
    if ("unset" in change) {
      if (was === undefined) unchanged.push(`${change.key} is not set`);
      else {
        effective.push(change);
        described.push(formatChange({ kind: "config-unset", key: change.key, was: before }));
      }
    } else if (was !== undefined && canonicalJson(was) === canonicalJson(change.value)) unchanged.push(`${change.key} is already ${shown(was)}`);
    else {
      effective.push(change);
      described.push(formatChange({ kind: "config", key: change.key, value: change.value, was: before }));
    }
  }
  if (effective.length === 0) throw new PlanEditError(`Nothing to change: ${listed(unchanged)}.`);

  let result = text;
  for (const change of effective) result = applyChange(result, change);

  const byHand = `edit it in config.toml by hand (then commit), or put the key on a line of its own in its [section] first`;
  let after: Raw;
  try {
    after = parseToml(result) as Raw;
  } catch {
    throw new PlanEditError(`${listed(effective.map((c) => c.key))} cannot be changed in place in this config.toml; ${byHand}.`);
  }
  if (canonicalJson(after) !== canonicalJson(expectedAfter(raw, effective)))
    throw new PlanEditError(`${listed(effective.map((c) => c.key))} cannot be changed in place in this config.toml; ${byHand}.`);
  const parsed = parseConfig(result);
  if (!parsed.ok) {
    const what = effective.map((change) => ("unset" in change ? `${change.key} unset` : `${change.key} = ${shown(change.value)}`)).join(", ");
    throw new PlanEditError(`With ${what} the config is invalid (${formatProblem(parsed.problems[0]!)}); nothing was written.`);
  }
  return { text: result, keys: effective.map((change) => change.key), changes: described };
}

/** The one-line TOML text of a value (`[ "npm", "test" ]`); a value TOML writes on several lines is refused. */
function valueText(key: string, value: unknown): string {
  const line = stringifyToml({ v: value }).trim();
  if (line.includes("\n") || !line.startsWith("v = "))
    throw new PlanEditError(`The value of ${key} must fit on one line; edit ${key} in config.toml by hand instead.`);
  return line.slice("v = ".length);
}

function keyNames(key: AST.TOMLKey): string[] {
  return key.keys.map((part) => (part.type === "TOMLBare" ? part.name : String(part.value)));
}

const samePath = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((part, i) => part === b[i]);

/** The start of the line holding `offset`, and the end of it after its line break. */
function lineBounds(text: string, offset: number, end: number): [number, number] {
  const start = text.lastIndexOf("\n", offset - 1) + 1;
  const newline = text.indexOf("\n", end);
  return [start, newline < 0 ? text.length : newline + 1];
}

/** One change made on the text through its syntax tree. */
function applyChange(text: string, change: ConfigChange): string {
  const [section, name] = splitKey(change.key);
  const top = parseTOML(text).body[0];
  let table: AST.TOMLTable | undefined;
  for (const item of top.body) {
    const entries = item.type === "TOMLTable" ? item.body : [item];
    const prefix = item.type === "TOMLTable" ? item.resolvedKey.map(String) : [];
    if (item.type === "TOMLTable" && item.kind === "standard" && samePath(prefix, [section])) table = item;
    for (const entry of entries) {
      if (!samePath([...prefix, ...keyNames(entry.key)], [section, name])) continue;
      if ("unset" in change) {
        const [start, end] = lineBounds(text, entry.range[0], entry.range[1]);
        // (only the key's own line(s): a key that shares its line with something else stays, and the check after the edit refuses)
        if (text.slice(start, entry.range[0]).trim() !== "") return text;
        return text.slice(0, start) + text.slice(end);
      }
      return text.slice(0, entry.value.range[0]) + valueText(change.key, change.value) + text.slice(entry.value.range[1]);
    }
  }
  if ("unset" in change) return text;
  const line = `${name} = ${valueText(change.key, change.value)}\n`;
  if (table) {
    // After the section's last key (and the comment on its line), else right after the header.
    const last = table.body[table.body.length - 1];
    const at = last ? lineBounds(text, last.range[0], last.range[1])[1] : lineBounds(text, table.range[0], table.range[0])[1];
    const before = text.slice(0, at);
    return `${before}${before.endsWith("\n") || before === "" ? "" : "\n"}${line}${text.slice(at)}`;
  }
  const body = text.replace(/\n*$/, "");
  return `${body}${body === "" ? "" : "\n\n"}[${section}]\n${line}`;
}
