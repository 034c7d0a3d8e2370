// The guard's definition (issue 19 §1, docs/decisions.md): what decides whether the guard command
// passes, read from the starting commit. The files the command names or reads by default (a
// justfile found as `just` finds it, a Makefile, tox/nox/pytest configuration), the package.json
// script entries an npm/pnpm/yarn/bun command runs (followed through `npm run x` chains and
// pre/post scripts), and the repository's script files those definitions call. Pure: the caller
// hands the file texts it has read (see `deriveGuardDefinition`) and reads what is still unread.
import { JUSTFILE_NAMES } from "./justfile.js";
import { pathEntryProblem } from "./path-rules.js";
import { justRules, makeRules, splitWords, type Rules } from "./recipe-rules.js";
import { scriptsOf, type ProtectedScripts } from "./script-entries.js";

export { changedScriptEntries, restoreScriptEntries, type ProtectedScripts } from "./script-entries.js";

export interface GuardDefinition {
  /** Whole files, repository-relative, protected whether or not they exist (a new GNUmakefile would win over the Makefile). */
  files: string[];
  /** Of those, the ones the starting commit has. */
  present: string[];
  /** Script entries, per manifest (the rest of the manifest stays the agent's: it may add a dependency). */
  scripts: ProtectedScripts[];
}

/** Files most guards' definitions start from, read in the first round with what the command names (fewer rounds of reading). */
export const LIKELY_DEFINITION_FILES: readonly string[] = [
  ...JUSTFILE_NAMES,
  "GNUmakefile",
  "makefile",
  "Makefile",
  "package.json",
  ".npmrc",
  "tox.ini",
  "pyproject.toml",
  "setup.cfg",
  "pytest.ini",
  "conftest.py",
  "noxfile.py",
];

/** Known file texts: null for a file the starting commit does not have. */
export type FileTexts = ReadonlyMap<string, string | null>;

const MAKEFILE_NAMES = ["GNUmakefile", "makefile", "Makefile"];
const SCRIPT_EXTENSION = /\.(sh|bash|zsh|js|mjs|cjs|ts|mts|cts|py|rb|pl|ps1)$/;
const SHELL_SCRIPT = /\.(sh|bash|zsh)$/;
/** How deep definitions calling definitions are followed. */
const MAX_DEPTH = 8;
/** Programs that run the rest of their argv (after their own options). */
const WRAPPERS = new Set(["env", "exec", "time", "nice", "nohup", "command", "sudo", "xvfb-run", "timeout"]);
const PACKAGE_MANAGERS = new Set(["npm", "pnpm", "yarn", "bun"]);
/** npm's own commands that run a named script. */
const NPM_SCRIPT_COMMANDS: Record<string, string[]> = {
  test: ["test"],
  t: ["test"],
  tst: ["test"],
  start: ["start"],
  stop: ["stop"],
  restart: ["restart", "stop", "start"],
  install: ["preinstall", "install", "postinstall", "prepublish", "prepare"],
  i: ["preinstall", "install", "postinstall", "prepublish", "prepare"],
  ci: ["preinstall", "install", "postinstall", "prepublish", "prepare"],
};
/** Commands of pnpm/yarn/bun that are their own, not a script of the manifest. */
const MANAGER_BUILTINS = new Set([
  "add",
  "audit",
  "bin",
  "build",
  "cache",
  "config",
  "create",
  "dedupe",
  "dlx",
  "exec",
  "info",
  "init",
  "install",
  "i",
  "link",
  "list",
  "ls",
  "outdated",
  "pack",
  "publish",
  "remove",
  "rm",
  "store",
  "unlink",
  "up",
  "update",
  "upgrade",
  "why",
  "x",
]);

interface Collector {
  texts: FileTexts;
  unread: Set<string>;
  files: Set<string>;
  scripts: Map<string, Set<string>>;
  /** Definitions already followed (file path or manifest#script). */
  seen: Set<string>;
}

/**
 * The definition of `guard` (argv, run in the repository root) given the file texts read so far,
 * and the files it still needs read. Call again with those added until `unread` is empty: the
 * result is then complete.
 */
