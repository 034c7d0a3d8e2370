// Child script: loads the CLI the way bin/runner.js does and prints, as JSON, the time from process
// start to the load and the time the load took (ms). Builds with bin/load-cli.js (a CommonJS bundle
// compiled with V8's code cache) are loaded through it, with the cache of the command given as the
// argument or none for "-"; builds of 2026-11-22 to 11-27 import the ES-module bundle dist/runner.mjs;
// later builds load dist/runner.cjs through dist/load.mjs, with the code cache dist/cache/ holds.
import { existsSync } from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { RUNNER_ROOT } from "./common.mjs";

const loader = path.join(RUNNER_ROOT, "bin", "load-cli.js");
const started = performance.now();
if (existsSync(loader)) {
  const { loadCli } = await import(pathToFileURL(loader).href);
  const command = process.argv[2] === "-" ? undefined : process.argv[2];
  const { ms, cache } = loadCli(command);
  process.stdout.write(JSON.stringify({ "process start to load": started, ...ms, total: performance.now() - started, cache }));
} else if (existsSync(path.join(RUNNER_ROOT, "dist", "load.mjs"))) {
  const { loadBundle } = await import(pathToFileURL(path.join(RUNNER_ROOT, "dist", "load.mjs")).href);
  loadBundle(path.join(RUNNER_ROOT, "dist"), "runner.cjs");
  process.stdout.write(JSON.stringify({ "process start to load": started, total: performance.now() - started, cache: "dist/cache" }));
} else {
  await import(pathToFileURL(path.join(RUNNER_ROOT, "dist", "runner.mjs")).href);
  process.stdout.write(JSON.stringify({ "process start to load": started, total: performance.now() - started, cache: "none" }));
}
