// Diagnostics for the figures above: child processes per step (strace), the CLI bundle's load cost on the
// start-up path, and, with --profile, CPU profiles of the step, of `runner next` and of the core.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { log, median, PROJECT_ROOT, run, RUNNER_BIN, RUNNER_ROOT, tempDir } from "./lib/common.mjs";
import { resetRepo } from "./lib/fixtures.mjs";
import { summarizeProfile } from "./lib/cpuprofile.mjs";

export function hasStrace() {
  if (!existsSync("/usr/bin/strace")) return false;
  return run(["/usr/bin/strace", "-f", "-qq", "-e", "trace=execve", "-o", "/dev/null", "true"], { allowFail: true }).status === 0;
}

/** Programs started (successful execve) by `argv`, grouped: git by subcommand, others by name. */
function countExecs(argv, options) {
  const out = path.join(tempDir("runner-bench-strace-"), "execve.txt");
  run(["/usr/bin/strace", "-f", "-qq", "-e", "trace=execve", "-e", "status=successful", "-o", out, ...argv], options);
  const counts = {};
  let total = 0;
  for (const line of readFileSync(out, "utf8").split("\n")) {
    const match = /execve\("([^"]+)", \[((?:"(?:[^"\\]|\\.)*"(?:, )?)*)/.exec(line);
    if (!match) continue;
    const args = [...match[2].matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]);
    const program = path.basename(match[1]);
    // git's own subcommands (git add, git maintenance): skip global -c options.
    let name = program;
    if (program === "git") {
      let i = 1;
      while (args[i] === "-c" || args[i] === "-C") i += 2;
      name = `git ${args[i] ?? ""}`.trim();
    }
    counts[name] = (counts[name] ?? 0) + 1;
    total++;
  }
  const git = Object.entries(counts)
    .filter(([name]) => name.startsWith("git"))
    .reduce((sum, [, n]) => sum + n, 0);
  return { total, git, byProgram: Object.fromEntries(Object.entries(counts).sort((a, b) => b[1] - a[1])) };
}

export function processesPerStep(repo, base, floorScriptPath) {
  log("  diagnostics: processes per step (strace -f -e trace=execve)");
  resetRepo(repo, base);
  const step = countExecs(["node", RUNNER_BIN, "step"], { cwd: repo.dir, env: repo.env });
  resetRepo(repo, base);
  run(["mkdir", "-p", path.join(repo.dir, ".runner", "iterations")]);
  const floor = countExecs(["sh", floorScriptPath], {
    cwd: repo.dir,
    env: { ...repo.env, BENCH_FLOOR_OUTPUT: path.join(repo.dir, ".runner", "iterations", "floor-output.json") },
  });
  return { step, floor };
}

/**
 * Start-up of the CLI in fresh processes (median of `reps`): the bundle read, compiled and evaluated
 * as bin/runner.js does it, without a code cache and with the one `runner step` keeps.
 */
export function startupTimes(reps) {
  // Builds with bin/load-cli.js (a code cache per command) are measured without and with the step's
  // cache; later builds load the entry chunk (dist/runner.mjs, later dist/runner.cjs with the code
  // cache in dist/cache/): each command loads its own chunks.
  const cached = existsSync(path.join(RUNNER_ROOT, "bin", "load-cli.js"));
  log(`  diagnostics: loading the CLI's entry, ${reps} fresh processes${cached ? " each without and with the step's code cache" : ""}`);
  const result = {};
  for (const [label, command] of cached
    ? [
        ["no cache", "-"],
        ["step's cache", "step"],
      ]
    : [["entry", "-"]]) {
    const samples = [];
    for (let i = 0; i < reps; i++) {
      const out = run(["node", path.join(PROJECT_ROOT, "bench", "lib", "startup-times.mjs"), command], { cwd: PROJECT_ROOT });
      samples.push(JSON.parse(out.stdout));
    }
    if (samples[0].unavailable) return { unavailable: samples[0].unavailable };
    result[label] = Object.fromEntries(
      Object.keys(samples[0]).map((key) => [
        key,
        typeof samples[0][key] === "number" ? Number(median(samples.map((s) => s[key])).toFixed(1)) : samples.at(-1)[key],
      ]),
    );
  }
  return result;
}

function profileOf(dir) {
  const file = readdirSync(dir).find((name) => name.endsWith(".cpuprofile"));
  return summarizeProfile(path.join(dir, file), 20);
}

/** CPU profiles (node --cpu-prof) of one step, one `next --json` and the core at the largest size. */
export function profiles(stepRepo, stepBase, nextRepo, nextBase, coreNodes) {
  log("  diagnostics: CPU profiles (node --cpu-prof)");
  const out = {};
  resetRepo(stepRepo, stepBase);
  let dir = tempDir("runner-bench-prof-");
  run(["node", "--cpu-prof", `--cpu-prof-dir=${dir}`, RUNNER_BIN, "step"], { cwd: stepRepo.dir, env: stepRepo.env });
  out.step = profileOf(dir);
  resetRepo(nextRepo, nextBase);
  dir = tempDir("runner-bench-prof-");
  run(["node", "--cpu-prof", `--cpu-prof-dir=${dir}`, RUNNER_BIN, "next", "--json"], { cwd: nextRepo.dir, env: nextRepo.env });
  out.next = profileOf(dir);
  dir = tempDir("runner-bench-prof-");
  run(["node", "--cpu-prof", `--cpu-prof-dir=${dir}`, path.join(PROJECT_ROOT, "bench", "lib", "core-once.mjs"), String(coreNodes)], {
    cwd: PROJECT_ROOT,
  });
  out.core = profileOf(dir);
  return out;
}
