// The program of the thread `runner report` runs its audit on (src/adapters/audit/run-audit.ts,
// startAuditThread): a bundle entry of its own, dist/audit-thread.mjs, beside the CLI's. It loads,
// then waits for the run the report resolved, audits it and posts the report.
import { parentPort, workerData } from "node:worker_threads";
import { auditOfResolvedRun, type ResolvedRun } from "./run-audit.js";

if (parentPort) {
  const port = parentPort;
  const { root } = workerData as { root: string };
  port.once("message", (run: ResolvedRun) => {
    auditOfResolvedRun(root, run).then(
      (report) => port.postMessage({ report }),
      (error: unknown) => port.postMessage({ error: String(error instanceof Error ? error.stack : error) }),
    );
  });
}