export function deriveGuardDefinition(guard: readonly string[], texts: FileTexts): { definition: GuardDefinition; unread: string[] } {
  const c: Collector = { texts, unread: new Set(), files: new Set(), scripts: new Map(), seen: new Set() };
  command(c, [...guard], "", 0);
  const files = [...c.files].filter((file) => pathEntryProblem(file) === undefined).sort();
  const scripts = [...c.scripts.entries()]
    .map(([manifest, names]) => {
      const parsed = scriptsOf(text(c, manifest));
      const entries: Record<string, string | null> = {};
      for (const name of [...names].sort()) entries[name] = parsed?.[name] ?? null;
      return { manifest, entries };
    })
    .sort((a, b) => a.manifest.localeCompare(b.manifest));
  return {
    definition: { files, present: files.filter((file) => typeof texts.get(file) === "string"), scripts },
    unread: [...c.unread].sort(),
  };
}

/** The definition in a line: "justfile, scripts/ci.sh, package.json scripts (test, pretest, posttest)" — the files that exist. */
export function describeGuardDefinition(definition: GuardDefinition): string {
  const parts = [...definition.present];
  for (const { manifest, entries } of definition.scripts) {
    const present = Object.keys(entries).filter((name) => entries[name] !== null);
    if (present.length > 0) parts.push(`${manifest} scripts (${present.join(", ")})`);
  }
  return parts.length > 0 ? parts.join(", ") : "no file of the repository";
}

/** What differs between two definitions (with their texts), named for a person: ["justfile", "package.json scripts.test"]. */
export function definitionDifferences(
  before: { guard: readonly string[]; definition: GuardDefinition; texts: FileTexts },
  after: { guard: readonly string[]; definition: GuardDefinition; texts: FileTexts },
): string[] {
  const differences: string[] = [];
  if (JSON.stringify(before.guard) !== JSON.stringify(after.guard)) differences.push(`the guard command (${after.guard.join(" ")})`);
  // What the definition before the commit protected (a file or entry the new one adds is named through the change that led to it).
  for (const file of before.definition.files) {
    if (before.texts.has(file) && after.texts.has(file) && before.texts.get(file) !== after.texts.get(file)) differences.push(file);
  }
  const after_ = new Map(after.definition.scripts.map((s) => [s.manifest, s.entries]));
  for (const { manifest, entries } of before.definition.scripts) {
    for (const [name, value] of Object.entries(entries)) {
      if ((after_.get(manifest)?.[name] ?? null) !== value) differences.push(`${manifest} scripts.${name}`);
    }
  }
  return [...new Set(differences)].sort();
}

// --- derivation ---

function text(c: Collector, file: string): string | null {
  const known = c.texts.get(file);
  if (known === undefined) {
    c.unread.add(file);
    return null;
  }
  return known;
}

/** A file of the definition: protected, and read to follow what it calls. */
function protect(c: Collector, file: string | undefined): string | null {
  if (file === undefined) return null;
  c.files.add(file);
  return text(c, file);
}

