// 7. The demo (README: "watch the whole loop on a throw-away repo … < 1 minute"): `runner demo` from
// start to exit, the whole loop with the built-in demo agent. A speed target, so it is measured here
// and not asserted by test/integration/demo.test.ts, where a loaded machine would stretch it for no defect.
import path from "node:path";
import { benchEnv, log, RUNNER_BIN, summary, tempDir, timeRun } from "./lib/common.mjs";

export function demoRun(reps) {
  log(`  demo: runner demo, ${reps} runs`);
  const times = [];
  const cpu = [];
  for (let i = 0; i < reps; i++) {
    const dir = path.join(tempDir("runner-bench-demo-"), "demo");
    const { ms, cpuMs, result } = timeRun(["node", RUNNER_BIN, "demo", "--dir", dir], { env: benchEnv() });
    if (!result.stdout.includes("Done: the root passes")) throw new Error(`runner demo did not finish:\n${result.stdout}\n${result.stderr}`);
    times.push(ms / 1000);
    if (cpuMs !== undefined) cpu.push(cpuMs / 1000);
  }
  return { seconds: summary(times), cpuSeconds: cpu.length > 0 ? summary(cpu) : undefined };
}
