// Repository-relative path rules (CONTRACT §9, seed 003 §4): allowed_write_paths and protected
// paths. An entry ending in `/` names a folder and everything under it; any other entry names
// exactly one file. A `*` segment stands for any one folder or file name (`.runner/nodes/*/policy.json`).

/** Why an entry is not a safe repository-relative path, or undefined when it is. */
export function pathEntryProblem(entry: string): string | undefined {
  if (entry.length === 0) return "an empty path is not allowed";
  if (entry.startsWith("/") || /^[A-Za-z]:[\\/]/.test(entry) || entry.startsWith("\\")) {
    return `${JSON.stringify(entry)} is absolute; use a path relative to the repository root`;
  }
  if (entry.includes("\\")) return `${JSON.stringify(entry)} uses a backslash; separate folders with /`;
  const segments = entry.replace(/\/$/, "").split("/");
  if (segments.includes("..")) return `${JSON.stringify(entry)} has a .. segment; paths must stay inside the repository`;
  if (segments.includes(".") || segments.includes(""))
    return `${JSON.stringify(entry)} has an empty or . segment; write the path plainly (e.g. src/ or README.md)`;
  if (entry.startsWith("~")) return `${JSON.stringify(entry)} starts with ~; use a path relative to the repository root`;
  return undefined;
}

/** Whether `path` (repository-relative, as git prints it) is covered by `entry`. */
export function pathMatchesEntry(path: string, entry: string): boolean {
  if (!entry.includes("*")) return entry.endsWith("/") ? path.startsWith(entry) : path === entry;
  const wanted = entry.replace(/\/$/, "").split("/");
  const segments = path.split("/");
  if (entry.endsWith("/") ? segments.length <= wanted.length : segments.length !== wanted.length) return false;
  return wanted.every((segment, i) => segment === "*" || segment === segments[i]);
}

/** The changed paths not covered by any entry, sorted. */
export function pathsOutside(changedPaths: readonly string[], entries: readonly string[]): string[] {
  return changedPaths.filter((path) => !entries.some((entry) => pathMatchesEntry(path, entry))).sort();
}

/** The changed paths covered by some entry, sorted. */
export function pathsInside(changedPaths: readonly string[], entries: readonly string[]): string[] {
  return changedPaths.filter((path) => entries.some((entry) => pathMatchesEntry(path, entry))).sort();
}

/** Paths under `.runner/` belong to the runner's state and notes; anything else is the project. */
export function isRunnerPath(path: string): boolean {
  return path === ".runner" || path.startsWith(".runner/");
}