/** `relative` from folder `dir` as a repository path, or undefined when it leaves the repository or is not plain. */
function join(dir: string, relative: string): string | undefined {
  if (relative.startsWith("/") || relative.startsWith("~") || relative.includes("$") || /[*?[\]{}`]/.test(relative)) return undefined;
  const segments = dir === "" ? [] : dir.split("/");
  for (const segment of relative.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") {
      if (segments.length === 0) return undefined;
      segments.pop();
    } else segments.push(segment);
  }
  return segments.length === 0 ? "" : segments.join("/");
}

function dirname(file: string): string {
  const slash = file.lastIndexOf("/");
  return slash < 0 ? "" : file.slice(0, slash);
}

function basename(program: string): string {
  return program.slice(program.lastIndexOf("/") + 1);
}

/** The value of option `names` in argv (`-f x`, `--file x`, `--file=x`, `-fx` for one-letter ones). */
function optionValue(argv: readonly string[], names: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") break;
    for (const name of names) {
      if (arg === name) return argv[i + 1];
      if (name.startsWith("--") && arg.startsWith(`${name}=`)) return arg.slice(name.length + 1);
      if (/^-[A-Za-z]$/.test(name) && arg.startsWith(name) && arg.length > 2 && !arg.startsWith("--")) return arg.slice(2);
    }
  }
  return undefined;
}

/** One command (argv) run in folder `dir`. */
function command(c: Collector, argv: string[], dir: string, depth: number): void {
  if (depth > MAX_DEPTH) return;
  // Leading variable assignments and recipe prefixes (`@`, `-`, `+` in justfiles and Makefiles).
  while (argv.length > 0 && /^[A-Za-z_][A-Za-z0-9_]*=/.test(argv[0]!)) argv.shift();
  if (argv.length === 0) return;
  argv[0] = argv[0]!.replace(/^[@+-]+/, "");
  if (argv[0] === "") argv.shift();
  const program = basename(argv[0] ?? "");
  const args = argv.slice(1);
  if (WRAPPERS.has(program)) {
    const rest = args.findIndex((arg) => !arg.startsWith("-") && !/^[A-Za-z_][A-Za-z0-9_]*=/.test(arg) && !/^[0-9.]+[smhd]?$/.test(arg));
    if (rest >= 0) command(c, args.slice(rest), dir, depth + 1);
    return;
  }
  if (program === "npx" || program === "pnpx" || program === "bunx") {
    const rest = args.findIndex((arg) => !arg.startsWith("-"));
    if (rest >= 0) command(c, args.slice(rest), dir, depth + 1);
    return;
  }
  if (["uv", "poetry", "pipenv", "hatch", "pdm", "rye"].includes(program) && args[0] === "run") {
    const rest = args.slice(1).findIndex((arg) => !arg.startsWith("-"));
    if (rest >= 0) command(c, args.slice(1 + rest), dir, depth + 1);
    return;
  }
  if (/^python[0-9.]*$/.test(program) && args[0] === "-m" && args[1] !== undefined) {
    command(c, args.slice(1), dir, depth + 1);
    return;
  }
  if ((program === "sh" || program === "bash" || program === "zsh") && args[0] === "-c" && args[1] !== undefined) {
    shellText(c, args[1], dir, depth + 1);
    return;
  }
  if (program === "just") return justCommand(c, args, dir, depth);
  if (program === "make" || program === "gmake") return makeCommand(c, args, dir, depth);
  if (PACKAGE_MANAGERS.has(program)) return packageManagerCommand(c, program, args, dir, depth);
  if (program === "run-s" || program === "run-p" || program === "npm-run-all") {
    const manifest = join(dir, "package.json")!;
    for (const name of args.filter((arg) => !arg.startsWith("-") && !/[*:]/.test(arg))) scriptEntry(c, manifest, name, depth);
    return;
  }
  if (program === "tox") {
    const config = optionValue(args, ["-c", "--conf"]);
    if (config !== undefined) protect(c, join(dir, config));
    else {
      shellLines(c, join(dir, "tox.ini"), depth);
      sectionFile(c, join(dir, "pyproject.toml")!, /^\[tool\.tox\b/m);
      sectionFile(c, join(dir, "setup.cfg")!, /^\[tox:tox\]/m);
    }
    return;
  }
  if (program === "nox") {
    protect(c, join(dir, optionValue(args, ["-f", "--noxfile"]) ?? "noxfile.py"));
    return;
  }
  if (program === "pytest" || program === "py.test") {
    const config = optionValue(args, ["-c", "--config-file"]);
    if (config !== undefined) protect(c, join(dir, config));
    else {
      protect(c, join(dir, "pytest.ini"));
      protect(c, join(dir, ".pytest.ini"));
      sectionFile(c, join(dir, "pyproject.toml")!, /^\[tool\.pytest\b/m);
      sectionFile(c, join(dir, "tox.ini")!, /^\[pytest\]/m);
      sectionFile(c, join(dir, "setup.cfg")!, /^\[tool:pytest\]/m);
    }
    protect(c, join(dir, "conftest.py"));
    return;
  }
  // Any other program: its repository script files (the program itself, `./check.sh`, or an argument, `bash ci.sh`).
  for (const word of argv) {
    if (word.startsWith("-")) continue;
    const isPathLike = word.startsWith("./") || word.startsWith("../") || SCRIPT_EXTENSION.test(word);
    if (!isPathLike) continue;
    const file = join(dir, word);
    if (file === undefined || file === "") continue;
    const content = text(c, file);
    if (content === null) continue; // not a file of the starting commit (a folder, a program elsewhere)
    c.files.add(file);
    // A shell script runs in its caller's folder (`cd "$(dirname "$0")"` is not followed).
    if ((SHELL_SCRIPT.test(file) || /^#!.*\b(ba|z|da)?sh\b/.test(content)) && !c.seen.has(file)) {
      c.seen.add(file);
      shellText(c, content, dir, depth + 1);
    }
  }
}

/** A file protected whole when it holds the section the tool reads (pyproject.toml's [tool.pytest…]). */
function sectionFile(c: Collector, file: string, section: RegExp): void {
  const content = text(c, file);
  if (content !== null && section.test(content)) c.files.add(file);
}

/** A file protected whole, each of its lines followed as a command (justfile, Makefile, shell script, tox.ini). */
function shellLines(c: Collector, file: string | undefined, depth: number): string | null {
  if (file === undefined) return null;
  const content = protect(c, file);
  if (content === null || c.seen.has(file)) return content;
  c.seen.add(file);
  shellText(c, content, dirname(file), depth + 1);
  return content;
}

/** Shell text: every simple command in it. Conservative: comments and recipe headers are read as commands too, and mostly name nothing. */
function shellText(c: Collector, content: string, dir: string, depth: number): void {
  const plain = content.replace(/\\\n/g, " ").replace(/\$\(MAKE\)|\$\{MAKE\}/g, "make");
  // `cd sub` moves where the commands after it run (to the end of the text: a script's lines share one shell).
  let at = dir;
  for (const line of plain.split("\n")) {
    for (const part of line.split(/&&|\|\||[;|&()`]|\$\(/)) {
      const words = splitWords(part);
      if (words[0] === "cd" && words[1] !== undefined) at = join(at, words[1]) ?? at;
      else if (words.length > 0) command(c, words, at, depth);
    }
  }
}

