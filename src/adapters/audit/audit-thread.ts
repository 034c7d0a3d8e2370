// The program of the thread `runner report` runs its audit on (src/adapters/audit/run-audit.ts,
// auditOfRunOnItsOwnThread): a bundle entry of its own, dist/audit-thread.mjs, beside the CLI's.
import { parentPort, workerData } from "node:worker_threads";
import { auditOfRun } from "./run-audit.js";

if (parentPort) {
  const port = parentPort;
  auditOfRun(workerData).then(
    (report) => port.postMessage({ report }),
    (error: unknown) => port.postMessage({ error: String(error instanceof Error ? error.stack : error) }),
  );
}
