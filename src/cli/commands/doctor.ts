// `runner doctor [--json]`: everything a run needs, checked before anything is spent — the repository,
// the config, the tree, the agent's program, the guard's program and recipe (with the runner's own
// `just` first on PATH, as a step runs them), the identity commits are made with, how agents are
// contained. One line per check; a problem says the way out. Then every agent the runner speaks
// that is found on the machine, with its version and the versions the runner's tests drive (an
// agent not installed is no problem). Exit 0 when nothing is wrong, else 1.
import { existsSync } from "node:fs";
import path from "node:path";
import { installedAgents, type InstalledAgent } from "../../adapters/agent/agent-versions.js";
import { bestContainment, type ContainmentMethod } from "../../adapters/process/containment.js";
import { FALLBACK_IDENTITY, GitRepo } from "../../adapters/git/git.js";
import { guardDefinitionSummary } from "../../adapters/guard/guard-definition.js";
import { preflight, type PreflightCheck } from "../../adapters/guard/preflight.js";
import { loadConfig } from "../../adapters/files/project-files.js";
import { loadTree } from "../../adapters/files/tree-store.js";
import { checkDerivedPasses } from "../../core/tree/invariants.js";
import { formatProblem, MISSING_TREE_WAY_OUT } from "../../core/base/problems.js";
import { runIdFromBranch } from "../../core/commit/run-id.js";
import { selectLeftmostOpenLeaf } from "../../core/tree/select.js";
import { countNodes } from "../../core/tree/tree.js";
import { EXIT } from "../../exit-codes.js";
import type { GlobalArgs } from "../command-table.js";
import { processEnv } from "../environment.js";
import { printError, printJson, printLine } from "../output.js";
import { findProjectRoot } from "../repo.js";
import { plural } from "../../report/format.js";

export async function run(argv: GlobalArgs & { json?: boolean }): Promise<number> {
  const root = findProjectRoot(argv.C);
  const env = processEnv();
  // The agents' version commands run while the checks are made.
  const agentsFound = installedAgents(env);
  const checks: PreflightCheck[] = [];
  checks.push(...(await repositoryChecks(root, env)));
  const config = await loadConfig(root);
  if (!config.ok) {
    checks.push({
      name: "config",
      detail: ".runner/state/config.toml",
      problem: `.runner/state/config.toml is invalid: ${formatProblem(config.problems[0]!)}; fix it (\`runner validate\` lists every problem).`,
    });
  } else {
    checks.push({ name: "config", detail: ".runner/state/config.toml" });
  }
  checks.push(await treeCheck(root));
  if (config.ok) checks.push(...preflight(root, config.config, env));
  if (config.ok) checks.push(await definitionCheck(root, config.config.guard.command));
  const containment = await bestContainment();
  checks.push({ name: "containment", detail: `${containment} (no process an agent or guard starts outlives its run)` });
  checks.push({ name: "steering", detail: STEERING_PROTECTION[containment] });

  const problems = checks.filter((check) => check.problem !== undefined);
  const agents = await agentsFound;
  const configured = config.ok ? config.config.executor.kind : undefined;
  if (argv.json) {
    printJson({
      ok: problems.length === 0,
      checks: checks.map((check) => ({ name: check.name, ok: check.problem === undefined, detail: check.detail, problem: check.problem ?? null })),
      agents: agents.map((found) => agentJson(found, configured)),
    });
  } else {
    for (const check of checks)
      printLine(`${check.problem ? "✗" : "✓"} ${check.name}: ${check.detail}${check.problem ? `\n    ${check.problem}` : ""}`);
    printLine("agents the runner speaks, as found on this machine (and the versions it is tested with):");
    for (const found of agents) printLine(`  ${agentLine(found, configured)}`);
  }
  if (problems.length === 0) return EXIT.ok;
  printError(
    problems.length === 1 ? `${problems[0]!.problem}` : `${problems.length} problems found (listed above); fix them and run \`runner doctor\` again.`,
  );
  return EXIT.failed;
}

/** Which files (and package.json script entries) the agent may not change, as the guard's definition at HEAD. */
async function definitionCheck(root: string, guard: readonly string[]): Promise<PreflightCheck> {
  const summary = existsSync(path.join(root, ".git")) ? await guardDefinitionSummary(new GitRepo(root), guard).catch(() => undefined) : undefined;
  return {
    name: "guard's definition",
    detail:
      summary === undefined
        ? "read from the starting commit of each iteration (no commit yet)"
        : `${summary} (at HEAD; the agent's changes to them are taken back)`,
  };
}

