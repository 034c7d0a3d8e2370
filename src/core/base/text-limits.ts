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

/**
 * A line that says what failed, in the words of common test runners (TAP "not ok", "FAIL", an
 * assertion error, a ✗ mark, "N failed").
 */
export const FAILING_LINE = /^\s*(?:not ok\b|FAIL\b|FAILED\b|[✗✖×]\s)|AssertionError|\bError:|\bfailed\b/;

/** Of an excerpt that shows the first failure: the output's start, the failure's window, the output's end. */
export const EXCERPT_HEAD = 1500;
export const FAILURE_WINDOW = 1200;

/**
 * The excerpt of a process's output (the agent is told it, the commit keeps it, run/show/log quote
 * it): up to FEEDBACK_LIMIT characters whole; longer, as truncateForAgent cuts it — unless the first
 * failing line (FAILING_LINE) lies between the parts that keeps, then the first EXCERPT_HEAD
 * characters, the FAILURE_WINDOW from that line on, and the last FEEDBACK_TAIL, each apart by
 * ELISION. `head`: the output's first characters (at least FEEDBACK_HEAD); `tail`: its last (at
 * least FEEDBACK_TAIL); `failure.at`: where the first failing line starts in the output of `total` characters.
 */
export function outputExcerpt(head: string, tail: string, total: number, failure?: { at: number; text: string }): string {
  if (total <= head.length) return truncateForAgent(head);
  const between = failure !== undefined && failure.at >= FEEDBACK_HEAD && failure.at < total - FEEDBACK_TAIL;
  if (!between) return truncateForAgent(head + tail);
  const window = clip(failure.text, Math.min(FAILURE_WINDOW, total - FEEDBACK_TAIL - failure.at));
  let end = tail.length - FEEDBACK_TAIL;
  if (isLowSurrogate(tail.charCodeAt(end))) end += 1;
  return `${clip(head, EXCERPT_HEAD)}${ELISION}${window}${ELISION}${tail.slice(end)}`;
}

/** The first `max` characters of `text`, never half a surrogate pair. */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  return text.slice(0, isHighSurrogate(text.charCodeAt(max - 1)) ? max - 1 : max);
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/**
 * The longest line a commit message keeps; longer ones end in "…". As long as the whole excerpt the
 * agent is told (FEEDBACK_LIMIT), so the failure the next iteration reads back from the commit is the
 * bounded excerpt itself, not a shorter cut of it.
 */
export const LINE_LIMIT = FEEDBACK_LIMIT;

/** ANSI escape sequences (colour, cursor movement): dropped whole, so their bytes are not shown as escapes. */
// eslint-disable-next-line no-control-regex
const ANSI_SEQUENCE = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-Z\\-_]/g;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * Text anyone but the runner wrote (the guard's output, the agent's summary), made safe for a commit
 * message and a terminal, deterministically: ANSI sequences dropped, `\r\n` and a lone `\r` made
 * `\n`, every other control byte (NUL included) written as `\xNN`, a lone surrogate (invalid UTF-8
 * was decoded to U+FFFD already) made U+FFFD, and a line over LINE_LIMIT characters clipped with "…".
 */
export function safeText(text: string): string {
  return text
    .replace(ANSI_SEQUENCE, "")
    .replace(/\r\n?/g, "\n")
    .replace(CONTROL, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`)
    .replace(LONE_SURROGATE, "\ufffd")
    .split("\n")
    .map((line) => (line.length > LINE_LIMIT ? `${clip(line, LINE_LIMIT - 1)}…` : line))
    .join("\n");
}

/** `text` on one line (every run of whitespace one space), clipped to `max` characters with "…". */
export function oneLine(text: string, max = 300): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** Environment variable names whose values are secrets. */
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

/** "a, b, c and 4 more": the first few of a list, then how many are left. */
export function firstFew(items: readonly string[], shown = 3): string {
  const head = items
    .slice(0, shown)
    .map((item) => (item.length > 60 ? `${item.slice(0, 59)}…` : item))
    .join(", ");
  return items.length > shown ? `${head} and ${items.length - shown} more` : head;
}

/** "1 task" / "3 tasks". */
export function count(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`;
}
