// The recipes of a justfile and the rules of a Makefile, read from their text (the guard's definition
// follows only those the guard runs), and the words of a shell command. Pure; no expansion.

/** Words of a command, quotes removed (no expansion). */
export function splitWords(part: string): string[] {
  const words: string[] = [];
  for (const match of part.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)) words.push(match[1] ?? match[2] ?? match[3]!);
  return words;
}

export interface Rules {
  rules: Map<string, { deps: string[]; body: string[] }>;
  first: string | undefined;
}

/** Recipes of a justfile: `[@]name params: deps` and the indented lines under it; `alias a := b`. */
export function justRules(content: string): Rules {
  const rules: Rules["rules"] = new Map();
  let first: string | undefined;
  let body: string[] | undefined;
  for (const line of content.split("\n")) {
    if (/^\s/.test(line) || line === "") {
      body?.push(line);
      continue;
    }
    body = undefined;
    const alias = /^alias\s+([A-Za-z0-9_-]+)\s*:=\s*([A-Za-z0-9_:-]+)/.exec(line);
    if (alias) {
      rules.set(alias[1]!, { deps: [alias[2]!], body: [] });
      continue;
    }
    const header = /^@?([A-Za-z_][A-Za-z0-9_-]*)[^:]*:(?!=)(.*)$/.exec(line);
    if (!header || /^(set|export|import|mod|alias)\b/.test(line)) continue;
    const deps = [...header[2]!.matchAll(/\(?([A-Za-z_][A-Za-z0-9_-]*)/g)].map((m) => m[1]!);
    body = [];
    rules.set(header[1]!, { deps, body });
    first ??= header[1]!;
  }
  return { rules, first };
}

/** Rules of a Makefile: `targets: prerequisites [; recipe]` and the tab-indented lines under it. */
export function makeRules(content: string): Rules {
  const rules: Rules["rules"] = new Map();
  let first: string | undefined;
  let body: string[] | undefined;
  for (const line of content.replace(/\\\n/g, " ").split("\n")) {
    if (line.startsWith("\t")) {
      body?.push(line);
      continue;
    }
    if (line.trim() === "" || line.startsWith("#")) continue;
    body = undefined;
    const header = /^([^\t#=:][^=:]*?)\s*::?(?![:=])([^=]*)$/.exec(line) ?? /^([^\t#=:][^=:]*?)\s*::?(?![:=])([^;]*;.*)$/.exec(line);
    if (!header) continue;
    const [prerequisites, inline] = header[2]!.split(/;(.*)/s);
    body = inline !== undefined ? [inline] : [];
    const deps = splitWords(prerequisites!.replace("|", " "));
    for (const target of splitWords(header[1]!)) {
      rules.set(target, { deps, body });
      if (!target.startsWith(".") && !target.includes("%")) first ??= target;
    }
  }
  return { rules, first };
}
