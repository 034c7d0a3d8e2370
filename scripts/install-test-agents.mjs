#!/usr/bin/env node
// Installs the real agent CLIs that test/real-agents/ drives (pinned in test/real-agents/versions.json)
// into a cache folder outside the project's node_modules, so they are no dependency every user
// downloads:
//   ${RUNNER_TEST_AGENTS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/runner-test-agents}/<package>@<version>/
// What the packages ship (checked at the pinned versions): both are small npm wrappers whose
// platform binary comes from the npm registry as an optional dependency (no download from anywhere
// else). @openai/codex's bin/codex.js (Node) runs @openai/codex-<platform>/vendor/<triple>/bin/codex;
// @anthropic-ai/claude-code's bin/claude.exe is a shell stub until its postinstall (install.cjs)
// hard-links @anthropic-ai/claude-code-<platform>/claude over it. Such a fix-up is declared per
// agent in versions.json ("postinstall": {"script": "install.cjs", "stub": "bin/claude.exe"}: run
// the package's script when the stub is still a stub) and run here explicitly, so the install works
// whether or not npm runs dependency scripts.
// Safe when two processes race: each installs into its own temp folder and renames it into place;
// the loser throws its copy away and uses the winner's. Usage: `node scripts/install-test-agents.mjs`
// prints one JSON object {codex, claude, ...}; tests import installTestAgents().
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
export const VERSIONS_FILE = path.join(root, "test", "real-agents", "versions.json");
const MARKER = "runner-test-agent.json";

/** The pins: { codex: {package, version, bin, postinstall?}, claude: {...} }. */
export function agentPins() {
  return JSON.parse(readFileSync(VERSIONS_FILE, "utf8"));
}

export function agentsCacheDir(env = process.env) {
  if (env.RUNNER_TEST_AGENTS_DIR) return path.resolve(env.RUNNER_TEST_AGENTS_DIR);
  const cache = env.XDG_CACHE_HOME || path.join(env.HOME || os.homedir(), ".cache");
  return path.join(cache, "runner-test-agents");
}

/** npm without the npm_* variables of an enclosing `npm test` (they would point it at this project). */
function npmEnv() {
  const env = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.toLowerCase().startsWith("npm_") || key.toLowerCase() === "npm_config_cache" || key.toLowerCase() === "npm_config_registry")
      env[key] = value;
  }
  return env;
}

function packageDir(prefix, name) {
  return path.join(prefix, "node_modules", ...name.split("/"));
}

/** The executable a user's `npm i -g` would put on PATH, and the native binary behind it. */
function executables(prefix, pin) {
  const dir = packageDir(prefix, pin.package);
  const manifest = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8"));
  const bin = path.join(dir, typeof manifest.bin === "string" ? manifest.bin : manifest.bin[pin.bin]);
  return { bin };
}

/** A stub is a small script (Claude's is 500 bytes); the real binary it stands for is many MB. */
const STUB_BYTES = 64 * 1024;

/** The package's own postinstall script (versions.json `postinstall.script`), run while `postinstall.stub` is still a stub. */
function runPostinstall(prefix, pin) {
  const dir = packageDir(prefix, pin.package);
  const stub = path.join(dir, ...pin.postinstall.stub.split("/"));
  if (statSync(stub).size < STUB_BYTES) execFileSync(process.execPath, [path.join(dir, pin.postinstall.script)], { cwd: dir, stdio: "pipe" });
  if (statSync(stub).size < STUB_BYTES) {
    throw new Error(
      `${pin.package}@${pin.version}: its postinstall left the stub in ${pin.postinstall.stub} (no platform package for ${process.platform}-${process.arch}?)`,
    );
  }
}

/** What `<file> --version` says, on stdout or stderr (pi prints it on stderr when stdin is no terminal). */
function versionOf(file) {
  const said = spawnSync(file, ["--version"], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 30_000 });
  if (said.error) throw said.error;
  if (said.status !== 0) throw new Error(`\`${file} --version\` exited with ${said.status ?? said.signal}: ${said.stderr.trim()}`);
  return `${said.stdout}\n${said.stderr}`.trim();
}

function installInto(tmp, pin) {
  mkdirSync(tmp, { recursive: true });
  writeFileSync(path.join(tmp, "package.json"), `${JSON.stringify({ private: true, dependencies: { [pin.package]: pin.version } }, null, 2)}\n`);
  execFileSync(
    "npm",
    ["install", "--prefix", tmp, "--no-audit", "--no-fund", "--no-save", "--include=optional", "--ignore-scripts", "--loglevel=error"],
    { cwd: tmp, env: npmEnv(), stdio: ["ignore", "pipe", "pipe"], timeout: 10 * 60_000 },
  );
  if (pin.postinstall) runPostinstall(tmp, pin);
  const { bin } = executables(tmp, pin);
  const version = versionOf(bin);
  if (!version.includes(pin.version)) throw new Error(`${pin.package}: \`${bin} --version\` says "${version}", expected ${pin.version}`);
  writeFileSync(path.join(tmp, MARKER), `${JSON.stringify({ package: pin.package, version: pin.version, reported: version }, null, 2)}\n`);
}

/** Installs one agent (or finds it in the cache); returns its executable's absolute path. */
export function installTestAgent(kind, { cacheDir = agentsCacheDir(), log = () => {} } = {}) {
  const pin = agentPins()[kind];
  if (!pin) throw new Error(`No pinned agent named "${kind}" in ${VERSIONS_FILE}.`);
  const final = path.join(cacheDir, `${pin.package.replace("/", "+")}@${pin.version}`);
  if (!existsSync(path.join(final, MARKER))) {
    const tmp = path.join(cacheDir, `.tmp-${pin.package.replace("/", "+")}@${pin.version}-${process.pid}-${Date.now()}`);
    const started = Date.now();
    log(`installing ${pin.package}@${pin.version} into ${final}`);
    try {
      installInto(tmp, pin);
      try {
        renameSync(tmp, final);
      } catch (error) {
        // Another process renamed its complete copy into place first: use that one.
        if (!existsSync(path.join(final, MARKER))) throw error;
      }
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
    log(`installed ${pin.package}@${pin.version} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
  return executables(final, pin).bin;
}

/** Installs every pinned agent; returns { codex: path, claude: path }. */
export function installTestAgents(options = {}) {
  const paths = {};
  for (const kind of Object.keys(agentPins())) paths[kind] = installTestAgent(kind, options);
  return paths;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    const paths = installTestAgents({ log: (line) => console.error(line) });
    console.log(JSON.stringify(paths, null, 2));
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error));
    process.exit(1);
  }
}
