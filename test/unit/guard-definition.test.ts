// The guard's definition (src/core/guard/guard-definition.ts), derived from a guard command and the files
// of a commit, for the guards people use: just, make, npm/pnpm/yarn/bun, tox/nox/pytest, scripts.
import { describe, expect, it } from "vitest";
import {
  changedScriptEntries,
  definitionDifferences,
  deriveGuardDefinition,
  describeGuardDefinition,
  restoreScriptEntries,
  type GuardDefinition,
} from "../../src/core/guard/guard-definition.js";

/** Derives as the adapter does: reads what is unread (from `repo`) until nothing is. */
function derive(guard: string[], repo: Record<string, string>): { definition: GuardDefinition; reads: number } {
  const texts = new Map<string, string | null>();
  let reads = 0;
  for (;;) {
    const { definition, unread } = deriveGuardDefinition(guard, texts);
    if (unread.length === 0) return { definition, reads };
    reads++;
    for (const file of unread) texts.set(file, repo[file] ?? null);
  }
}

const pkg = (scripts: Record<string, string>, extra: Record<string, unknown> = {}) =>
  `${JSON.stringify({ name: "p", ...extra, scripts }, null, 2)}\n`;

describe("the guard's definition", () => {
  it("just: every justfile name at the top, the one found followed to the scripts its recipes call", () => {
    const { definition } = derive(["just", "ci"], {
      justfile: "ci:\n    bash scripts/ci.sh\n    ./check.sh fast\n",
      "scripts/ci.sh": "node tools/x.mjs\n",
      "check.sh": "#!/bin/sh\ntrue\n",
      "tools/x.mjs": "",
    });
    expect(definition.files).toEqual([".justfile", "JUSTFILE", "Justfile", "check.sh", "justfile", "scripts/ci.sh", "tools/x.mjs"]);
    expect(definition.present).toEqual(["check.sh", "justfile", "scripts/ci.sh", "tools/x.mjs"]);
    expect(definition.scripts).toEqual([]);
  });

  it("just --justfile sub/justfile ci (and -f, just sub/ci, imports and modules)", () => {
    const repo = {
      "sub/justfile": "import 'common.just'\nmod lib\nci:\n    true\n",
      "sub/common.just": "x:\n  true\n",
      "sub/lib.just": "y:\n  true\n",
    };
    expect(derive(["just", "--justfile", "sub/justfile", "ci"], repo).definition.present).toEqual([
      "sub/common.just",
      "sub/justfile",
      "sub/lib.just",
    ]);
    expect(derive(["just", "--justfile=sub/justfile", "ci"], repo).definition.present).toContain("sub/justfile");
    expect(derive(["just", "-f", "sub/justfile"], repo).definition.present).toContain("sub/justfile");
    expect(derive(["just", "sub/ci"], repo).definition.files).toContain("sub/.justfile");
    expect(derive(["just", "sub/ci"], repo).definition.present).toContain("sub/justfile");
  });

  it("only the recipes the guard runs (and their dependencies) are followed: the program a `run` recipe starts stays the agent's", () => {
    const repo = {
      justfile: "run:\n    python app.py\nci: lint\n    ./test.sh\nlint:\n    bash lint.sh\n",
      "app.py": "",
      "test.sh": "",
      "lint.sh": "",
    };
    expect(derive(["just", "ci"], repo).definition.present).toEqual(["justfile", "lint.sh", "test.sh"]);
    expect(derive(["just"], repo).definition.present).toEqual(["app.py", "justfile"]);
    const make = { Makefile: "run:\n\tpython app.py\ncheck: unit\nunit:\n\t./test.sh\n", "app.py": "", "test.sh": "" };
    expect(derive(["make", "check"], make).definition.present).toEqual(["Makefile", "test.sh"]);
    expect(derive(["make", "nothing-like-it"], make).definition.present).toEqual(["Makefile", "app.py", "test.sh"]);
  });

  it("make check: all three makefile names (GNUmakefile wins), includes, -C and -f, $(MAKE) -C sub", () => {
    const repo = {
      Makefile: "include common.mk\ncheck:\n\t$(MAKE) -C sub test\n\t./run.sh\n",
      "common.mk": "",
      "sub/Makefile": "test:\n\ttrue\n",
      "run.sh": "true\n",
    };
    const { definition } = derive(["make", "check"], repo);
    expect(definition.files).toEqual(
      expect.arrayContaining(["GNUmakefile", "makefile", "Makefile", "common.mk", "sub/Makefile", "sub/GNUmakefile", "run.sh"]),
    );
    expect(derive(["make", "-C", "sub", "test"], repo).definition.present).toEqual(["sub/Makefile"]);
    expect(derive(["make", "-f", "other.mk"], { "other.mk": "x:\n" }).definition.present).toEqual(["other.mk"]);
  });

  it("npm test: the script entries test, pretest, posttest (not the whole manifest), and .npmrc", () => {
    const { definition } = derive(["npm", "test"], { "package.json": pkg({ test: "node --test test/", build: "tsc" }) });
    expect(definition.scripts).toEqual([{ manifest: "package.json", entries: { posttest: null, pretest: null, test: "node --test test/" } }]);
    expect(definition.files).toEqual([".npmrc"]);
    expect(describeGuardDefinition(definition)).toBe("package.json scripts (test)");
  });

  it("npm run ci calling npm run lint && npm run unit, a script file, and run-s", () => {
    const repo = {
      "package.json": pkg({
        ci: "npm run lint && npm run unit",
        lint: "node scripts/lint.mjs",
        unit: "run-s unit:a b",
        b: "bash ./t.sh",
        other: "x",
      }),
      "scripts/lint.mjs": "",
      "t.sh": "exit 0\n",
    };
    const { definition } = derive(["npm", "run", "ci"], repo);
    expect(Object.keys(definition.scripts[0]!.entries).sort()).toEqual(
      ["b", "ci", "lint", "postb", "postci", "postlint", "postunit", "preb", "preci", "prelint", "preunit", "unit"].sort(),
    );
    expect(definition.present).toEqual(["scripts/lint.mjs", "t.sh"]);
  });

  it("pnpm test, yarn test, yarn ci (a script by its name), bun run test; --prefix and --cwd", () => {
    const repo = { "package.json": pkg({ test: "vitest" }), "web/package.json": pkg({ test: "jest" }) };
    expect(derive(["pnpm", "test"], repo).definition.scripts[0]!.entries.test).toBe("vitest");
    expect(derive(["yarn", "test"], repo).definition.files).toEqual([".yarnrc", ".yarnrc.yml"]);
    expect(Object.keys(derive(["yarn", "ci"], repo).definition.scripts[0]!.entries)).toContain("ci");
    expect(derive(["bun", "run", "test"], repo).definition.scripts[0]!.manifest).toBe("package.json");
    expect(derive(["bun", "test"], repo).definition.scripts).toEqual([]);
    expect(derive(["npm", "--prefix", "web", "test"], repo).definition.scripts[0]!.manifest).toBe("web/package.json");
    expect(derive(["pnpm", "-C", "web", "test"], repo).definition.scripts[0]!.entries.test).toBe("jest");
    expect(derive(["yarn", "--cwd", "web", "test"], repo).definition.scripts[0]!.entries.test).toBe("jest");
  });

  it("tox, nox, pytest (and python -m pytest): their configuration files whole", () => {
    const repo = {
      "tox.ini": "[tox]\n[testenv]\ncommands = bash ci.sh\n",
      "ci.sh": "",
      "pyproject.toml": "[tool.pytest.ini_options]\n",
      "setup.cfg": "[metadata]\n",
    };
    expect(derive(["tox"], repo).definition.present).toEqual(["ci.sh", "tox.ini"]);
    expect(derive(["nox", "-s", "tests"], { "noxfile.py": "" }).definition.present).toEqual(["noxfile.py"]);
    expect(derive(["pytest", "-q"], repo).definition.files).toEqual([".pytest.ini", "conftest.py", "pyproject.toml", "pytest.ini"]);
    expect(derive(["python3", "-m", "pytest"], repo).definition.present).toEqual(["pyproject.toml"]);
    expect(derive(["uv", "run", "pytest"], repo).definition.present).toEqual(["pyproject.toml"]);
  });

  it("a script named in the argv, sh -c, and nothing outside the repository", () => {
    expect(derive(["bash", "ci.sh"], { "ci.sh": "npm test\n", "package.json": pkg({ test: "true" }) }).definition.scripts[0]!.entries.test).toBe(
      "true",
    );
    expect(derive(["sh", "-c", "./a.sh && make"], { "a.sh": "" }).definition.present).toEqual(["a.sh"]);
    // A program named by its path without a script extension (`./check`) is the guard's too.
    expect(derive(["./check"], { check: "#!/bin/sh\ntrue\n" }).definition.present).toEqual(["check"]);
    expect(derive(["bash", "../outside.sh", "/etc/x.sh", "$HOME/y.sh"], {}).definition.files).toEqual([]);
  });

  it("a definition calling itself ends", () => {
    const { definition } = derive(["npm", "test"], { "package.json": pkg({ test: "npm test" }) });
    expect(definition.scripts[0]!.entries.test).toBe("npm test");
  });
});

