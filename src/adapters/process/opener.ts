// Opens a file with the desktop's default application (`xdg-open` on Linux and the BSDs, `open` on
// macOS), when that program is on PATH. The program is started detached and not waited for.
import { spawn } from "node:child_process";
import { accessSync, constants } from "node:fs";
import path from "node:path";

/** The opener program for this platform, if it is on PATH. */
export function findOpener(env: Readonly<Record<string, string | undefined>> = process.env, platform = process.platform): string | undefined {
  const name = platform === "darwin" ? "open" : platform === "win32" ? undefined : "xdg-open";
  if (name === undefined) return undefined;
  for (const dir of (env.PATH ?? "").split(path.delimiter)) {
    if (dir === "") continue;
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      continue;
    }
  }
  return undefined;
}

/** Starts `opener file` in the background; resolves once it started (or could not be). */
export function openWith(opener: string, file: string): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn(opener, [file], { detached: true, stdio: "ignore" });
    child.once("error", () => resolve(false));
    child.once("spawn", () => {
      child.unref();
      resolve(true);
    });
  });
}
