// First contact with the command line: help, version, and usage errors that name the argument and
// what it may be (one sentence on stderr, exit 1), through the built binary.
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { PROJECT_ROOT, runner, tempDir } from "../helpers/sandbox.js";
import { oneSentence, scenario } from "../helpers/scenario.js";

describe.concurrent("the command line", () => {
  it("`runner` alone prints the help: every command, and how to get a command's options", async () => {
    const result = await runner(tempDir(), []);
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toBe("");
    expect(result.stdout).toMatch(/^Usage: runner <command> \[options\]/);
    for (const command of ["init", "start", "step", "run", "status", "log", "audit", "demo"])
      expect(result.stdout).toMatch(new RegExp(`^  ${command} +\\S`, "m"));
    expect(result.stdout).toContain("runner <command> --help");
  });

  it("--version prints the package's version", async () => {
    const version = (JSON.parse(readFileSync(path.join(PROJECT_ROOT, "package.json"), "utf8")) as { version: string }).version;
    for (const args of [["--version"], ["-C", ".", "--version"]]) {
      const result = await runner(tempDir(), args);
      expect([result.exitCode, result.stdout, result.stderr]).toEqual([0, version, ""]);
    }
  });

  it("`runner help` and `runner help <command>` are --help; `runner -v` is --version", async () => {
    const dir = tempDir();
    const version = (JSON.parse(readFileSync(path.join(PROJECT_ROOT, "package.json"), "utf8")) as { version: string }).version;
    expect(await runner(dir, ["help"])).toEqual(await runner(dir, ["--help"]));
    expect(await runner(dir, ["help", "diagram"])).toEqual(await runner(dir, ["diagram", "--help"]));
    const unknown = await runner(dir, ["help", "nope"]);
    expect(unknown.exitCode).toBe(1);
    expect(oneSentence(unknown.stderr)).toMatch(/^Unknown command "nope"/);
    const short = await runner(dir, ["-v"]);
    expect([short.exitCode, short.stdout, short.stderr]).toEqual([0, version, ""]);
  });

  it("-C naming a folder that does not exist (or a file) is one sentence from every command, exit 1", async () => {
    const help = (await runner(tempDir(), ["--help"])).stdout;
    const commands = [...help.matchAll(/^ {2}([a-z]+) {2,}\S/gm)].map((match) => match[1]!);
    expect(commands).toContain("status");
    const missing = path.join(tempDir(), "nonexistent");
    const file = path.join(tempDir(), "a-file.txt");
    writeFileSync(file, "not a folder\n");
    // (what each command needs to get past its own argument checks)
    const positional: Record<string, string[]> = {
      show: ["a"],
      add: ["root", "--title", "T"],
      edit: ["a", "--title", "T"],
      move: ["a", "--parent", "b"],
      remove: ["a"],
      unstick: ["a"],
      cleanup: ["r1"],
      config: ["guard.command", "--set", "x"],
      extend: ["--title", "T"],
      import: ["plan.md"],
    };
    for (const command of commands) {
      for (const [where, pattern] of [
        [missing, /^The folder .*nonexistent \(-C\) does not exist; give -C the path of your repository\.$/],
        [file, /^-C .*a-file\.txt is a file, not a folder; give -C the path of your repository\.$/],
      ] as const) {
        const result = await runner(tempDir(), ["-C", where, command, ...(positional[command] ?? [])]);
        expect(result.exitCode, `${command}: ${result.stderr}`).toBe(1);
        expect(oneSentence(result.stderr), command).toMatch(pattern);
      }
    }
  });

  it("a command's --help lists its options with their values and defaults", async () => {
    const result = await runner(tempDir(), ["diagram", "--help"]);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toMatch(/^Usage: runner diagram \[options\]/);
    expect(result.stdout).toMatch(/--format <mermaid\|dot\|json\|svg> +Output format \(default: mermaid\)/);
    expect(result.stdout).toMatch(/--output <file>/);
  });

  it("a bad --run-id gets one sentence from every command that takes it, before anything else is looked at", async () => {
    const dir = tempDir(); // not a repository: the id is judged first
    const commands: string[][] = [["step"], ["recheck"], ["run"], ["status"], ["log"], ["audit"], ["show", "a"], ["report"], ["start"]];
    for (const command of commands) {
      const result = await runner(dir, [...command, "--run-id", "a b"]);
      expect([command[0], result.exitCode, result.stdout, oneSentence(result.stderr)]).toEqual([
        command[0],
        1,
        "",
        `Run id "a b" is not valid: use 1 to 64 letters, digits, '.', '_' or '-'.`,
      ]);
    }
    // and `runner cleanup <run-id>`, whose id is its positional argument
    const cleanup = await runner(dir, ["cleanup", "a b"]);
    expect([cleanup.exitCode, cleanup.stdout, oneSentence(cleanup.stderr)]).toEqual([
      1,
      "",
      `Run id "a b" is not valid: use 1 to 64 letters, digits, '.', '_' or '-'.`,
    ]);
  });

  it("an option value outside its choices names the option and every allowed value", async () => {
    const result = await runner(tempDir(), ["diagram", "--format", "png"]);
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toBe("");
    expect(oneSentence(result.stderr)).toBe(
      '--format must be one of mermaid, dot, json, svg, not "png" (did you mean svg?). See `runner diagram --help`.',
    );
  });

  it("an unknown command or option is named, with the nearest one and the list", async () => {
    const command = await runner(tempDir(), ["stpe"]);
    expect(command.exitCode).toBe(1);
    expect(oneSentence(command.stderr)).toMatch(
      /^Unknown command "stpe" \(did you mean step\?\); the commands are init, .*demo\. See `runner --help`\.$/,
    );
    const option = await runner(tempDir(), ["status", "--jsn"]);
    expect(option.exitCode).toBe(1);
    expect(oneSentence(option.stderr)).toBe(
      "Unknown option --jsn for `runner status` (did you mean --json?); its options are --json, --run-id (and -C <dir>, --debug). See `runner status --help`.",
    );
  });

  it("a missing value, a number that is not one, a value given to a flag", async () => {
    const cases: [string[], string][] = [
      [["status", "--run-id"], "--run-id needs a value (--run-id <id>). See `runner status --help`."],
      [["run", "--max-iterations", "many"], '--max-iterations must be a whole number of at least 1, not "many". See `runner run --help`.'],
      [["run", "--max-iterations", "0"], '--max-iterations must be a whole number of at least 1, not "0". See `runner run --help`.'],
      [["next", "--json=yes"], '--json takes no value (given "yes"). See `runner next --help`.'],
      [["next", "extra"], 'Unexpected argument "extra" for `runner next`; it takes none. See `runner next --help`.'],
    ];
    for (const [args, sentence] of cases) {
      const result = await runner(tempDir(), args);
      expect(result.exitCode, args.join(" ")).toBe(1);
      expect(oneSentence(result.stderr), args.join(" ")).toBe(sentence);
    }
  });
});