function justCommand(c: Collector, args: string[], dir: string, depth: number): void {
  const positionals = args.filter((arg, i) => !arg.startsWith("-") && !arg.includes("=") && !isOptionValue(args, i));
  // `just sub/ci` runs the recipe ci of sub/'s justfile.
  const recipes = positionals.map((arg) => arg.slice(arg.lastIndexOf("/") + 1));
  const justfile = optionValue(args, ["-f", "--justfile"]);
  if (justfile !== undefined) {
    justfileAndImports(c, join(dir, justfile), recipes, depth);
    return;
  }
  const workdir = optionValue(args, ["-d", "--working-directory"]);
  const first = positionals[0];
  const searchDir = join(workdir !== undefined ? (join(dir, workdir) ?? dir) : dir, first?.includes("/") ? dirname(first) : "") ?? dir;
  // `just` looks in the folder, then in each one above it, for the first justfile.
  let at: string | undefined = searchDir;
  while (at !== undefined) {
    const names = JUSTFILE_NAMES.map((name) => join(at!, name)!);
    for (const name of names) c.files.add(name);
    // (all of them read: a second one, which makes `just` refuse, is a change too)
    const found = names.filter((name) => text(c, name) !== null)[0];
    if (found !== undefined) {
      justfileAndImports(c, found, recipes, depth);
      return;
    }
    at = at === "" ? undefined : dirname(at);
  }
}

function isOptionValue(args: readonly string[], index: number): boolean {
  const previous = args[index - 1];
  return (
    previous !== undefined &&
    /^-(f|d|C|-justfile|-working-directory|-set|-shell|-dotenv-filename|-dotenv-path|-color|-command-color|-directory|-file|-makefile)$/.test(
      previous,
    )
  );
}

/** A justfile: protected whole; the recipes the guard runs (and theirs) followed — all of them when a recipe is not found in it. */
function justfileAndImports(c: Collector, file: string | undefined, recipes: readonly string[] | undefined, depth: number): void {
  const content = protect(c, file);
  if (content === null || file === undefined) return;
  const dir = dirname(file);
  const imports: string[] = [];
  for (const match of content.matchAll(/^import\??\s+['"]([^'"]+)['"]/gm)) imports.push(match[1]!);
  for (const match of content.matchAll(/^mod\??\s+([A-Za-z0-9_-]+)(?:\s+['"]([^'"]+)['"])?/gm)) {
    imports.push(
      ...(match[2] !== undefined ? [match[2]] : [`${match[1]}.just`, `${match[1]}/mod.just`, `${match[1]}/justfile`, `${match[1]}/.justfile`]),
    );
  }
  const followedAll = followRules(c, file, content, justRules(content), recipes, depth);
  // An imported file's recipes are followed whole when the recipe was not found here (or the file's are all followed).
  for (const imported of imports) justfileAndImports(c, join(dir, imported), followedAll ? undefined : recipes, depth + 1);
}

/** Follows the wanted rules (the first one when none is named) and their dependencies; all lines when the first wanted is not there. Whether all were followed. */
function followRules(
  c: Collector,
  file: string,
  content: string,
  { rules, first }: Rules,
  wanted: readonly string[] | undefined,
  depth: number,
): boolean {
  const dir = dirname(file);
  const targets =
    wanted === undefined ? undefined : wanted.length > 0 ? wanted.filter((name) => rules.has(name)) : first !== undefined ? [first] : [];
  if (targets === undefined || (wanted !== undefined && wanted.length > 0 && !rules.has(wanted[0]!))) {
    if (!c.seen.has(file)) {
      c.seen.add(file);
      shellText(c, content, dir, depth + 1);
    }
    return true;
  }
  const queue = [...targets];
  while (queue.length > 0) {
    const name = queue.shift()!;
    const key = `${file}#${name}`;
    const rule = rules.get(name);
    if (rule === undefined || c.seen.has(key)) continue;
    c.seen.add(key);
    // (each recipe line runs in a shell of its own, in the file's folder)
    for (const line of rule.body) shellText(c, line, dir, depth + 1);
    queue.push(...rule.deps);
  }
  return false;
}

