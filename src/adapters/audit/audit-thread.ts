// The program of the thread `runner report` runs its audit on (src/adapters/audit/run-audit.ts,
// startAuditThread; started ahead by the command: thread-ahead.ts): a bundle entry of its own,
// dist/audit-thread.cjs, beside the CLI's. It loads, then waits for the repository and the run the
// report resolved, audits it and posts the report.
import { parentPort } from "node:worker_threads";
import { SAVE_CODE_CACHE } from "../../bundle-keys.js";
import { auditOfResolvedRun, type AuditRequest } from "./run-audit.js";

if (parentPort) {
  const port = parentPort;
  // (a failure answers without a report: the report's thread then audits the run itself, and the failure is thrown there)
  port.once("message", ({ root, run }: AuditRequest) => {
    auditOfResolvedRun(root, run).then(
      (report) => {
        // (the thread is ended, not left to exit, once the report has its answer: the code cache of
        // what it compiled, where there was none, is written first — src/load-bundle.ts)
        (globalThis as Record<symbol, (() => void) | undefined>)[SAVE_CODE_CACHE]?.();
        port.postMessage({ report });
      },
      () => port.postMessage({}),
    );
  });
}
