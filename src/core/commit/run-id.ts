// Run ids and the loop's branches (CONTRACT §4); the commit messages are src/core/commit/commit-message.ts's.
import { RUN_ID } from "./commit-message.js";

export const RUN_ID_PATTERN = new RegExp(`^${RUN_ID}$`);
export const BRANCH_PREFIX = "runner/";

export function runIdProblem(runId: string): string | undefined {
  if (RUN_ID_PATTERN.test(runId)) return undefined;
  return `run id ${JSON.stringify(runId)} is not valid: use 1 to 64 letters, digits, '.', '_' or '-'`;
}

/** The run id a branch name implies (`runner/<id>`), or undefined. */
export function runIdFromBranch(branch: string | undefined): string | undefined {
  if (branch === undefined || !branch.startsWith(BRANCH_PREFIX)) return undefined;
  const id = branch.slice(BRANCH_PREFIX.length);
  return RUN_ID_PATTERN.test(id) ? id : undefined;
}
