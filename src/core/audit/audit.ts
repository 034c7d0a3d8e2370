// `runner audit`: replays a run's history and checks that every transition obeys the rules (seed
// 002, CONTRACT §7): passes set only by a green guard on the selected leaf or derived from children,
// runner-owned fields moved only by the transition table, passed nodes never changed, the selected
// leaf the leftmost open one, commit subjects consistent with the change and numbered in order.
import { classifyChangedPaths } from "../guard/classify.js";
import { checkDerivedPasses, checkPassedImmutable } from "../tree/invariants.js";
import { LAYOUT } from "../base/layout.js";
import { ownedFieldProblems } from "../tree/owned-fields.js";
import { leftTreeInvalid, loopRecordOf, recheckedOf, type LoopRecord } from "../commit/loop-history.js";
import { judgePersonEdit, onlyRunnerFiles, type PersonEditFinding } from "./person-edit.js";
import { commitKindOf, type CommitKind } from "../commit/commit-message.js";
import { formatProblem } from "../base/problems.js";
import { selectLeftmostOpenLeaf } from "../tree/select.js";
import { allChildrenPass, nodesById, type TaskNode, type TaskTree } from "../tree/tree.js";
import type { TreeVersion } from "../tree/tree-versions.js";

export interface AuditCommit {
  sha: string;
  subject: string;
  body: string;
  /** "Name <email>" of the author and of the committer. */
  author?: string;
  committer?: string;
  /** The commit's parents (a loop commit has exactly one). */
  parents?: string[];
  /** Paths the commit changed (against its first parent). */
  changedPaths: string[];
  /** The tree at this commit; undefined when it does not validate. */
  tree: TaskTree | undefined;
  /**
   * How `tree` was read (src/core/tree/tree-versions.ts): its nodes by id, and, when the commit changed
   * the tree file, how it came from the version before. Without it every check walks whole trees.
   */
  treeVersion?: TreeVersion;
  /** Whether config.toml at this commit is valid (given for commits that changed it). */
  configValid?: boolean;
  /** config.toml before and at this commit as `section.key` → value (given for commits that changed it, when both parse). */
  config?: { before: Readonly<Record<string, unknown>>; after: Readonly<Record<string, unknown>> };
  /** What of the guard's definition the commit changed (src/core/guard/guard-definition.ts), when it changed any. */
  definitionChanged?: string[];
  /** The leaves .runner/state/finished.json lists at this commit (given for commits that changed it; unreadable: none). */
  finished?: readonly string[];
}

export interface AuditViolation {
  sha: string;
  /** The loop iteration, or undefined for a commit that is not one of the run's loop commits. */
  iteration: number | undefined;
  message: string;
}

export interface AuditReport {
  loopCommits: number;
  otherCommits: number;
  violations: AuditViolation[];
  /** With --replay: how many passing commits had their guard run again. */
  replayed?: number;
  /** The person's edits among the other commits (by a runner command or by hand), each judged by the rules. */
  personEdits: PersonEditFinding[];
}

/** Each tree's nodes by id, built once per tree (a tree is the "after" of one commit and the "before" of the next). */
const byIdCache = new WeakMap<TaskTree, Map<string, TaskNode>>();
function byId(tree: TaskTree): Map<string, TaskNode> {
  let map = byIdCache.get(tree);
  if (map) return map;
  map = nodesById(tree);
  byIdCache.set(tree, map);
  return map;
}

/**
 * Judging a commit's tree against the tree before without walking both whole: when the commit left
 * the tree as it was, or replaced one subtree of it (the rest byte for byte the same, see
 * src/core/tree/tree-versions.ts). Each answer is either proven from the replaced subtree and its
 * ancestors, or `undefined` / false, and then the whole check runs: the problems reported are
 * always the whole check's.
 */
interface QuickComparison {
  nodeBefore(id: string): TaskNode | undefined;
  nodeAfter(id: string): TaskNode | undefined;
  /** True: no passed node of the tree before changed, moved or went (false: not proven). */
  passedUnchanged(): boolean;
  /** True: no runner-owned field moved but those of `exempt` (false: not proven). */
  ownedFieldsKept(exempt: ReadonlySet<string>): boolean;
  /** True: the tree after has its parents' passes derived, given that the tree before has (false: not proven). */
  derivedPassesKept(): boolean;
}

