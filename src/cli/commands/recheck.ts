// `runner recheck [node-id]`: the guard alone judges an open leaf (default: the next one) whose work
// is already on the branch — after a person fixed the guard's setup by hand, or when the agent found
// nothing left to do. A green guard passes the leaf, a red one leaves it as it was (no agent tried,
// so no attempt is counted); either way the re-check is committed like an iteration
// (`node <id> recheck guard=<pass|fail>`) and audited. Exit 0 when the leaf passed, 1 otherwise.
import { refuseInsideAgentContainment } from "../../adapters/agent-containment.js";
import { EXIT } from "../../exit-codes.js";
import type { GlobalArgs } from "../command-table.js";
import { printError, printJson } from "../output.js";
import { processEnv } from "../environment.js";
import { findProjectRoot } from "../repo.js";
import { withRepositoryLock } from "../repository-lock.js";
import { describeStep, reportStep, stepJson } from "../step-report.js";

export async function run(argv: GlobalArgs & { nodeId?: string; runId?: string; json?: boolean }): Promise<number> {
  refuseInsideAgentContainment("runner recheck");
  const root = findProjectRoot(argv.C);
  const { runStep } = await import("../../step/run-step.js");
  const result = await withRepositoryLock(root, "runner recheck", (lock) =>
    runStep({ root, env: processEnv(), now: Date.now, runIdOption: argv.runId, recheck: { nodeId: argv.nodeId }, lockLost: () => lock.lost() }),
  );
  if (argv.json) printJson(stepJson(result));
  if (result.outcome === "committed" && result.record?.guard !== "pass") {
    // Committed, but the guard did not pass the leaf: the check asked for failed.
    printError(describeStep(result));
    return EXIT.failed;
  }
  return reportStep(result, !argv.json, argv.debug);
}
