// What the agent is shown is bounded (CONTRACT §9, seed 004 §11), and nothing the runner writes
// carries a secret (CONTRACT §9).

export const FEEDBACK_LIMIT = 4000;
export const FEEDBACK_HEAD = 2500;
export const FEEDBACK_TAIL = 1000;
export const ELISION = "\n...\n";

/** Over 4000 characters: the first 2500, then `\n...\n`, then the last 1000. */
export function truncateForAgent(text: string): string {
  if (text.length <= FEEDBACK_LIMIT) return text;
  let head = FEEDBACK_HEAD;
  let tail = text.length - FEEDBACK_TAIL;
  // Never cut a surrogate pair in half.
  if (isHighSurrogate(text.charCodeAt(head - 1))) head -= 1;
  if (isLowSurrogate(text.charCodeAt(tail))) tail += 1;
  return `${text.slice(0, head)}${ELISION}${text.slice(tail)}`;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** Environment variable names whose values are secrets. */
/** `text` on one line (every run of whitespace one space), clipped to `max` characters with "…". */
export function oneLine(text: string, max = 300): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

export const SECRET_NAME = /TOKEN|SECRET|KEY|PASSWORD/i;
/** Shorter values are not redacted: replacing every "1" or "on" would destroy the logs and hide nothing. */
export const MIN_SECRET_LENGTH = 4;
export const REDACTED = "***";

/** The secret values of an environment, longest first (so a value containing another is replaced whole). */
export function secretValues(env: Readonly<Record<string, string | undefined>>): string[] {
  const values = new Set<string>();
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && value.length >= MIN_SECRET_LENGTH && SECRET_NAME.test(name)) values.add(value);
  }
  return [...values].sort((a, b) => b.length - a.length || (a < b ? -1 : 1));
}

/** Replaces every secret value by `***`. */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  return out;
}
