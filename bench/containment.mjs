// What containment costs (src/adapters/process/containment.ts): the probe of each method, paid once per
// runner process, and what each method adds to one runProcess of `true` (median of 20 starts,
// the methods interleaved so that a change in the machine's load hits them all alike), plus one
// scan of /proc for a tag. Needs a build (`npm run build`); run it as the user you care about.
//
//   node bench/containment.mjs
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { sourceModules } from "./lib/core-modules.mjs";

const { containment, runProcess, taggedProcesses } = await sourceModules(
  "adapters",
  ["containment.ts", "process-runner.ts", "proc-table.ts"],
  (m) => ({
    containment: m,
    runProcess: m.runProcess,
    taggedProcesses: m.taggedProcesses,
  }),
);

const STARTS = 20;
const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return (sorted[(sorted.length - 1) >> 1] + sorted[sorted.length >> 1]) / 2;
};
const ms = (value) => Number(value.toFixed(2));

const probes = {};
for (const method of containment.CONTAINMENT_METHODS) {
  const t0 = performance.now();
  const probe = await containment.probeContainment(method);
  probes[method] = { works: probe.works, probeMs: ms(performance.now() - t0), ...(probe.works ? {} : { reason: probe.reason }) };
}

const dir = mkdtempSync(path.join(os.tmpdir(), "runner-bench-containment-"));
const modes = ["off", ...containment.CONTAINMENT_METHODS.filter((method) => method !== "process-group" && probes[method].works)];
const times = Object.fromEntries(modes.map((mode) => [mode, []]));
for (let round = 0; round <= STARTS; round++) {
  for (const mode of modes) {
    const t0 = performance.now();
    const result = await runProcess({
      argv: ["true"],
      cwd: dir,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
      deadlineMs: Date.now() + 10_000,
      logFile: path.join(dir, "log"),
      capBytes: 1_000,
      containment: mode,
    });
    if (result.exitCode !== 0) throw new Error(`${mode}: ${JSON.stringify(result)}`);
    if (round > 0) times[mode].push(performance.now() - t0); // round 0 warms up
  }
}
rmSync(dir, { recursive: true, force: true });

const scans = [];
for (let i = 0; i < STARTS; i++) {
  const t0 = performance.now();
  taggedProcesses({ name: containment.CONTAINMENT_ENV, token: "no-process-has-this" });
  scans.push(performance.now() - t0);
}

const off = median(times.off);
console.log(
  JSON.stringify(
    {
      uid: process.getuid?.(),
      loadAverage: os.loadavg().map(ms),
      processes: readdirSync("/proc").filter((name) => /^\d+$/.test(name)).length,
      probes,
      runProcessTrueMedianMs: Object.fromEntries(modes.map((mode) => [mode, ms(median(times[mode]))])),
      addedMs: Object.fromEntries(modes.filter((mode) => mode !== "off").map((mode) => [mode, ms(median(times[mode]) - off)])),
      scanOfProcMs: ms(median(scans)),
    },
    null,
    2,
  ),
);
