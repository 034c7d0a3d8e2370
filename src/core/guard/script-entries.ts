// package.json script entries (issue 19): the ones of the guard's definition, read from a manifest,
// compared with the agent's and put back in it, its other changes kept. Pure.
import { isJsonObject } from "../base/json-object.js";

/** package.json script entries the guard runs, with their values in the starting commit (null: absent). */
export interface ProtectedScripts {
  manifest: string;
  /** Entry name → its text at the start (null when the start has none: the agent may not add it). */
  entries: Record<string, string | null>;
}

/** The script entries of `scripts` whose value in `manifestText` (the agent's) differs from the start; null text: the file is gone or unreadable. */
export function changedScriptEntries(scripts: ProtectedScripts, manifestText: string | null): string[] {
  const now = manifestText === null ? undefined : scriptsOf(manifestText);
  return Object.keys(scripts.entries).filter((name) => (now?.[name] ?? null) !== scripts.entries[name]);
}

/**
 * The agent's manifest with the protected entries put back as the start had them (its other
 * changes kept), in its own indentation; undefined when the text is not a JSON object (the whole
 * file is then taken back).
 */
export function restoreScriptEntries(scripts: ProtectedScripts, manifestText: string): string | undefined {
  let data: unknown;
  try {
    data = JSON.parse(manifestText);
  } catch {
    return undefined;
  }
  if (!isRecord(data)) return undefined;
  const current = isRecord(data.scripts) ? { ...data.scripts } : {};
  for (const [name, value] of Object.entries(scripts.entries)) {
    if (value === null) delete current[name];
    else current[name] = value;
  }
  const restored = { ...data, scripts: current };
  if (Object.keys(current).length === 0 && !("scripts" in data)) delete (restored as Record<string, unknown>).scripts;
  const indent = /^\{\s*\n([ \t]+)"/.exec(manifestText)?.[1] ?? "  ";
  return `${JSON.stringify(restored, null, indent)}${manifestText.endsWith("\n") ? "\n" : ""}`;
}

export function scriptsOf(manifestText: string | null): Record<string, string> | undefined {
  if (manifestText === null) return undefined;
  try {
    const data: unknown = JSON.parse(manifestText);
    if (!isRecord(data) || !isRecord(data.scripts)) return undefined;
    return Object.fromEntries(Object.entries(data.scripts).filter((entry): entry is [string, string] => typeof entry[1] === "string"));
  } catch {
    return undefined;
  }
}

const isRecord = isJsonObject;