function quickComparison(before: TaskTree | undefined, after: TaskTree | undefined, version: TreeVersion | undefined): QuickComparison | undefined {
  if (!before || !after || !version || version.tree !== after) return undefined;
  if (after === before)
    return {
      nodeBefore: version.node,
      nodeAfter: version.node,
      passedUnchanged: () => true,
      ownedFieldsKept: () => true,
      derivedPassesKept: () => true,
    };
  const change = version.change;
  if (!change || change.before !== before) return undefined;
  // Everything outside the replaced subtree is the same node object in both trees; its ancestors
  // keep their fields, so only they (for derived passes) and the subtree itself can break a rule.
  const removed: TaskTree = { version: 1, root: change.removed };
  const added: TaskTree = { version: 1, root: change.added };
  return {
    nodeBefore: change.nodeBefore,
    nodeAfter: version.node,
    passedUnchanged: () => !change.ancestorsBefore.some((node) => node.passes) && checkPassedImmutable(removed, added).length === 0,
    ownedFieldsKept: (exempt) => ownedFieldProblems(removed, added, { by: "runner", exempt }).length === 0,
    derivedPassesKept: () => change.ancestorsAfter.every((node) => node.passes === allChildrenPass(node)) && checkDerivedPasses(added).length === 0,
  };
}

/** A re-check changes nothing in the tree but the passes of its leaf (and of the parents that derive it). */
function recheckChanges(before: TaskTree, after: TaskTree, leafId: string): string[] {
  const strip = (tree: TaskTree) => JSON.stringify(tree, (key, value: unknown) => (key === "passes" ? undefined : value));
  return strip(before) === strip(after) ? [] : [`changed the task tree beyond the passes of ${JSON.stringify(leafId)}`];
}

/** What the transition table allows for the selected leaf (seed 002), given the commit's record. */
function expectedLeaf(record: LoopRecord, before: TaskNode, after: TaskNode): string | undefined {
  if (record.subject.kind === "repair") return undefined;
  const guard = record.subject.guard;
  const status = record.trailers.status;
  const runnerError = record.trailers.error !== undefined;
  // A re-check has no agent: no attempt is ever counted.
  const increment = record.subject.kind !== "recheck" && !runnerError && (guard === "fail" || (guard === "skipped" && status === "retry"));
  const attempts = increment ? Math.min(before.attempts + 1, after.max_attempts) : before.attempts;
  const passes = guard === "pass" ? true : before.passes;
  if (after.children.length > 0) {
    // A decomposed leaf became a parent: its passes are derived, attempts unchanged.
    return after.attempts === before.attempts
      ? undefined
      : `attempts of the decomposed leaf ${JSON.stringify(after.id)} moved from ${before.attempts} to ${after.attempts}`;
  }
  if (after.attempts !== attempts) {
    return `attempts of the selected leaf ${JSON.stringify(after.id)} are ${after.attempts}, but guard=${guard}${status ? `, status ${status}` : ""}${runnerError ? ", runner error" : ""} gives ${attempts}`;
  }
  if (after.passes !== passes) {
    return `passes of the selected leaf ${JSON.stringify(after.id)} is ${after.passes}, but guard=${guard} gives ${passes}`;
  }
  return undefined;
}

/**
 * Audits a run: `base` is the tree the run started from (the parent of its first loop commit),
 * `commits` every commit after it on the branch, oldest first (first-parent history). The commits are
 * taken one at a time as they come (a stream read from git): only the tree before and the tree after
 * the commit in hand are held, whatever the length of the run.
 */