async function repositoryChecks(root: string, env: Record<string, string>): Promise<PreflightCheck[]> {
  if (!existsSync(path.join(root, ".git"))) {
    return [
      {
        name: "repository",
        detail: root,
        problem: `${root} is not the top folder of a git repository; run \`git init\` there and commit your project.`,
      },
    ];
  }
  const git = new GitRepo(root);
  try {
    const [status, identity] = await Promise.all([git.status(), git.identity()]);
    const runId = runIdFromBranch(status.branch);
    const where =
      status.head === undefined
        ? "no commits yet"
        : runId
          ? `on ${status.branch} (run ${runId})`
          : `on ${status.branch ?? "a detached HEAD"} (\`runner start\` makes a run branch)`;
    const name = identity.name ?? env.GIT_AUTHOR_NAME;
    const email = identity.email ?? env.GIT_AUTHOR_EMAIL;
    const who =
      name !== undefined && email !== undefined
        ? `${name} <${email}>`
        : `none set; loop commits are made as ${FALLBACK_IDENTITY.name} <${FALLBACK_IDENTITY.email}>`;
    return [
      status.head === undefined
        ? {
            name: "repository",
            detail: `${root}, ${where}`,
            problem: "The repository has no commits yet; commit your project (with .runner/) first.",
          }
        : { name: "repository", detail: `${root}, ${where}` },
      { name: "git identity", detail: who },
    ];
  } catch (error) {
    return [
      {
        name: "repository",
        detail: root,
        problem: `git cannot read the repository (${error instanceof Error ? error.message : String(error)}); fix it with git first.`,
      },
    ];
  }
}

async function treeCheck(root: string): Promise<PreflightCheck> {
  const load = await loadTree(root);
  if (!load.ok) {
    if (load.missing)
      return {
        name: "task tree",
        detail: "missing",
        problem: `.runner/state/tree.json does not exist; ${MISSING_TREE_WAY_OUT}.`,
      };
    // An invalid tree is not a setup problem: the next step repairs it (REPAIR TREE).
    return { name: "task tree", detail: `invalid (${formatProblem(load.problems[0]!)}); the next \`runner step\` repairs it` };
  }
  const derived = checkDerivedPasses(load.tree);
  if (derived.length > 0) return { name: "task tree", detail: `invalid (${formatProblem(derived[0]!)}); the next \`runner step\` repairs it` };
  const selection = selectLeftmostOpenLeaf(load.tree);
  return {
    name: "task tree",
    detail: `${plural(countNodes(load.tree), "node")}; ${selection.kind === "complete" ? "the root passes" : `next leaf ${selection.leaf.id}`}`,
  };
}

/** Whether the runner's tests drive the version found; undefined when none was read. */
function tested(found: InstalledAgent): boolean | undefined {
  return found.version === undefined ? undefined : found.agent.testedVersions.includes(found.version);
}

/** `codex 0.169.0, tested (Codex CLI, /usr/local/bin/codex) — [executor] kind` */
function agentLine(found: InstalledAgent, configured: string | undefined): string {
  const { agent, file, version } = found;
  const testedWith = `tested: ${agent.testedVersions.join(", ")}`;
  const mark = agent.kind === configured ? " — [executor] kind" : "";
  if (file === undefined) return `${agent.kind}: not found (${testedWith}; \`npm install -g ${agent.package}\`)${mark}`;
  const what =
    version === undefined
      ? `version unknown, ${found.problem}; ${testedWith}`
      : tested(found)
        ? `${version}, tested`
        : `${version}, not a tested version (${testedWith})`;
  const auth = found.authSet.length > 0 ? `; ${found.authSet.join(", ")} set` : `; none of ${agent.authEnv.join(", ")} set (its own login may do)`;
  return `${agent.kind}: ${what} (${agent.title}, ${file}${auth})${mark}`;
}

function agentJson(found: InstalledAgent, configured: string | undefined): object {
  return {
    kind: found.agent.kind,
    title: found.agent.title,
    package: found.agent.package,
    path: found.file ?? null,
    version: found.version ?? null,
    tested_versions: found.agent.testedVersions,
    tested: tested(found) ?? null,
    configured: found.agent.kind === configured,
    problem: found.problem ?? null,
    credentials_set: found.authSet,
  };
}

/**
 * What keeps an agent (or a guard, which runs what the agent wrote) from steering any run through a
 * person's commands, per containment method (docs/decisions.md, "No door for the agent").
 */
const STEERING_PROTECTION: Record<ContainmentMethod, string> = {
  cgroup:
    "a person's commands are refused inside an agent's or guard's cgroup, PID namespace or process tree (the lock is a socket no file can fake)",
  "pid-namespace":
    "a person's commands are refused inside an agent's or guard's PID namespace, which none of its processes can leave (the lock is a socket no file can fake)",
  scan: "a person's commands are refused in processes descending from an agent or guard (the runner's tag in their environment); a process that clears its environment and leaves the agent's process tree is not recognised, and neither is git run directly — `runner audit` judges every commit",
  "process-group":
    "no /proc here: a person's commands cannot tell an agent's process from a person's; `runner audit` judges every commit, and the lock file names the runner working here",
};
