// Pure parsers of the git output the report reads: each commit's numstat and patch, and the lines a
// commit added to a file. gather.ts runs git; these only read its text.
import type { DiffFile, IterationDiff } from "./model.js";

/** Record separator put before each commit by `--format=%x1e%H`. */
export const RECORD = "\x1e";

/** A patch is cut after this many lines or characters, whichever comes first. */
export const PATCH_LINE_LIMIT = 800;
export const PATCH_CHAR_LIMIT = 64 * 1024;

/**
 * `git show --format=%x1e%H --numstat -p <commits>`: each commit's files and patch by sha. A commit
 * whose change the pathspec left empty prints nothing and is missing from the map.
 */
export function parseShowDiffs(text: string): Map<string, { files: DiffFile[]; patch: string }> {
  const result = new Map<string, { files: DiffFile[]; patch: string }>();
  for (const record of text.split(RECORD)) {
    const newline = record.indexOf("\n");
    if (newline < 0) continue;
    const sha = record.slice(0, newline).trim();
    if (!/^[0-9a-f]{40,64}$/.test(sha)) continue;
    const rest = record.slice(newline + 1);
    const patchAt = patchStart(rest);
    const statText = patchAt < 0 ? rest : rest.slice(0, patchAt);
    const patch = patchAt < 0 ? "" : rest.slice(patchAt);
    const files: DiffFile[] = [];
    for (const line of statText.split("\n")) {
      const match = /^(-|[0-9]+)\t(-|[0-9]+)\t(.+)$/.exec(line);
      if (!match) continue;
      const [, added, removed, file] = match;
      files.push(added === "-" ? { path: file! } : { path: file!, added: Number(added), removed: Number(removed) });
    }
    result.set(sha, { files, patch: patch.replace(/\n+$/, "\n") });
  }
  return result;
}

/** Where the first `diff --git` line starts, or -1. */
function patchStart(text: string): number {
  if (text.startsWith("diff --git ")) return 0;
  const at = text.indexOf("\ndiff --git ");
  return at < 0 ? -1 : at + 1;
}

/** The patch bounded for the page: whole lines, at most PATCH_LINE_LIMIT of them and PATCH_CHAR_LIMIT characters. */
export function boundedDiff(files: DiffFile[], patch: string): IterationDiff {
  const lines = patch === "" ? [] : patch.replace(/\n$/, "").split("\n");
  let chars = 0;
  let shown = 0;
  while (shown < lines.length && shown < PATCH_LINE_LIMIT && chars + lines[shown]!.length + 1 <= PATCH_CHAR_LIMIT) {
    chars += lines[shown]!.length + 1;
    shown++;
  }
  const truncated = shown < lines.length;
  return { files, patch: lines.slice(0, shown).join("\n"), patchLines: lines.length, truncated };
}

/**
 * `git log -p --unified=0 --format=%x1e%H -- <files>`: for each commit, the lines it added to each
 * file (hunk lines starting with `+`; the `+++` header before the first hunk is not one).
 */
export function parseAddedLines(text: string): { commit: string; file: string; lines: string[] }[] {
  const out: { commit: string; file: string; lines: string[] }[] = [];
  for (const record of text.split(RECORD)) {
    const rows = record.split("\n");
    const sha = rows[0]?.trim() ?? "";
    if (!/^[0-9a-f]{40,64}$/.test(sha)) continue;
    let current: { commit: string; file: string; lines: string[] } | undefined;
    let inHunk = false;
    for (const row of rows.slice(1)) {
      if (row.startsWith("diff --git ")) {
        if (current && current.lines.length > 0) out.push(current);
        const file = /^diff --git a\/.+ b\/(.+)$/.exec(row)?.[1] ?? "";
        current = { commit: sha, file, lines: [] };
        inHunk = false;
      } else if (row.startsWith("@@")) {
        inHunk = true;
      } else if (inHunk && row.startsWith("+") && current) {
        current.lines.push(row.slice(1));
      }
    }
    if (current && current.lines.length > 0) out.push(current);
  }
  return out;
}

/** The last `maxLines` lines (and at most `maxChars` characters) of a log. */
export function tailOf(text: string, maxLines = 40, maxChars = 6000): string {
  const lines = text.replace(/\n+$/, "").split("\n");
  let tail = lines.slice(-maxLines).join("\n");
  if (tail.length > maxChars) tail = tail.slice(tail.length - maxChars);
  return tail;
}
