// How many terminal columns a line takes: East Asian wide and fullwidth characters and emoji take
// two, combining marks, joiners and variation selectors none, colour escape codes none. The live
// block clips its lines by this width and counts the rows it drew by it, so that a title in Chinese
// or with emoji never wraps unseen and leaves stale copies on the screen. Measured per grapheme
// cluster, so an emoji sequence (👩‍💻, 🇫🇷, 👍🏽) counts once.

/** SGR escape sequences (colour): zero columns, kept whole when a line is clipped. */
// eslint-disable-next-line no-control-regex -- the escape character is what these codes start with
const SGR = /\x1b\[[0-9;]*m/g;
const PLAIN_ASCII = /^[\x20-\x7e]*$/;
const EMOJI_PRESENTATION = /\p{Emoji_Presentation}/u;
const EMOJI = /\p{Emoji}/u;
const ELLIPSIS = "…";

/**
 * Code point ranges of East Asian Width W and F (Unicode 15.1) outside the emoji, which the
 * Emoji_Presentation property covers: Hangul, CJK, kana, Yi, fullwidth forms and the like.
 */
const WIDE: readonly (readonly [number, number])[] = [
  [0x1100, 0x115f],
  [0x2329, 0x232a],
  [0x2e80, 0x303e],
  [0x3041, 0x33ff],
  [0x3400, 0x4dbf],
  [0x4e00, 0x9fff],
  [0xa000, 0xa4cf],
  [0xa960, 0xa97f],
  [0xac00, 0xd7a3],
  [0xf900, 0xfaff],
  [0xfe10, 0xfe19],
  [0xfe30, 0xfe6f],
  [0xff00, 0xff60],
  [0xffe0, 0xffe6],
  [0x16fe0, 0x16fe4],
  [0x17000, 0x18cff],
  [0x1b000, 0x1b2ff],
  [0x1f200, 0x1f2ff],
  [0x20000, 0x2fffd],
  [0x30000, 0x3fffd],
];

function isWide(code: number): boolean {
  let low = 0;
  let high = WIDE.length - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    const [from, to] = WIDE[middle]!;
    if (code < from) high = middle - 1;
    else if (code > to) low = middle + 1;
    else return true;
  }
  return false;
}

/** Code points that extend the cluster before them (zero columns of their own): combining marks, joiners, variation selectors, emoji modifiers, tags, Hangul vowels and finals. */
const EXTENDS = /^[\p{Mn}\p{Me}\p{Cf}\u{1f3fb}-\u{1f3ff}\u1160-\u11ff]$/u;

/**
 * Code points known to take one column and to extend nothing: Latin and the like below the
 * combining marks, and the punctuation, arrows, box drawing and shapes `runner status` and the
 * live block draw with (·, …, ←, ├──, ○, ✓). They skip the Unicode property tests, whose first use
 * costs about a millisecond each.
 */
export function isPlainNarrow(code: number): boolean {
  if (code < 0x300) return code >= 0x20 && (code < 0x7f || code >= 0xa0) && code !== 0xad; // (U+00AD, the soft hyphen, is a format character)
  return (code >= 0x2010 && code <= 0x2027) || (code >= 0x2190 && code <= 0x21ff) || (code >= 0x2500 && code <= 0x25fc) || code === 0x2713;
}
const ZWJ = 0x200d;

function isRegionalIndicator(code: number): boolean {
  return code >= 0x1f1e6 && code <= 0x1f1ff;
}

/**
 * The grapheme clusters of `text` as a terminal draws them: a code point with what extends it, the
 * code point after a zero-width joiner (👩‍💻), two regional indicators (a flag). Simpler than
 * Intl.Segmenter, whose first use costs about 15 ms (it loads ICU's break rules): too much for
 * `runner status`.
 */
function* graphemes(text: string): Generator<string> {
  let cluster = "";
  let joined = false;
  let lonelyIndicator = false;
  for (const char of text) {
    const code = char.codePointAt(0)!;
    const extend = cluster !== "" && (joined || (!isPlainNarrow(code) && (EXTENDS.test(char) || (lonelyIndicator && isRegionalIndicator(code)))));
    if (extend) {
      lonelyIndicator = false;
      cluster += char;
    } else {
      if (cluster !== "") yield cluster;
      cluster = char;
      lonelyIndicator = isRegionalIndicator(code);
    }
    joined = code === ZWJ;
  }
  if (cluster !== "") yield cluster;
}

/** The columns of one grapheme cluster. */
export function clusterWidth(cluster: string): number {
  const first = cluster.codePointAt(0);
  if (first === undefined) return 0;
  if (cluster.length === 1 && isPlainNarrow(first)) return 1;
  if (first < 0x20 || (first >= 0x7f && first < 0xa0)) return 0; // control characters
  if (EMOJI_PRESENTATION.test(cluster)) return 2;
  // A text-style symbol made emoji by VS16 (❤️, 1️⃣).
  if (cluster.includes("\ufe0f") && EMOJI.test(String.fromCodePoint(first))) return 2;
  if (EXTENDS.test(String.fromCodePoint(first))) return 0; // a combining mark with nothing to combine with, a joiner
  return isWide(first) ? 2 : 1;
}

/** The columns `text` takes on a terminal (one line: no newlines; escape codes for colour count none). */
export function displayWidth(text: string): number {
  if (PLAIN_ASCII.test(text)) return text.length;
  let width = 0;
  for (const part of text.split(SGR)) {
    if (PLAIN_ASCII.test(part)) width += part.length;
    else for (const cluster of graphemes(part)) width += clusterWidth(cluster);
  }
  return width;
}

/**
 * `text` cut to at most `columns` columns, ending in `…` when it was cut; never a grapheme cluster
 * cut in half, colour escape codes kept (and reset after a cut).
 */
export function clipToWidth(text: string, columns: number): string {
  if (displayWidth(text) <= columns) return text;
  const room = Math.max(0, columns - 1);
  let out = "";
  let used = 0;
  let coloured = false;
  // eslint-disable-next-line no-control-regex -- the escape character is what these codes start with
  const pieces = text.split(/(\x1b\[[0-9;]*m)/);
  for (const [index, piece] of pieces.entries()) {
    if (index % 2 === 1) {
      out += piece;
      coloured = true;
      continue;
    }
    for (const cluster of graphemes(piece)) {
      const width = clusterWidth(cluster);
      if (used + width > room) return `${out}${columns >= 1 ? ELLIPSIS : ""}${coloured ? "\x1b[0m" : ""}`;
      out += cluster;
      used += width;
    }
  }
  return out;
}

/** The terminal rows a line takes on a terminal `columns` wide (it wraps when wider). */
export function rowsOf(line: string, columns: number): number {
  return Math.max(1, Math.ceil(displayWidth(line) / Math.max(1, columns)));
}

/**
 * A line as it can be shown on a terminal: tabs as spaces, other control characters (an agent's
 * own escape codes, a carriage return) left out, so that the width measured is the width drawn.
 */
export function printable(line: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are what is removed
  return line.replace(/\t/g, "    ").replace(/[\x00-\x1f\x7f-\x9f]/g, "");
}
