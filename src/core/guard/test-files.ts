// Which changed files are tests (issue 19 §2): by the ecosystems' conventions, or the config's
// `[guard] test_patterns`. An iteration records the test files it changed (Runner-Tests), so a
// reviewer sees an agent that weakened a test even where tests are not protected.
import { isRunnerPath } from "./path-rules.js";

/** The conventions of JavaScript/TypeScript, Python, Go, Rust, Java/Kotlin, C#, Ruby, PHP, Elixir. */
export const DEFAULT_TEST_PATTERNS: readonly string[] = [
  "**/*.test.*",
  "**/*.spec.*",
  "**/__tests__/**",
  "**/test/**",
  "**/tests/**",
  "**/spec/**",
  "**/testdata/**",
  "**/*_test.go",
  "**/test_*.py",
  "**/*_test.py",
  "**/conftest.py",
  "**/*Test.java",
  "**/*Tests.java",
  "**/*Test.kt",
  "**/*Tests.cs",
  "**/*_spec.rb",
  "**/*_test.rb",
  "**/*Test.php",
  "**/*_test.exs",
];

/** A glob as a regular expression over a repository-relative path: `*` within a name, `**` across folders. */
export function globPattern(glob: string): RegExp {
  let source = "";
  for (let i = 0; i < glob.length; i++) {
    const char = glob[i]!;
    if (glob.startsWith("**/", i)) {
      source += "(?:.*/)?";
      i += 2;
    } else if (glob.startsWith("**", i)) {
      source += ".*";
      i += 1;
    } else if (char === "*") source += "[^/]*";
    else if (char === "?") source += "[^/]";
    else source += char.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${source}$`);
}

/** The changed paths that are test files (the runner's own files never are), sorted. */
export function testFilesIn(changedPaths: readonly string[], patterns: readonly string[] = DEFAULT_TEST_PATTERNS): string[] {
  const compiled = patterns.map(globPattern);
  return changedPaths.filter((file) => !isRunnerPath(file) && compiled.some((pattern) => pattern.test(file))).sort();
}
