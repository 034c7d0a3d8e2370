// The runner's commit messages, both ways (CONTRACT §7, §11): what each kind of commit the runner
// makes says, and how a commit is read back.

/** The subject of the commit `runner start --goal` makes before the run's first iteration. */
const GOAL_PREFIX = "runner goal: ";

/** `runner start --goal`'s commit: the new goal's title as the subject, the goal as the body. */
export function goalCommitMessage(title: string, goal: string): string {
  return `${GOAL_PREFIX}${title.replace(/\s+/g, " ").trim()}\n\n${goal.trim()}\n`;
}
