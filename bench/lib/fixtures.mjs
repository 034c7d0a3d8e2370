// Fixtures: valid task trees of a given size (CONTRACT §3) and git repositories of a given number
// of files with a runner run branch, built in temp folders.
import { createHash } from "node:crypto";
import { copyFileSync, mkdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { benchEnv, run, RUNNER_BIN, tempDir } from "./common.mjs";

/** Leaves per branch: a plan is a root with branches (features) of leaves (tasks). */
const LEAVES_PER_BRANCH = 99;

function makeNode(id, order, title, passes, attempts, children = []) {
  // Keys in schema order (CONTRACT §3).
  return {
    id,
    order,
    title,
    goal: `Implement ${id} as the design notes say.`,
    acceptance: ["covered by a unit test"],
    passes,
    attempts,
    max_attempts: 3,
    children,
  };
}

/**
 * A valid tree of exactly `total` nodes (total ≥ 3): a root, ceil((total-1)/100) branches, the rest
 * leaves spread evenly over the branches, children sorted by order. The first branch is fully passed
 * (when there is more than one), the first third of the next branch's leaves are passed, a few
 * leaves carry attempts, every other leaf is open: passes of parents are derived consistently.
 */
export function makeTree(total) {
  if (total < 3) throw new Error("a tree needs at least 3 nodes here");
  const branches = Math.max(1, Math.ceil((total - 1) / (LEAVES_PER_BRANCH + 1)));
  const leaves = total - 1 - branches;
  const children = [];
  let leafIndex = 0;
  for (let b = 0; b < branches; b++) {
    const count = Math.floor(leaves / branches) + (b < leaves % branches ? 1 : 0);
    const branchId = `f${String(b + 1).padStart(5, "0")}`;
    const allPassed = branches > 1 && b === 0;
    const firstOpen = branches > 1 ? 1 : 0;
    const kids = [];
    for (let l = 0; l < count; l++, leafIndex++) {
      const passes = allPassed || (b === firstOpen && l < Math.floor(count / 3));
      const attempts = passes ? 1 : leafIndex % 17 === 0 ? 1 : 0;
      kids.push(makeNode(`${branchId}.t${String(l + 1).padStart(3, "0")}`, l, `Task ${l + 1} of feature ${b + 1}`, passes, attempts));
    }
    const branchPasses = kids.every((kid) => kid.passes);
    children.push(makeNode(branchId, b, `Feature ${b + 1}`, branchPasses, 0, kids));
  }
  const root = makeNode(
    "root",
    0,
    "Build the product",
    children.every((c) => c.passes),
    0,
    children,
  );
  return { version: 1, root };
}

/** The canonical text of a tree built by makeTree (keys already in order, children sorted). */
export function treeText(tree) {
  return `${JSON.stringify(tree, null, 2)}\n`;
}

export const AGENT_SCRIPT = `# No-op agent: reads the prompt, writes its output and one file.
cat > /dev/null
printf '{"status": "done", "summary": "no-op"}\\n' > "$RUNNER_OUTPUT_FILE"
printf '%s\\n' "$RUNNER_ITERATION" > bench-out.txt
`;

/** config.toml of a bench repository: the no-op agent (agent.sh), `guard`, and `limits` lines besides the iteration timeout. */
export function benchConfig({ guard = ["true"], limits = [] } = {}) {
  return `[executor]
kind = "command"
command = ["sh", "agent.sh"]

[guard]
command = ${JSON.stringify(guard).replaceAll(",", ", ")}

[limits]
iteration_timeout_seconds = 600
${limits.map((line) => `${line}\n`).join("")}`;
}

const CONFIG = benchConfig();

/**
 * A repository for a real `runner run`: README, `runner init`, `config` as config.toml, `tree`, the
 * no-op agent and the `files` given, committed, and the run `runId` started. Returns { dir, env }.
 */
export function runRepo(prefix, { config, tree, runId, files = {} }) {
  const dir = tempDir(prefix);
  const env = benchEnv();
  const git = (...args) => run(["git", ...args], { cwd: dir, env }).stdout.trim();
  git("init", "-q", "-b", "main");
  git("config", "user.name", "Bench Author");
  git("config", "user.email", "bench@example.com");
  writeFileSync(path.join(dir, "README.md"), "bench\n");
  run(["node", RUNNER_BIN, "init", "--executor", "command", "--goal", "Benchmark project"], { cwd: dir, env });
  writeFileSync(path.join(dir, ".runner", "state", "config.toml"), config);
  writeFileSync(path.join(dir, ".runner", "state", "tree.json"), treeText(tree));
  for (const [name, text] of Object.entries({ "agent.sh": AGENT_SCRIPT, ...files })) writeFileSync(path.join(dir, name), text);
  git("add", "-A");
  git("commit", "-q", "-m", "project");
  run(["node", RUNNER_BIN, "start", "--run-id", runId], { cwd: dir, env });
  return { dir, env };
}

/**
 * A git repository of `files` project files (100 per folder), with `.runner/` from `runner init`,
 * the no-op agent and guard \`true\`, on the run branch runner/bench, packed. For each tree size a
 * base commit holding that tree: returns { dir, bases: { [nodes]: sha } }.
 */
export function makeRepo(files, treeSizes, trees) {
  const dir = tempDir(`runner-bench-${files}-`);
  const env = benchEnv();
  const git = (...args) => run(["git", ...args], { cwd: dir, env }).stdout.trim();
  git("init", "-q", "-b", "main");
  git("config", "user.name", "Bench Author");
  git("config", "user.email", "bench@example.com");
  git("config", "gc.auto", "0");
  for (let i = 0; i < files; i++) {
    const folder = path.join(dir, "src", `m${String(Math.floor(i / 100)).padStart(3, "0")}`);
    if (i % 100 === 0) mkdirSync(folder, { recursive: true });
    writeFileSync(path.join(folder, `file${String(i).padStart(5, "0")}.ts`), `export const value${i} = ${i};\n// ${"x".repeat(i % 200)}\n`);
  }
  run(["node", RUNNER_BIN, "init", "--executor", "command", "--goal", "Benchmark project"], { cwd: dir, env });
  writeFileSync(path.join(dir, ".runner", "state", "config.toml"), CONFIG);
  writeFileSync(path.join(dir, "agent.sh"), AGENT_SCRIPT);
  git("add", "-A");
  git("commit", "-q", "-m", "project");
  run(["node", RUNNER_BIN, "start", "--run-id", "bench"], { cwd: dir, env });
  const bases = {};
  for (const size of treeSizes) {
    writeFileSync(path.join(dir, ".runner", "state", "tree.json"), trees.get(size).text);
    git("add", "-A");
    git("commit", "-q", "-m", `tree of ${size} nodes`);
    bases[size] = git("rev-parse", "HEAD");
  }
  git("gc", "-q");
  return { dir, bases, env };
}

/**
 * Puts the repository back at `base` as a loop leaves it between two iterations (the steady state
 * of a run): the same files, index and branch; the runner's own index and its record of the run's
 * history (in its state folder, outside the repository) for `base`, as it keeps them after each of
 * its commits; the local logs kept (they are ignored, and a run has them after its first iteration);
 * no journal or lock of a crashed runner.
 */
export function resetRepo(repo, base) {
  run(["git", "reset", "-q", "--hard", base], { cwd: repo.dir, env: repo.env });
  run(["git", "clean", "-q", "-fd"], { cwd: repo.dir, env: repo.env });
  for (const name of ["runner-journal.json", "runner.lock"]) rmSync(path.join(repo.dir, ".git", name), { force: true });
  const state = runnerState(repo);
  rmSync(state.journal, { force: true });
  copyFileSync(path.join(repo.dir, ".git", "index"), state.index);
  writeFileSync(state.indexCommit, `${base}\n`);
  // The run's history as the runner keeps it after its own commit (src/adapters/audit/run-history.ts): no
  // loop commit yet, and the tree file at base canonical and valid, as the runner writes it.
  writeFileSync(state.history, `${JSON.stringify({ runId: "bench", head: base, commits: [], treeWritten: true })}\n`);
}

/** The runner's state folder of a repository (src/adapters/state/runner-state.ts: named by the git folder's real path). */
function runnerState(repo) {
  const real = realpathSync(path.join(repo.dir, ".git"));
  const dir = path.join(repo.env.RUNNER_STATE_DIR, "repos", createHash("sha256").update(real).digest("hex").slice(0, 24));
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return {
    index: path.join(dir, "index"),
    indexCommit: path.join(dir, "index.commit"),
    journal: path.join(dir, "journal.json"),
    history: path.join(dir, "history.json"),
  };
}
