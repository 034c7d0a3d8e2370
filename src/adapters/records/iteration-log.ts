// The iteration logger (CONTRACT §2, §8): `.runner/iterations/<run-id>/<NNNN>/` and the run's
// append-only `events.jsonl`. Local-only (gitignored). Everything written is redacted, and written
// as src/adapters/files/safe-files.ts does it: the folder is in the agent's reach, so no write follows a
// link the agent planted or lands in a file the runner did not create for it.
import { rmSync } from "node:fs";
import path from "node:path";
import { eventsFile, iterationDir } from "../../core/base/layout.js";
import { redactSecrets } from "../../core/base/text-limits.js";
import { appendSafely, copySafely, ensureRealFolder, writeSafely } from "../files/safe-files.js";

export class IterationLog {
  readonly dir: string;
  private readonly eventsPath: string;

  constructor(
    private readonly root: string,
    readonly runId: string,
    readonly iteration: number,
    private readonly secrets: readonly string[],
  ) {
    this.dir = path.join(root, ...iterationDir(runId, iteration).split("/"));
    this.eventsPath = path.join(root, ...eventsFile(runId).split("/"));
  }

  /** Absolute path of a file in the iteration's folder. */
  file(name: string): string {
    return path.join(this.dir, name);
  }

  /** The iteration's folder emptied (whatever was there, links included) and made anew. */
  clear(): void {
    rmSync(this.dir, { recursive: true, force: true });
    this.ensureDir();
  }

  /** The iteration's folder, a real folder all the way from the repository's top. */
  ensureDir(): void {
    ensureRealFolder(this.root, this.dir);
  }

  write(name: string, text: string): void {
    this.ensureDir();
    writeSafely(this.file(name), redactSecrets(text, this.secrets));
  }

  /** Whether `write` would change `text` (+ a newline when `trailingNewline`): it holds a secret value. */
  redacts(text: string, trailingNewline = false): boolean {
    // A secret ending in a newline might reach into the newline: counted as held.
    return this.secrets.some((secret) => text.includes(secret) || (trailingNewline && secret.endsWith("\n")));
  }

  /** Writes `name` as a byte-for-byte copy of `source`: only for a file known to hold no secret. */
  copyFile(name: string, source: string): void {
    this.ensureDir();
    copySafely(source, this.file(name));
  }

  writeJson(name: string, value: unknown): void {
    this.write(name, `${JSON.stringify(value, null, 2)}\n`);
  }

  /** Appends one JSON object per line to the run's events.jsonl. */
  appendEvents(events: readonly object[]): void {
    if (events.length === 0) return;
    ensureRealFolder(this.root, path.dirname(this.eventsPath));
    appendSafely(this.eventsPath, redactSecrets(events.map((event) => `${JSON.stringify(event)}\n`).join(""), this.secrets));
  }
}
