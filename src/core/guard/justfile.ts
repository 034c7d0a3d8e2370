// What a guard of the form `just <recipe> …` needs of the repository: a justfile, and in it the
// recipe (or an alias of it). Read from the text first; `just --summary` settles what the text
// alone cannot (imports, modules).

/** The justfile names `just` looks for in a folder (it matches the name case-insensitively). */
export const JUSTFILE_NAMES: readonly string[] = ["justfile", "Justfile", "JUSTFILE", ".justfile"];

/** The recipe a `just` guard runs, or undefined when the guard is not `just` or runs the default recipe. */
export function justRecipe(guard: readonly string[]): { isJust: boolean; recipe: string | undefined } {
  const program = guard[0] ?? "";
  const isJust = program === "just" || program.endsWith("/just");
  if (!isJust) return { isJust: false, recipe: undefined };
  // The first word that is not an option (options with a value are few; a guard rarely uses them).
  const WITH_VALUE = new Set([
    "-f",
    "--justfile",
    "-d",
    "--working-directory",
    "--set",
    "--shell",
    "--dotenv-filename",
    "--dotenv-path",
    "--color",
    "--command-color",
  ]);
  for (let i = 1; i < guard.length; i++) {
    const arg = guard[i]!;
    if (arg === "--") return { isJust, recipe: guard[i + 1] };
    if (WITH_VALUE.has(arg)) {
      i++;
      continue;
    }
    if (arg.startsWith("-")) continue;
    if (arg.includes("=")) continue; // a variable override (name=value)
    return { isJust, recipe: arg.split("::")[0] };
  }
  return { isJust, recipe: undefined };
}

/** Whether the justfile text defines `recipe` (as a recipe line `[@]name [params]:` or `alias name := …`). */
export function definesRecipe(text: string, recipe: string): boolean {
  const name = recipe.replace(/[.*+?^${}()|[\]\\-]/g, "\\$&");
  const line = new RegExp(`^(?:alias\\s+${name}\\s*:=|@?${name}(?:\\s+[^:=\\n]*)?:(?!=))`, "m");
  return line.test(text);
}

/** Recipe names from `just --summary` (space-separated; module recipes as `mod::name`). */
export function summaryRecipes(summary: string): string[] {
  return summary.split(/\s+/).filter(Boolean);
}
