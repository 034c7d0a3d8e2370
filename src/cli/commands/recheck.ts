// `runner recheck [node-id]`: the guard alone judges an open leaf (default: the next one) whose work
// is already on the branch — after a person fixed the guard's setup by hand, or when the agent found
// nothing left to do. A green guard passes the leaf, a red one leaves it as it was (no agent tried,
// so no attempt is counted); either way the re-check is committed like an iteration
// (`node <id> recheck guard=<pass|fail>`) and audited. Exit 0 when the leaf passed, 1 otherwise.
// recheckLeaf is also `runner mcp`'s recheck tool.
import { refuseInsideAgentContainment } from "../../adapters/process/agent-containment.js";
import { EXIT } from "../../exit-codes.js";
import type { StepResult } from "../../step/run-step.js";
import type { GlobalArgs } from "../command-table.js";
import { printError, printJson } from "../output.js";
import { processEnv } from "../environment.js";
import { findProjectRoot } from "../repo.js";
import { withRepositoryLock } from "../repository-lock.js";
import { describeStep, reportStep, stepJson } from "../step-report.js";

/** The re-check, under the repository lock (refused while another runner works, and inside an agent's containment). */
export async function recheckLeaf(folder: string, nodeId: string | undefined, runIdOption: string | undefined): Promise<StepResult> {
  refuseInsideAgentContainment("runner recheck");
  const root = findProjectRoot(folder);
  const { runStep } = await import("../../step/run-step.js");
  return withRepositoryLock(root, "runner recheck", (lock) =>
    runStep({ root, env: processEnv(), now: Date.now, runIdOption, recheck: { nodeId }, lockLost: () => lock.lost() }),
  );
}

/** Whether a re-check was committed without passing its leaf: the check asked for failed. */
export function recheckFailed(result: StepResult): boolean {
  return result.outcome === "committed" && result.record?.guard !== "pass";
}

export async function run(argv: GlobalArgs & { nodeId?: string; runId?: string; json?: boolean }): Promise<number> {
  const result = await recheckLeaf(argv.C, argv.nodeId, argv.runId);
  if (argv.json) printJson(stepJson(result));
  if (recheckFailed(result)) {
    printError(describeStep(result));
    return EXIT.failed;
  }
  return reportStep(result, !argv.json, argv.debug);
}
