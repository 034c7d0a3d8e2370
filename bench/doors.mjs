// What the doors of issue 28 cost a step (src/adapters/state/lock.ts, src/adapters/process/agent-containment.ts):
// taking and releasing the repository lock (a listening abstract socket plus the record file), the
// check that it is still held before the branch moves, asking a holder who it is, and the test a
// person's command makes of whether it runs inside an agent's containment. Medians of 200.
//
//   node bench/doors.mjs
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { sourceModules } from "./lib/core-modules.mjs";

const { RepositoryLock, askHolder, containedCaller } = await sourceModules("adapters", ["lock.ts", "agent-containment.ts"], (m) => ({
  RepositoryLock: m.RepositoryLock,
  askHolder: m.askHolder,
  containedCaller: m.containedCaller,
}));

const ROUNDS = 200;
const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return (sorted[(sorted.length - 1) >> 1] + sorted[sorted.length >> 1]) / 2;
};
const ms = (value) => Number(value.toFixed(3));

const gitDir = mkdtempSync(path.join(os.tmpdir(), "runner-bench-doors-"));
const times = { acquireRelease: [], stillHeld: [], askHolder: [], containmentTest: [] };
const holder = new RepositoryLock(path.join(gitDir, "held"), "bench holder");
await import("node:fs").then((fs) => fs.mkdirSync(path.join(gitDir, "held")));
await holder.acquire(Date.now);
for (let round = 0; round < ROUNDS; round++) {
  const lock = new RepositoryLock(gitDir, "bench");
  let t0 = performance.now();
  await lock.acquire(Date.now);
  const acquired = performance.now() - t0;
  t0 = performance.now();
  lock.lost();
  times.stillHeld.push(performance.now() - t0);
  t0 = performance.now();
  lock.unlock();
  times.acquireRelease.push(acquired + performance.now() - t0);
  t0 = performance.now();
  await askHolder(path.join(gitDir, "held"));
  times.askHolder.push(performance.now() - t0);
  t0 = performance.now();
  containedCaller();
  times.containmentTest.push(performance.now() - t0);
}
holder.unlock();
rmSync(gitDir, { recursive: true, force: true });
console.log(JSON.stringify(Object.fromEntries(Object.entries(times).map(([name, values]) => [`${name}Ms`, ms(median(values))])), null, 2));
