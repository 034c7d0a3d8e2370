// Reads the runner's files in a project (CONTRACT §2): config, tree, node policies, notes. Commands
// that need only the tree (`next`, `status`) load it from tree-store.ts, without the config's
// TOML parser.
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { parseConfig, type ConfigResult } from "../../core/config/config.js";
import { LAYOUT } from "../../core/base/layout.js";
import { pathEntryProblem } from "../../core/guard/path-rules.js";
import { parseFinished } from "../../core/plan/plan-finished.js";
import { jsonSyntaxMessage, type Problem } from "../../core/base/problems.js";
import { validatePolicySchema } from "../../core/base/schema.js";
import { configurationDoc } from "../../package-files.js";
export { loadTree } from "./tree-store.js";

export function projectPath(root: string, relative: string): string {
  return path.join(root, ...relative.split("/"));
}

/** A file's text, or undefined when it does not exist. */
export async function readOptional(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

export async function loadConfig(root: string): Promise<ConfigResult> {
  const text = await readOptional(projectPath(root, LAYOUT.config));
  if (text === undefined) {
    return {
      ok: false,
      problems: [{ path: "$", message: `the file does not exist; \`runner init\` writes one, or create it as ${configurationDoc()} shows` }],
    };
  }
  return parseConfig(text);
}

/**
 * .runner/state/finished.json: the leaves an imported plan marks finished; undefined when there is
 * none, the problem when it cannot be read (the step then judges none first; `runner validate` says so).
 */
export async function loadFinished(root: string): Promise<{ ok: true; ids: string[] } | { ok: false; problem: string } | undefined> {
  const text = await readOptional(projectPath(root, LAYOUT.finished));
  return text === undefined ? undefined : parseFinished(text);
}

export interface PolicyLoad {
  nodeId: string;
  file: string;
  allowedWritePaths?: string[];
  problems: Problem[];
}

/** A node's policy sidecar, checked; undefined when the node has none. */
export async function loadPolicy(root: string, nodeId: string): Promise<PolicyLoad | undefined> {
  const file = `${LAYOUT.nodes}/${nodeId}/policy.json`;
  const text = await readOptional(projectPath(root, file));
  if (text === undefined) return undefined;
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    return { nodeId, file, problems: [{ path: "$", message: jsonSyntaxMessage(text, error) }] };
  }
  const schema = validatePolicySchema(data);
  if (!schema.ok) return { nodeId, file, problems: schema.problems };
  const problems: Problem[] = [];
  schema.value.allowed_write_paths.forEach((entry, i) => {
    const problem = pathEntryProblem(entry);
    if (problem) problems.push({ path: `$.allowed_write_paths[${i}]`, message: problem });
  });
  return problems.length > 0 ? { nodeId, file, problems } : { nodeId, file, allowedWritePaths: schema.value.allowed_write_paths, problems };
}

/** Every node policy sidecar present under .runner/nodes/. */
export async function loadAllPolicies(root: string): Promise<PolicyLoad[]> {
  let entries: string[];
  try {
    entries = (await readdir(projectPath(root, LAYOUT.nodes), { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name);
  } catch {
    return [];
  }
  const loads = await Promise.all(entries.sort().map((nodeId) => loadPolicy(root, nodeId)));
  return loads.filter((load): load is PolicyLoad => load !== undefined);
}