export async function auditRun(
  runId: string,
  base: TaskTree | undefined,
  commits: Iterable<AuditCommit> | AsyncIterable<AuditCommit>,
  baseFinished: readonly string[] = [],
): Promise<AuditReport> {
  // Each violation with its commit's place in the history, and the pass that found it (-1 the base,
  // 0 the commit's identity and place, 1 its transition): reported in that order.
  const found: { violation: AuditViolation; position: number; pass: number }[] = [];
  let position = 0;
  let pass = 0;
  let firstSha: string | undefined;
  const violations = { push: (violation: AuditViolation) => found.push({ violation, position, pass }) };
  let loopCommits = 0;
  let otherCommits = 0;
  const baseProblems: string[] = [];
  if (!base) baseProblems.push("the tree the run started from is invalid");
  else for (const problem of checkDerivedPasses(base)) baseProblems.push(`the tree the run started from: ${formatProblem(problem)}`);

  let current: TaskTree | undefined = base; // the tree at the previous commit (undefined: invalid)
  // The plan-finished leaves (finished.json as of the previous commit), and the nodes loop commits have named so far.
  let finished = new Set(baseFinished);
  const named = new Set<string>();
  let lastValid: TaskTree | undefined = base;
  // The newest tree whose parents' passes were checked and found derived (the quick check of the next builds on it).
  let derivedChecked: TaskTree | undefined = base && baseProblems.length === 0 ? base : undefined;
  // Commits the runner did not make, between loop commits of the run: the runner never lets an
  // agent commit, so each needs a person's look. (After the last loop commit they are left alone:
  // a person's fix before the run goes on.) Held until the next loop commit shows they are between.
  let notLoop: { sha: string; subject: string; position: number }[] = [];
  // Commits not made by the runner that changed the guard's definition, held the same way.
  let definitionChanges: { sha: string; changed: string[]; position: number }[] = [];
  // A person's edit: made by a runner command (its subject), or by hand changing only the runner's files.
  const isPersonEdit = (commit: AuditCommit, kind: CommitKind) => kind.kind === "person-edit" || onlyRunnerFiles(commit.changedPaths);
  const personEdits: PersonEditFinding[] = [];
  // The run's identity: the first loop commit's author; every loop commit is by it and committed by it.
  let identity: string | undefined;
  for await (const commit of commits) {
    firstSha ??= commit.sha;
    pass = 0;
    // What the commit is, decided once: its subject parsed here and handed on.
    const kind = commitKindOf(commit.subject, commit.body, runId);
    const record = kind.kind === "loop" ? loopRecordOf(commit.sha, kind.subject, commit.body) : undefined;
    const definitionChanged = commit.definitionChanged ?? [];
    if (!record) {
      if (!isPersonEdit(commit, kind)) notLoop.push({ sha: commit.sha, subject: commit.subject, position });
      // (a person's edit made through a runner command is the sanctioned way to change the guard)
      if (definitionChanged.length > 0 && kind.kind !== "person-edit")
        definitionChanges.push({ sha: commit.sha, changed: definitionChanged, position });
    } else {
      for (const other of definitionChanges)
        found.push({
          violation: {
            sha: other.sha,
            iteration: undefined,
            message: `a commit between iterations changed the guard's definition (${other.changed.join(", ")}): the iterations after it were judged by another guard, so check it by hand`,
          },
          position: other.position,
          pass: 0,
        });
      definitionChanges = [];
      if (definitionChanged.length > 0)
        violations.push({
          sha: commit.sha,
          iteration: record.subject.iteration,
          message: `changed the guard's definition (${definitionChanged.join(", ")}), which the runner takes back from every iteration`,
        });
      for (const other of notLoop)
        found.push({
          violation: {
            sha: other.sha,
            iteration: undefined,
            message: `a commit between loop commits that the runner did not make (${JSON.stringify(other.subject)}); the runner never lets the agent commit, so check it by hand`,
          },
          position: other.position,
          pass: 0,
        });
      notLoop = [];
    }
    if (record && commit.author !== undefined) {
      identity ??= commit.author;
      const who = [commit.author, commit.committer].filter((name) => name !== identity);
      if (who.length > 0)
        violations.push({
          sha: commit.sha,
          iteration: record.subject.iteration,
          message: `made by ${who.join(" and ")}, not the run's identity ${identity}`,
        });
    }
    if (record && commit.parents !== undefined && commit.parents.length !== 1) {
      violations.push({
        sha: commit.sha,
        iteration: record.subject.iteration,
        message: `has ${commit.parents.length} parents; a loop commit has exactly one, the commit its iteration started from`,
      });
    }
    pass = 1;
    audit(commit, record, kind);
    if (record && record.subject.kind !== "repair") named.add(record.subject.nodeId);
    if (commit.finished !== undefined) finished = new Set(commit.finished);
    position++;
  }
  for (const message of baseProblems) found.push({ violation: { sha: firstSha ?? "", iteration: undefined, message }, position: 0, pass: -1 });
  // In history order: the first one printed is the first commit that breaks a rule.
  found.sort((a, b) => a.position - b.position || a.pass - b.pass);
  return { loopCommits, otherCommits, violations: found.map((entry) => entry.violation), personEdits };

  function audit(commit: AuditCommit, record: LoopRecord | undefined, kind: CommitKind): void {
    const fail = (message: string) => violations.push({ sha: commit.sha, iteration: record?.subject.iteration, message });
    // An iteration that left the tree invalid commits it as the agent wrote it (Runner-Tree: invalid);
    // the runner did not accept it, so it is not checked here, and the next loop commit must repair it.
    const after = record && leftTreeInvalid(record) ? undefined : commit.tree;

    if (!record && isPersonEdit(commit, kind)) {
      otherCommits++;
      const { finished: finishedAfter, ...rest } = commit;
      const finding = judgePersonEdit({
        ...rest,
        before: lastValid,
        after,
        runId,
        ...(kind.kind === "person-edit" ? { said: kind } : {}),
        ...(finishedAfter !== undefined ? { finished: { before: [...finished], after: finishedAfter } } : {}),
      });
      personEdits.push(finding);
      const who = finding.made === "runner" ? "a person's edit" : "a person's edit by hand";
      for (const problem of finding.problems) fail(`${who} (${JSON.stringify(commit.subject)}) breaks the rules: ${problem}`);
      if (commit.changedPaths.includes(LAYOUT.tree)) {
        current = after;
        if (after) lastValid = after;
      }
      return;
    }
    if (!record) {
      otherCommits++;
      if (!commit.changedPaths.includes(LAYOUT.tree)) return;
      if (!after) {
        fail("a commit that is not a loop commit left the task tree invalid");
      } else if (lastValid) {
        for (const problem of checkPassedImmutable(lastValid, after)) fail(`not a loop commit: ${formatProblem(problem)}`);
        for (const problem of ownedFieldProblems(lastValid, after, { by: "runner", previous: byId(lastValid) }))
          fail(`not a loop commit, yet ${problem}`);
      }
      current = after;
      if (after) lastValid = after;
      return;
    }

    loopCommits++;
    const subject = record.subject;
    if (commit.changedPaths.includes(LAYOUT.finished))
      fail(`changed ${LAYOUT.finished}, which only a person's edit changes (the runner takes back every change an agent makes to it)`);
    if (subject.iteration !== loopCommits) fail(`the subject says iteration ${subject.iteration}, but it is loop commit ${loopCommits} of the run`);

    if (subject.kind === "repair") {
      if (current) fail("a repair step ran although the task tree was valid");
      if (after && lastValid) {
        for (const problem of checkPassedImmutable(lastValid, after)) fail(`the repair: ${formatProblem(problem)}`);
        for (const problem of ownedFieldProblems(lastValid, after, { by: "runner", previous: byId(lastValid) }))
          fail(`the repair changed runner-owned fields: ${problem}`);
      }
    } else {
      if (subject.kind === "decompose" || subject.kind === "execute") {
        const kind = classifyChangedPaths(commit.changedPaths);
        if (kind !== subject.kind)
          fail(`the subject says ${subject.kind}, but the commit changed ${kind === "execute" ? "paths outside .runner/" : "only .runner/"}`);
        if (subject.guard === "pass" && subject.kind !== "execute") fail("guard=pass on an iteration that changed nothing outside .runner/");
        if (subject.guard === "pass" && record.trailers.status !== "done")
          fail(`guard=pass although the agent said ${record.trailers.status ?? "nothing"}`);
      }
      if (subject.kind === "interrupted" && record.trailers.error === undefined)
        fail("an interrupted iteration without its runner error (Runner-Error)");
      if (subject.kind === "recheck" && record.trailers.status !== undefined)
        fail(`a re-check with an agent status (${record.trailers.status}); no agent runs in a re-check`);
      if (record.trailers.error !== undefined && subject.guard !== "skipped")
        fail(`a runner error with guard=${subject.guard}; runner errors skip the guard`);
      if (!current) {
        fail("a leaf iteration ran on an invalid task tree; the runner must run a repair step first");
      } else {
        if (subject.kind === "recheck") {
          // A person names the leaf to re-check: any open leaf, not only the leftmost.
          const node = byId(current).get(subject.nodeId);
          if (!node || node.passes || node.children.length > 0) fail(`a re-check of ${subject.nodeId}, which was not an open leaf`);
          if (after) for (const problem of recheckChanges(current, after, subject.nodeId)) fail(`the re-check ${problem}`);
          for (const problem of batchProblems(record, current, after)) fail(problem);
        } else {
          const selection = selectLeftmostOpenLeaf(current);
          if (selection.kind !== "leaf") fail(`an iteration on node ${subject.nodeId} after the root had passed`);
          else if (selection.leaf.id !== subject.nodeId)
            fail(`the subject names node ${subject.nodeId}, but the leftmost open leaf was ${selection.leaf.id}`);
        }
        if (after) {
          const quick = subject.kind === "recheck" ? undefined : quickComparison(current, after, commit.treeVersion);
          if (!quick?.passedUnchanged()) for (const problem of checkPassedImmutable(current, after)) fail(formatProblem(problem));
          const beforeLeaf = quick ? quick.nodeBefore(subject.nodeId) : byId(current).get(subject.nodeId);
          const afterLeaf = quick ? quick.nodeAfter(subject.nodeId) : byId(after).get(subject.nodeId);
          const exempt = new Set([subject.nodeId, ...batchOf(record)]);
          if (!quick?.ownedFieldsKept(exempt))
            for (const problem of ownedFieldProblems(current, after, { by: "runner", exempt, previous: byId(current) })) fail(problem);
          if (beforeLeaf && afterLeaf) {
            const leafProblem = expectedLeaf(record, beforeLeaf, afterLeaf);
            if (leafProblem) fail(leafProblem);
          } else if (beforeLeaf && !afterLeaf) {
            fail(`the selected node ${subject.nodeId} is gone from the tree`);
          }
        }
      }
    }
    if (after) {
      const derivedKept = current === derivedChecked && quickComparison(current, after, commit.treeVersion)?.derivedPassesKept() === true;
      const problems = derivedKept ? [] : checkDerivedPasses(after);
      for (const problem of problems) fail(formatProblem(problem));
      if (problems.length === 0) derivedChecked = after;
    }
    current = after;
    if (after) lastValid = after;
  }

  /** The leaves a re-check's Runner-Rechecked trailer says its guard passed besides its own (none for other commits). */
  function batchOf(record: LoopRecord): string[] {
    return record.subject.kind === "recheck" ? recheckedOf(record) : [];
  }

  /**
   * A re-check that passed other leaves with its own (docs/plans.md): honest only on a green guard,
   * and only for open leaves the plan marked finished that no earlier iteration of the run had judged.
   */
  function batchProblems(record: LoopRecord, before: TaskTree, after: TaskTree | undefined): string[] {
    const problems: string[] = [];
    for (const id of batchOf(record)) {
      const was = byId(before).get(id);
      const now = after ? byId(after).get(id) : undefined;
      const why =
        record.subject.kind !== "repair" && record.subject.guard !== "pass"
          ? `on guard=${record.subject.guard}`
          : !finished.has(id)
            ? `which the plan does not mark finished (${LAYOUT.finished})`
            : !was || was.passes || was.children.length > 0
              ? "which was not an open leaf"
              : named.has(id) || was.attempts > 0
                ? "which an earlier iteration had already judged"
                : now && (!now.passes || now.attempts !== was.attempts)
                  ? `but its passes is ${now.passes} and attempts ${now.attempts} after it`
                  : undefined;
      if (why !== undefined) problems.push(`the re-check passed ${JSON.stringify(id)} with its own leaf (Runner-Rechecked) ${why}`);
    }
    return problems;
  }
}
