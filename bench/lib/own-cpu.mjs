// Loaded with `node --import` into a runner the bench times (bench/night.mjs): at its exit, the
// process's own CPU time (all its threads, not its children) is appended to $BENCH_OWN_CPU_FILE as
// one JSON line, so that what the runner itself spends shows apart from the git, agent and guard
// processes it starts.
import { appendFileSync } from "node:fs";

const file = process.env.BENCH_OWN_CPU_FILE;
if (file) {
  process.on("exit", () => {
    const usage = process.resourceUsage();
    appendFileSync(file, `${JSON.stringify({ userMs: usage.userCPUTime / 1000, systemMs: usage.systemCPUTime / 1000 })}\n`);
  });
}
