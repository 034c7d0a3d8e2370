// Child script: imports each specifier in turn and prints the time each import took (ms, JSON).
// Bare specifiers resolve from the project (this file lives inside it). Later imports reuse what
// earlier ones loaded, so each figure is the increment.
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import path from "node:path";
import { RUNNER_ROOT } from "./common.mjs";

const started = performance.now();
const times = {};
for (const spec of process.argv.slice(2)) {
  const target = spec.startsWith("dist/") ? pathToFileURL(path.join(RUNNER_ROOT, spec)).href : spec;
  const t = performance.now();
  await import(target);
  times[spec] = performance.now() - t;
}
times["(all)"] = performance.now() - started;
times["(process start to first import)"] = started - 0;
process.stdout.write(JSON.stringify(times));
