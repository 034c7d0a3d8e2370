// 2. CLI start: `runner next --json` on a 1,000-node tree against `node -e 0`, alternating runs.
import { log, RUNNER_BIN, summary, timeRun } from "./lib/common.mjs";
import { resetRepo } from "./lib/fixtures.mjs";

export function cliStart(repo, base, reps) {
  resetRepo(repo, base);
  log(`  cli start: runner next --json vs node -e 0, ${reps} runs each`);
  const next = () => {
    const { ms, result } = timeRun(["node", RUNNER_BIN, "next", "--json"], { cwd: repo.dir, env: repo.env });
    const parsed = JSON.parse(result.stdout);
    if (parsed.complete !== false || !parsed.node) throw new Error(`unexpected next output: ${result.stdout}`);
    return ms;
  };
  const node = () => timeRun(["node", "-e", "0"], { cwd: repo.dir, env: repo.env }).ms;
  next();
  node();
  const nexts = [];
  const nodes = [];
  for (let i = 0; i < reps; i++) {
    nexts.push(next());
    nodes.push(node());
  }
  const a = summary(nexts);
  const b = summary(nodes);
  return { next: a, nodeE0: b, ratio: Number((a.median / b.median).toFixed(2)) };
}
