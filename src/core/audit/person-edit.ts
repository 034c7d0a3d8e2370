// A person's edit as the audit judges it (CONTRACT §11; its subject and trailers are
// src/core/commit/commit-message.ts's). A person's edit is never an iteration (iteration numbers stay 1..n); it may
// change only the runner's files (.runner/, never the project's), only open nodes, and never the
// runner-owned fields. The same rules judge a commit a person made by hand that only edits the plan.
import { isRunnerPath } from "../guard/path-rules.js";
import { configChanges, parseChange, treeChanges, unsaidChanges, type EditChange } from "../edit/edit-changes.js";
import { LAYOUT, RUNNER_DIR } from "../base/layout.js";
import { personEditProblems } from "../edit/plan-edit.js";
import { commitKindOf, splitTrailers, trailerRecord, type PersonEditSubject, type PersonEditVerb } from "../commit/commit-message.js";
import { parentIds, findNode, nodesById, type TaskTree } from "../tree/tree.js";

/** How the audit saw one person's edit. */
export interface PersonEditFinding {
  sha: string;
  subject: string;
  /** `runner`: made by a `runner` command (its subject and trailers); `hand`: a commit a person made that only edits the runner's files. */
  made: "runner" | "hand";
  verb?: PersonEditVerb;
  target?: string;
  author?: string;
  /** What breaks the rules (empty: a valid edit). */
  problems: string[];
}

/** Whether a commit that is not a loop commit is, by its paths, a person's edit of the plan or config (only files under .runner/). */
export function onlyRunnerFiles(changedPaths: readonly string[]): boolean {
  return changedPaths.length > 0 && changedPaths.every(isRunnerPath);
}

export interface PersonEditInput {
  sha: string;
  subject: string;
  body: string;
  author?: string;
  changedPaths: readonly string[];
  /** The last valid tree before the commit. */
  before: TaskTree | undefined;
  /** The tree at the commit; undefined when it does not validate. */
  after: TaskTree | undefined;
  /** Whether config.toml at the commit parses and validates (undefined: the commit did not change it). */
  configValid?: boolean;
  /** config.toml before and at the commit, as `section.key` → value (given when the commit changed it and both parse). */
  config?: { before: Readonly<Record<string, unknown>>; after: Readonly<Record<string, unknown>> };
  /** finished.json before the commit and at it (given when the commit changed it; src/core/plan/plan-finished.ts). */
  finished?: { before: readonly string[]; after: readonly string[] };
  /** The run being audited. */
  runId: string;
  /** What its subject says it is (src/core/commit/commit-message.ts commitKindOf): a person's edit made by a runner command, or by hand; none for a hand commit of the runner's files. */
  said?: { subject: PersonEditSubject; made: "runner" | "hand" };
}

