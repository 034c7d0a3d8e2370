// A problem is one thing wrong with an input, located by a JSON path (`$.root.children[0].id`) and
// told in one readable sentence.

export interface Problem {
  /** JSON path of the offending value, `$` for the document itself. */
  path: string;
  message: string;
}

/**
 * The way out when the tree file is missing, said the same everywhere: `runner init` refuses while
 * .runner/ exists, so it is named only for starting over.
 */
export const MISSING_TREE_WAY_OUT =
  "restore it from git (`git log --oneline -- .runner/state/tree.json` lists its versions, `git checkout <commit> -- .runner/state/tree.json` restores one) and commit it, or, to start over, remove .runner/ and run `runner init`";

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** Appends one step (an object key or an array index) to a JSON path. */
export function childPath(base: string, step: string | number): string {
  if (typeof step === "number") return `${base}[${step}]`;
  return IDENTIFIER.test(step) ? `${base}.${step}` : `${base}[${JSON.stringify(step)}]`;
}

/** Converts a JSON pointer (`/root/children/0/id`) into a JSON path (`$.root.children[0].id`). */
export function pointerToPath(pointer: string): string {
  if (pointer === "") return "$";
  return pointer
    .slice(1)
    .split("/")
    .map((raw) => raw.replace(/~1/g, "/").replace(/~0/g, "~"))
    .reduce<string>((acc, step) => childPath(acc, /^(0|[1-9][0-9]*)$/.test(step) ? Number(step) : step), "$");
}

/** `$.root: missing key "title"` — the form every command prints. */
export function formatProblem(problem: Problem): string {
  return `${problem.path}: ${problem.message}`;
}

/**
 * Why `text` is not JSON, as one line: a leading byte order mark is named as such; otherwise the
 * parser's message with its snippet of the input flattened (it may hold newlines or control
 * characters) and bounded.
 */
export function jsonSyntaxMessage(text: string, error: unknown): string {
  if (text.charCodeAt(0) === 0xfeff) return "is not valid JSON: it starts with a byte order mark (BOM); save it as UTF-8 without a BOM";
  const detail = (error instanceof Error ? error.message : String(error))
    // (control characters, line separators and BOMs of the input's snippet become spaces)
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\ufeff]/g, " ")
    .replace(/\s+/g, " ")
    .trim();
  return `is not valid JSON (${detail.length > 200 ? `${detail.slice(0, 199)}…` : detail})`;
}
