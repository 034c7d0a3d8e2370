// `runner config <section.key> --set VALUE`: one key of config.toml changed in place — the other
// lines, comments included, stay as they are — and the result checked like any config before it
// is written.
import { parse as parseToml, stringify as stringifyToml } from "smol-toml";
import { parseConfig } from "./config.js";
import { formatProblem } from "./problems.js";
import { PlanEditError } from "./plan-edit.js";

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

/** The config text with `section.key` set to `value`, checked; a bad key or value is one sentence. */
export function setConfigValue(text: string, key: string, value: unknown): string {
  const match = /^([a-z_]+)\.([a-z_]+)$/.exec(key);
  if (!match)
    throw new PlanEditError(`${JSON.stringify(key)} is not a config key; name it as section.key, e.g. guard.command or limits.max_iterations.`);
  const [, section, name] = match as unknown as [string, string, string];
  const line = stringifyToml({ [name]: value }).trim();
  if (line.includes("\n")) throw new PlanEditError(`The value of ${key} must fit on one line; edit ${key} in config.toml by hand instead.`);
  const lines = text.split("\n");
  const header = lines.findIndex((each) => each.trim() === `[${section}]`);
  let next: string[];
  if (header < 0) {
    next = [...lines];
    while (next.length > 0 && next[next.length - 1] === "") next.pop();
    next.push("", `[${section}]`, line, "");
  } else {
    let end = lines.findIndex((each, i) => i > header && /^\s*\[/.test(each));
    if (end < 0) end = lines.length;
    const at = lines.findIndex((each, i) => i > header && i < end && new RegExp(`^\\s*${name}\\s*=`).test(each));
    next = [...lines];
    if (at >= 0) next[at] = line;
    else next.splice(header + 1, 0, line);
  }
  const result = next.join("\n");
  const parsed = parseConfig(result);
  if (!parsed.ok)
    throw new PlanEditError(
      `With ${key} = ${stringifyToml({ v: value }).trim().slice(4)} the config is invalid (${formatProblem(parsed.problems[0]!)}); nothing was written.`,
    );
  const raw = parseToml(result) as Record<string, Record<string, unknown>>;
  if (JSON.stringify(raw[section]?.[name]) !== JSON.stringify(value))
    throw new PlanEditError(`${key} spans several lines in config.toml; edit it there by hand (then commit), or put it on one line first.`);
  return result;
}