/** Judges a person's edit (made by a runner command, or by hand) by the rules. */
export function judgePersonEdit(input: PersonEditInput): PersonEditFinding {
  const subject = input.said?.subject;
  const trailers = subject ? trailerRecord(splitTrailers(input.body).trailers) : {};
  const made = input.said?.made ?? "hand";
  const problems: string[] = [];
  const outside = input.changedPaths.filter((file) => !isRunnerPath(file));
  if (outside.length > 0)
    problems.push(
      `a person's edit changed files outside ${RUNNER_DIR}/ (${outside.slice(0, 3).join(", ")}); project work is the agent's, in iterations`,
    );
  if (input.configValid === false) problems.push(`${LAYOUT.config} is invalid after the edit`);
  const treeChanged = input.changedPaths.includes(LAYOUT.tree);
  if (treeChanged) {
    if (!input.after) problems.push("the task tree is invalid after the edit");
    else if (input.before) problems.push(...personEditProblems(input.before, input.after));
  }
  const marked = newlyFinished(input);
  if (marked.length > 0 && input.after) {
    // A leaf marked finished is judged by the guard alone first: only an open leaf, never one an iteration already worked on.
    const after = nodesById(input.after);
    const wrong = marked.filter((id) => {
      const node = after.get(id);
      return !node || node.passes || node.children.length > 0 || node.attempts > 0;
    });
    if (wrong.length > 0)
      problems.push(
        `${LAYOUT.finished} marks ${wrong.map((id) => JSON.stringify(id)).join(", ")} finished, but only an open leaf without attempts can be`,
      );
  }
  if (made === "runner" && subject) {
    if (subject.runId !== undefined && subject.runId !== input.runId) problems.push(`the subject names run ${subject.runId}, not ${input.runId}`);
    if (trailers.person !== undefined && input.author !== undefined && trailers.person !== input.author)
      problems.push(`Runner-Person says ${trailers.person}, but the commit is by ${input.author}`);
    if (subject.verb !== "config" && trailers.node !== subject.target)
      problems.push(`Runner-Node says ${trailers.node ?? "nothing"}, but the subject names ${subject.target}`);
    const mismatch = subjectMismatch(subject, input, treeChanged) ?? trailerMismatch(subject, input, treeChanged);
    if (mismatch) problems.push(mismatch);
  }
  return {
    sha: input.sha,
    subject: input.subject,
    made,
    ...(subject ? { verb: subject.verb, target: subject.target } : {}),
    ...(input.author !== undefined ? { author: input.author } : {}),
    problems,
  };
}

/**
 * Whether the Runner-Change (and Runner-Key) trailers say exactly what the commit changed: a
 * runner-made edit's words are the runner's, so a commit amended to do more (another config key,
 * another node) is not the edit the runner made.
 */
function trailerMismatch(subject: PersonEditSubject, input: PersonEditInput, treeChanged: boolean): string | undefined {
  const lines = splitTrailers(input.body).trailers.lines;
  const said: EditChange[] = [];
  for (const [key, value] of lines) {
    if (key !== "change") continue;
    const change = parseChange(value);
    if (!change) return `its trailer "Runner-Change: ${value}" names no change the runner makes`;
    said.push(change);
  }
  const made: EditChange[] = [];
  if (treeChanged) {
    if (!input.before || !input.after) return undefined; // an invalid tree is a problem of its own
    made.push(...treeChanges(input.before, input.after));
  }
  if (input.changedPaths.includes(LAYOUT.config)) {
    if (!input.config) return undefined;
    made.push(...configChanges(input.config.before, input.config.after));
  }
  if (input.changedPaths.includes(LAYOUT.finished)) made.push({ kind: "finished", count: newlyFinished(input).length });
  if (input.changedPaths.includes(LAYOUT.goal)) made.push({ kind: "goal-done", count: 0 });
  const { notMade, notSaid } = unsaidChanges(said, made);
  if (notMade.length === 0 && notSaid.length === 0) {
    if (subject.verb !== "config") return undefined;
    const keys = lines.filter(([key]) => key === "key").map(([, value]) => value);
    const changed = made.flatMap((change) => (change.kind === "config" || change.kind === "config-unset" ? [change.key] : []));
    return keys.length > 0 && [...new Set(keys)].sort().join(",") === [...new Set(changed)].sort().join(",")
      ? undefined
      : `its Runner-Key trailers name ${keys.join(", ") || "no key"}, but the commit changed ${changed.join(", ") || "no key"}`;
  }
  const parts = [
    notMade.length > 0 ? `says ${notMade.join("; ")}, which the commit did not do` : "",
    notSaid.length > 0
      ? `the commit also changed what its trailers do not say (${notSaid.slice(0, 3).join("; ")}${notSaid.length > 3 ? `; and ${notSaid.length - 3} more` : ""})`
      : "",
  ].filter(Boolean);
  return `it is not the edit the runner made: ${parts.join(", and ")}; check it by hand`;
}

/** The ids a commit added to finished.json. */
function newlyFinished(input: PersonEditInput): string[] {
  if (!input.finished) return [];
  const before = new Set(input.finished.before);
  return input.finished.after.filter((id) => !before.has(id));
}

