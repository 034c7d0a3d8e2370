// `runner demo` (`npm run demo`): a throw-away repository with a small goal, the whole loop run on
// it by the built-in deterministic demo agent (no network), live progress, then the tree with every
// node passed and the run's git log.
import { mkdtempSync, readdirSync, existsSync, mkdirSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { FALLBACK_IDENTITY, GitRepo } from "../../adapters/git/git.js";
import { UsageError } from "../../errors.js";
import { justBinDir, withRunnerJust } from "../../adapters/guard/just-bin.js";
import type { GlobalArgs } from "../command-table.js";
import { printLine } from "../output.js";
import { scaffoldRunnerDir } from "./init.js";
import { runWithView } from "./run.js";

const GOAL = `A tiny calculator library for Node: add and multiply two numbers, and evaluate sums of
products such as "2 + 3 * 4". Each function lives in src/ with a test in test/; the guard
(\`just ci\`, which runs \`node --test\`) must pass.`;

const PROJECT_FILES: Record<string, string> = {
  "package.json": `${JSON.stringify({ name: "runner-demo-calculator", private: true, type: "module" }, null, 2)}\n`,
  "README.md": "# Calculator (runner demo)\n\nBuilt one iteration at a time by `runner` and its demo agent.\n",
  justfile: "# The guard the runner runs after each EXECUTE iteration.\nci:\n    node --test test/\n",
  ".gitignore": "node_modules/\n",
};

export async function run(argv: GlobalArgs & { dir?: string; json: boolean }): Promise<number> {
  const dir = argv.dir ? path.resolve(argv.dir) : mkdtempSync(path.join(tmpdir(), "runner-demo-"));
  if (argv.dir) {
    if (existsSync(dir) && readdirSync(dir).length > 0) throw new UsageError(`${dir} is not empty; give --dir a new or empty folder.`);
    mkdirSync(dir, { recursive: true });
  }
  const say = (line: string) => {
    if (!argv.json) printLine(line);
  };
  say(`runner demo: a throw-away repository in ${dir}`);
  say('goal: a tiny calculator (add, multiply, evaluate "2 + 3 * 4"), guarded by `just ci` (node --test)');
  say("");

  for (const [name, text] of Object.entries(PROJECT_FILES)) await writeFile(path.join(dir, name), text);
  await scaffoldRunnerDir(dir, { goal: GOAL.replace(/\n/g, " "), title: "A tiny calculator", maxAttempts: 3, executor: "demo" });
  // The demo's guard runs `just`: the one this runner was installed with (every step puts it first
  // on the PATH of the agent and the guard; here also for the lookup of the guard's program).
  if (justBinDir() === undefined)
    throw new Error("cannot find the rust-just package (the demo's guard runs `just`); run `npm ci` in the runner's folder");
  process.env.PATH = withRunnerJust({ PATH: process.env.PATH ?? "" }).PATH;
  const git = new GitRepo(dir);
  await git.init("main");
  await git.addAll();
  const identity = await git.identity();
  await git.commitStagedAs("Calculator project with its runner goal", identity.name && identity.email ? undefined : FALLBACK_IDENTITY);
  await git.createBranch("runner/demo");
  say("$ runner start --run-id demo   # branch runner/demo");
  say("$ runner run");

  const summary = await runWithView(dir, { haltOnStuck: false, json: argv.json, runId: undefined }, "demo");
  if (argv.json) return summary.exitCode;

  say("");
  say("$ runner status");
  const { run: status } = await import("./status.js");
  await status({ C: dir, debug: false, json: false });
  say("");
  say("$ git log --oneline main..runner/demo");
  say(await git.onelineLog("main..runner/demo"));
  say("");
  say(`The repository stays in ${dir}: look at .runner/iterations/demo/ for each iteration's prompt, logs and meta.json.`);
  return summary.exitCode;
}
