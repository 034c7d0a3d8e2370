// An iteration's usage as its local meta.json recorded it (absent for an iteration run elsewhere,
// or by an agent that reports none): for the `run` summary, `runner log` and `runner status`.
import path from "node:path";
import { addUsage, usageFromMeta, type UsageTotals } from "../../core/agent/agent-usage.js";
import { iterationDir } from "../../core/base/layout.js";
import { readSmallAgentFile } from "../files/safe-files.js";

/** meta.json holds bounded texts (the summary, the failure): anything larger is not the runner's. */
export const META_MAX_BYTES = 1024 * 1024;

/**
 * meta.json of an iteration, parsed; undefined when it is missing or not JSON, or, given the loop
 * commit it must belong to, when it names another (a run id used again: an earlier run's log).
 */
export async function readIterationMeta(
  root: string,
  runId: string,
  iteration: number,
  commit?: string,
): Promise<Record<string, unknown> | undefined> {
  // (in the agent's reach: read as its files are, never through a link, from a FIFO, or beyond the bound)
  const text = readSmallAgentFile(path.join(root, ...`${iterationDir(runId, iteration)}/meta.json`.split("/")), META_MAX_BYTES);
  if (text === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
    const meta = value as Record<string, unknown>;
    return commit === undefined || meta.commit === commit ? meta : undefined;
  } catch {
    return undefined;
  }
}

async function readIterationUsage(root: string, runId: string, iteration: number, commit?: string): Promise<UsageTotals | undefined> {
  return usageFromMeta((await readIterationMeta(root, runId, iteration, commit))?.usage);
}

/** The usage of the given loop commits' iterations summed (each meta.json checked against its commit); undefined when none recorded any. */
export async function sumIterationUsage(
  root: string,
  runId: string,
  iterations: readonly { iteration: number; commit: string }[],
): Promise<UsageTotals | undefined> {
  const all = await Promise.all(iterations.map(({ iteration, commit }) => readIterationUsage(root, runId, iteration, commit)));
  return all.reduce<UsageTotals | undefined>((sum, usage) => addUsage(sum, usage), undefined);
}