/** Whether the diff is what the subject says (a runner-made edit changes exactly what it names). */
function subjectMismatch(subject: PersonEditSubject, input: PersonEditInput, treeChanged: boolean): string | undefined {
  const says = `the subject says ${subject.verb} ${subject.target}`;
  if (subject.verb === "config") {
    if (treeChanged || input.changedPaths.some((file) => file !== LAYOUT.config)) return `${says}, but the commit changed more than ${LAYOUT.config}`;
    return undefined;
  }
  if (subject.verb === "import") {
    // A plan's nodes, the leaves it marks finished (those nodes only) and GOAL.md's list of what --skip-done left out.
    const allowed = new Set<string>([LAYOUT.tree, LAYOUT.finished, LAYOUT.goal]);
    if (input.changedPaths.some((file) => !allowed.has(file)))
      return `${says}, but the commit changed more than ${LAYOUT.tree}, ${LAYOUT.finished} and ${LAYOUT.goal}`;
    const { before, after } = input;
    if (!before || !after) return undefined;
    if (findNode(before, subject.target) || !findNode(after, subject.target)) return `${says}, but it is not a new node of the tree`;
    const imported = nodesById({ version: 1, root: findNode(after, subject.target)! });
    const foreign = newlyFinished(input).filter((id) => !imported.has(id));
    return foreign.length === 0
      ? undefined
      : `${says}, but it marks ${foreign.map((id) => JSON.stringify(id)).join(", ")} finished, which it did not import`;
  }
  if (input.changedPaths.some((file) => file !== LAYOUT.tree)) return `${says}, but the commit changed more than ${LAYOUT.tree}`;
  const { before, after } = input;
  if (!before || !after) return undefined;
  const id = subject.target;
  const was = findNode(before, id);
  const now = findNode(after, id);
  switch (subject.verb) {
    case "add":
      return !was && now ? undefined : `${says}, but ${was ? "it was already there" : "it is not in the tree"}`;
    case "remove":
      return was && !now ? undefined : `${says}, but ${was ? "it is still there" : "it was never there"}`;
    case "edit":
      return was && now ? undefined : `${says}, but the node is not in both trees`;
    case "move":
      return was && now && (parentIds(before).get(id) !== parentIds(after).get(id) || was.order !== now.order)
        ? undefined
        : `${says}, but neither its parent nor its order changed`;
    case "unstick":
      return was && now && now.max_attempts > was.max_attempts ? undefined : `${says}, but its max_attempts did not rise`;
    case "extend":
      return after.root.id === id && after.root.children.some((child) => child.id === before.root.id)
        ? undefined
        : `${says}, but the new root does not hold the old one`;
  }
}

/** A person's edit as `runner log` and `runner show` list it (not judged: `runner audit` does that). */
export interface PersonEditEntry {
  commit: string;
  subject: string;
  made: "runner" | "hand";
  verb: PersonEditVerb | null;
  target: string | null;
  author: string | null;
  /** The iteration it came after (0: before the first). */
  after_iteration: number;
}

/**
 * The person's edits among a run's commits after its base (oldest first): commits that are not loop
 * commits and carry a person-edit subject or change only the runner's files.
 */
export function personEditsAmong(
  commits: readonly { sha: string; subject: string; body: string; author?: string; changedPaths: readonly string[] }[],
  runId: string,
): PersonEditEntry[] {
  const edits: PersonEditEntry[] = [];
  let iteration = 0;
  for (const commit of commits) {
    const kind = commitKindOf(commit.subject, commit.body, runId);
    if (kind.kind === "loop") {
      iteration = kind.subject.iteration;
      continue;
    }
    const said = kind.kind === "person-edit" ? kind : undefined;
    if (!said && !onlyRunnerFiles(commit.changedPaths)) continue;
    edits.push({
      commit: commit.sha,
      subject: commit.subject,
      made: said?.made ?? "hand",
      verb: said?.subject.verb ?? null,
      target: said?.subject.target ?? null,
      author: commit.author ?? null,
      after_iteration: iteration,
    });
  }
  return edits;
}
