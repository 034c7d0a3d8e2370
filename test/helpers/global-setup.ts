// Builds dist/ (the bundle dist/runner.cjs that bin/runner.js loads, and the demo agent) before the
// tests when any source file is newer than the last build, so CLI tests always run the current
// code through the real binary.
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..", "..");

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(full) : statSync(full).mtimeMs);
  }
  return newest;
}

/** Modules tests run in child processes of their own (a runner killed alone), bundled from the sources (not shipped). */
export const TEST_MODULES_DIR = path.join(root, "node_modules", ".cache", "runner-test-modules");
const TEST_MODULES = ["src/adapters/process/process-runner.ts", "src/adapters/process/containment.ts", "src/adapters/process/proc-table.ts"];

export default async function setup(): Promise<void> {
  const marker = path.join(root, "dist", "runner.cjs");
  const sources = Math.max(
    newestMtime(path.join(root, "src")),
    newestMtime(path.join(root, "machines")),
    statSync(path.join(root, "package.json")).mtimeMs,
  );
  if (!existsSync(marker) || statSync(marker).mtimeMs < sources)
    execFileSync(process.execPath, [path.join(root, "scripts", "bundle.mjs")], { cwd: root, stdio: "inherit" });
  const testMarker = path.join(TEST_MODULES_DIR, "process-runner.mjs");
  if (existsSync(testMarker) && statSync(testMarker).mtimeMs >= sources) return;
  const { build } = await import("rolldown");
  for (const entry of TEST_MODULES) {
    await build({
      input: path.join(root, entry),
      platform: "node",
      logLevel: "silent",
      output: { file: path.join(TEST_MODULES_DIR, `${path.basename(entry, ".ts")}.mjs`), format: "esm", codeSplitting: false },
    });
  }
}