describe("what the runner cites, a user of the package has", () => {
  it("`runner doctor` names docs/contract.md §6 of the installed package, a file that exists, for a missing agent script", async () => {
    const s = await scenario({ executor: ["bash", "agent.sh"] });
    const doctor = await s.runner(["doctor"]);
    expect(doctor.exitCode).toBe(1);
    const out = doctor.stdout + doctor.stderr;
    expect(out).not.toContain("CONTRACT");
    const cited = /docs\/contract\.md §6 \(([^)]+)\)/.exec(out);
    expect(cited, out).not.toBeNull();
    expect(existsSync(cited![1]!)).toBe(true);
    expect(cited![1]).toBe(path.join(PROJECT_ROOT, "docs", "contract.md"));
  });

  it('no sentence in src/ cites "CONTRACT §" (code comments may: they are for the developers, who have docs/contract.md)', () => {
    const offenders: string[] = [];
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const full = path.join(dir, entry.name);
        if (entry.isDirectory()) walk(full);
        else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".generated.ts"))
          for (const [i, line] of readFileSync(full, "utf8").split("\n").entries())
            if (/CONTRACT §/.test(line.replace(/\/\/.*$|^\s*(\/\*\*?|\*).*$/, ""))) offenders.push(`${path.relative(PROJECT_ROOT, full)}:${i + 1}`);
      }
    };
    walk(path.join(PROJECT_ROOT, "src"));
    expect(offenders).toEqual([]);
  });
});
