// Values read from JSON (or TOML) the runner did not write: an object is a plain object — not null,
// not an array. One check for every reader (a tree, a plan, an agent's events, a log, a config).

export type JsonObject = Record<string, unknown>;

export function isJsonObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** `value` when it is a plain object, else undefined. */
export function jsonObject(value: unknown): JsonObject | undefined {
  return isJsonObject(value) ? value : undefined;
}
