// Child script: loads the CLI the way bin/runner.js does (bin/load-cli.js) and prints, as JSON, the
// time from process start to the load, and the time to read, compile and evaluate the bundle (ms),
// with the code cache of the command given as the argument, or without a cache when it is "-".
import { existsSync } from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { RUNNER_ROOT } from "./common.mjs";

const loader = path.join(RUNNER_ROOT, "bin", "load-cli.js");
if (!existsSync(loader)) {
  process.stdout.write(JSON.stringify({ unavailable: "this build has no bin/load-cli.js" }));
} else {
  const { loadCli } = await import(pathToFileURL(loader).href);
  const started = performance.now();
  const command = process.argv[2] === "-" ? undefined : process.argv[2];
  const { ms, cache } = loadCli(command);
  process.stdout.write(JSON.stringify({ "process start to load": started, ...ms, total: performance.now() - started, cache }));
}
