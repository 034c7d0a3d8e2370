// Child script: loads the CLI the way bin/runner.js does and prints, as JSON, the time from process
// start to the load and the time the load took (ms). Builds with bin/load-cli.js (a CommonJS bundle
// compiled with V8's code cache) are loaded through it, with the cache of the command given as the
// argument or none for "-"; later builds import the ES-module bundle dist/runner.mjs.
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
} else {
  await import(pathToFileURL(path.join(RUNNER_ROOT, "dist", "runner.mjs")).href);
  process.stdout.write(JSON.stringify({ "process start to load": started, total: performance.now() - started, cache: "none" }));
}