function makeCommand(c: Collector, args: string[], dir: string, depth: number): void {
  const where = optionValue(args, ["-C", "--directory"]);
  const makeDir = where !== undefined ? (join(dir, where) ?? dir) : dir;
  const file = optionValue(args, ["-f", "--file", "--makefile"]);
  const targets = args.filter((arg, i) => !arg.startsWith("-") && !arg.includes("=") && !isOptionValue(args, i));
  const names = file !== undefined ? [join(makeDir, file)] : MAKEFILE_NAMES.map((name) => join(makeDir, name));
  for (const name of names) makefileAndIncludes(c, name, targets, depth);
}

function makefileAndIncludes(c: Collector, file: string | undefined, targets: readonly string[] | undefined, depth: number): void {
  const content = protect(c, file);
  if (content === null || file === undefined) return;
  const includes = [...content.matchAll(/^-?s?include\s+(.+)$/gm)].flatMap((match) => splitWords(match[1]!));
  const followedAll = followRules(c, file, content, makeRules(content), targets, depth);
  for (const included of includes) makefileAndIncludes(c, join(dirname(file), included), followedAll ? undefined : targets, depth + 1);
}

function packageManagerCommand(c: Collector, program: string, args: string[], dir: string, depth: number): void {
  const where =
    program === "npm"
      ? optionValue(args, ["--prefix", "-C", "--workspace", "-w"])
      : program === "pnpm"
        ? optionValue(args, ["-C", "--dir"])
        : optionValue(args, ["--cwd"]);
  const packageDir = where !== undefined ? (join(dir, where) ?? dir) : dir;
  const manifest = join(packageDir, "package.json")!;
  // Settings that change how every script runs (npm's script-shell, yarn's, bun's).
  const settings = program === "yarn" ? [".yarnrc", ".yarnrc.yml"] : program === "bun" ? ["bunfig.toml"] : [".npmrc"];
  for (const name of settings) for (const folder of new Set(["", packageDir])) protect(c, join(folder, name));
  const words = args.filter((arg, i) => !arg.startsWith("-") && !isManagerOptionValue(args, i));
  const [sub, name] = words;
  if (sub === undefined) {
    if (program === "yarn") for (const n of NPM_SCRIPT_COMMANDS.install!) scriptEntry(c, manifest, n, depth);
    return;
  }
  if (sub === "run" || sub === "run-script" || sub === "rum" || sub === "urn") {
    if (name !== undefined) scriptEntry(c, manifest, name, depth);
    return;
  }
  if (program === "npm") {
    for (const n of NPM_SCRIPT_COMMANDS[sub] ?? []) scriptEntry(c, manifest, n, depth);
    return;
  }
  if (program === "bun" && sub === "test") return; // bun's own test runner
  if (sub === "test" || sub === "t" || !MANAGER_BUILTINS.has(sub)) scriptEntry(c, manifest, sub === "t" ? "test" : sub, depth);
  else if (sub === "install" || sub === "i") for (const n of NPM_SCRIPT_COMMANDS.install!) scriptEntry(c, manifest, n, depth);
}

function isManagerOptionValue(args: readonly string[], index: number): boolean {
  const previous = args[index - 1];
  return previous !== undefined && /^(--prefix|-C|--dir|--cwd|--workspace|-w|--filter|-F)$/.test(previous);
}

/** A script entry (with its pre and post scripts), and what its text runs. */
function scriptEntry(c: Collector, manifest: string, name: string, depth: number): void {
  const names = c.scripts.get(manifest) ?? new Set<string>();
  c.scripts.set(manifest, names);
  for (const entry of [`pre${name}`, name, `post${name}`]) {
    names.add(entry);
    const key = `${manifest}#${entry}`;
    if (c.seen.has(key)) continue;
    c.seen.add(key);
    const value = scriptsOf(text(c, manifest))?.[entry];
    if (typeof value === "string") shellText(c, value, dirname(manifest), depth + 1);
  }
}