describe("script entries taken back", () => {
  const start = { manifest: "package.json", entries: { test: "node --test", pretest: null, posttest: null } };

  it("names the changed entries (an added pretest too), not a new dependency", () => {
    expect(changedScriptEntries(start, pkg({ test: "node --test" }, { dependencies: { x: "1" } }))).toEqual([]);
    expect(changedScriptEntries(start, pkg({ test: "true", pretest: "x" }))).toEqual(["test", "pretest"]);
    expect(changedScriptEntries(start, null)).toEqual(["test"]);
  });

  it("restores the entries and keeps the agent's other changes, in its indentation", () => {
    const agent = `${JSON.stringify({ name: "p", dependencies: { x: "1" }, scripts: { test: "true", pretest: "exit 0", build: "tsc" } }, null, 4)}\n`;
    const restored = restoreScriptEntries(start, agent)!;
    expect(JSON.parse(restored)).toEqual({ name: "p", dependencies: { x: "1" }, scripts: { test: "node --test", build: "tsc" } });
    expect(restored).toContain('\n    "dependencies"');
    expect(restoreScriptEntries(start, "{not json")).toBeUndefined();
  });

  it("a file the definition names but the start lacks, created later, is not a change of the definition (an agent may create ./check.sh)", () => {
    const at = (repo: Record<string, string>) => {
      const texts = new Map<string, string | null>(Object.keys(repo).map((k) => [k, repo[k]!]));
      for (;;) {
        const { definition, unread } = deriveGuardDefinition(["just", "ci"], texts);
        if (unread.length === 0) return { guard: ["just", "ci"], definition, texts };
        for (const file of unread) texts.set(file, repo[file] ?? null);
      }
    };
    const before = at({ justfile: "ci:\n    ./check.sh\n" });
    expect(definitionDifferences(before, at({ justfile: "ci:\n    ./check.sh\n", "check.sh": "true\n" }))).toEqual([]);
    expect(definitionDifferences(before, at({ justfile: "ci:\n    true\n" }))).toEqual(["justfile"]);
    expect(definitionDifferences(before, at({ justfile: "ci:\n    ./check.sh\n", ".justfile": "ci:\n    true\n" }))).toEqual([".justfile"]);
  });

  it("differences between two definitions are named", () => {
    const a = derive(["npm", "test"], { "package.json": pkg({ test: "a" }) });
    const b = derive(["npm", "test"], { "package.json": pkg({ test: "b" }) });
    const texts = new Map();
    expect(
      definitionDifferences({ guard: ["npm", "test"], definition: a.definition, texts }, { guard: ["npm", "test"], definition: b.definition, texts }),
    ).toEqual(["package.json scripts.test"]);
  });
});

describe("test files by convention", () => {
  it("names the common ecosystems' test files, never the runner's own, and a config's globs replace them", async () => {
    const { testFilesIn, globPattern } = await import("../../src/core/guard/test-files.js");
    const changed = [
      "src/a.test.ts",
      "src/b.spec.js",
      "src/__tests__/c.js",
      "test/helpers/x.ts",
      "tests/test_io.py",
      "pkg/io_test.go",
      "app/conftest.py",
      "src/Main.java",
      "src/MainTest.java",
      "src/contest.ts",
      ".runner/state/tree.json",
      "README.md",
    ];
    expect(testFilesIn(changed)).toEqual([
      "app/conftest.py",
      "pkg/io_test.go",
      "src/MainTest.java",
      "src/__tests__/c.js",
      "src/a.test.ts",
      "src/b.spec.js",
      "test/helpers/x.ts",
      "tests/test_io.py",
    ]);
    expect(testFilesIn(changed, ["src/*.ts"])).toEqual(["src/a.test.ts", "src/contest.ts"]);
    expect(globPattern("**/x").test("x")).toBe(true);
    expect(globPattern("a/**").test("a/b/c")).toBe(true);
    expect(globPattern("*.md").test("docs/a.md")).toBe(false);
  });
});
