// Builds dist/ (the bundle dist/runner.mjs that bin/runner.js loads, and the demo agent) before the
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

export default function setup(): void {
  const marker = path.join(root, "dist", "runner.mjs");
  const sources = Math.max(newestMtime(path.join(root, "src")), newestMtime(path.join(root, "machines")), statSync(path.join(root, "package.json")).mtimeMs);
  if (existsSync(marker) && statSync(marker).mtimeMs >= sources) return;
  execFileSync(process.execPath, [path.join(root, "scripts", "bundle.mjs")], { cwd: root, stdio: "inherit" });
}
