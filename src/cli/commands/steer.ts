// A person steers the run (CONTRACT §4, "Steering a run"): `runner add | edit | move | remove |
// unstick | extend | import | config`. Each edit is computed and checked on a copy (src/core/edit/plan-edit.ts)
// before anything is written, then committed as a person's edit (src/adapters/git/person-edit.ts) under
// the repository lock: while `runner run` works, refused, or with --wait made between two of its
// iterations. PERSON_EDITS makes the edits and says what they did; the command line prints that, and
// `runner mcp` (src/mcp/) answers its tools with it: one code path for both doors.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { commitPersonEdit, type PersonEditCommit } from "../../adapters/git/person-edit.js";
import { loadFinished, projectPath, readOptional } from "../../adapters/files/project-files.js";
import { serializeTree } from "../../core/tree/canonical.js";
import { formatChange } from "../../core/edit/edit-changes.js";
import type { ConfigChange } from "../../core/edit/config-edit.js";
import { LAYOUT } from "../../core/base/layout.js";
import { formatFinished } from "../../core/plan/plan-finished.js";
import { doneSection, importPlanNodes } from "../../core/plan/plan-import.js";
import {
  addNodes,
  editNode,
  extendTree,
  importNodes,
  moveNode,
  newNodesFromJson,
  PlanEditError,
  removeNode,
  unstickLeaf,
  type NewNode,
  type PlanEdit,
} from "../../core/edit/plan-edit.js";
import type { EditClient, PersonEditVerb } from "../../core/commit/commit-message.js";
import { nodesById, type TaskTree } from "../../core/tree/tree.js";
import { RefusalError, UsageError } from "../../errors.js";
import type { GlobalArgs } from "../command-table.js";
import { processEnv } from "../environment.js";
import { printLine } from "../output.js";
import { findProjectRoot } from "../repo.js";
import { withEditLock, type EditWait } from "../repository-lock.js";
import { loadValidTree } from "../valid-tree.js";
import { readPlanFile, refuseOversizedTree } from "../../adapters/files/plan-file.js";

/** Where a person's edit is made and how it meets a run at work. */
export interface EditRequest extends EditWait {
  /** The folder the repository is found from (the CLI's -C). */
  folder: string;
  /** The MCP client the edit comes through (its Runner-Client trailer); undefined from the command line. */
  client?: EditClient;
}

/** What a person's edit did: committed (what changed, the commit), or nothing to change (why). */
export type EditOutcome = { committed: true; changes: string[]; commit: PersonEditCommit } | { committed: false; message: string };

/** The sentences that tell an outcome: what changed and the commit, or why nothing did. */
export function describeEdit(outcome: EditOutcome): string[] {
  if (!outcome.committed) return [outcome.message];
  const { changes, commit } = outcome;
  return [`${changes.join("; ")}.`, `committed ${commit.sha.slice(0, 7)} "${commit.subject}" as a person's edit by ${commit.person}.`];
}

/** Runs a plan edit: under the lock, on the tree as it is now, committed as a person's edit. */
async function planEdit(request: EditRequest, verb: PersonEditVerb, make: (tree: TaskTree) => PlanEdit, root?: string): Promise<EditOutcome> {
  const top = root ?? findProjectRoot(request.folder);
  return withEditLock(top, `runner ${verb}`, request, async (lock) => {
    const tree = await loadValidTree(top);
    const edit = refuseBadEdit(() => make(tree));
    const commit = await commitPersonEdit({
      root: top,
      env: processEnv(),
      subject: { verb, target: edit.nodeId },
      changes: edit.changes,
      files: { [LAYOUT.tree]: serializeTree(edit.tree) },
      lockLost: () => lock.lost(),
      client: request.client,
    });
    return { committed: true, changes: edit.changes, commit };
  });
}

function refuseBadEdit<T>(make: () => T): T {
  try {
    return make();
  } catch (error) {
    if (error instanceof PlanEditError) throw new RefusalError(error.message);
    throw error;
  }
}

async function readNodesFile(root: string, file: string): Promise<NewNode[]> {
  const full = path.resolve(root, file);
  let text: string;
  try {
    text = await readFile(full, "utf8");
  } catch {
    throw new UsageError(`--from-file ${file} cannot be read; give the path of a JSON file with a node or an array of nodes.`);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new UsageError(`--from-file ${file} is not valid JSON; give a node ({"title": …, "children": […]}) or an array of them.`);
  }
  return refuseBadEdit(() => newNodesFromJson(data, path.basename(file)));
}

export interface AddArgs {
  parentId: string;
  title?: string;
  goal?: string;
  acceptance?: string[];
  order?: number;
  maxAttempts?: number;
  id?: string;
  fromFile?: string;
}
export interface EditArgs {
  nodeId: string;
  title?: string;
  goal?: string;
  acceptance?: string[];
  order?: number;
  maxAttempts?: number;
}
export interface MoveArgs {
  nodeId: string;
  parent?: string;
  order?: number;
}
export interface NodeArgs {
  nodeId: string;
}
export interface UnstickArgs {
  nodeId: string;
  attempts?: number;
}
export interface ExtendArgs {
  title?: string;
  goal?: string;
  acceptance?: string[];
  maxAttempts?: number;
  id?: string;
  rootId?: string;
}
export interface ImportArgs {
  file: string;
  under?: string;
  skipDone?: boolean;
  tag?: string;
}
export interface ConfigArgs {
  key?: string;
  set?: string[];
  unset?: string[];
}

async function addEdit(request: EditRequest, args: AddArgs): Promise<EditOutcome> {
  const parentId = args.parentId;
  if (args.fromFile !== undefined && args.title !== undefined)
    throw new UsageError("Give either --title (one node) or --from-file (a subtree), not both. See `runner add --help`.");
  if (args.fromFile === undefined && args.title === undefined)
    throw new UsageError("`runner add` needs --title (and usually --goal), or --from-file with nodes. See `runner add --help`.");
  const root = findProjectRoot(request.folder);
  const specs: NewNode[] =
    args.fromFile !== undefined
      ? await readNodesFile(root, args.fromFile)
      : [
          {
            title: args.title!,
            ...(args.goal !== undefined ? { goal: args.goal } : {}),
            ...(args.acceptance !== undefined ? { acceptance: args.acceptance } : {}),
            ...(args.order !== undefined ? { order: args.order } : {}),
            ...(args.maxAttempts !== undefined ? { maxAttempts: args.maxAttempts } : {}),
            ...(args.id !== undefined ? { id: args.id } : {}),
          },
        ];
  return planEdit(request, "add", (tree) => addNodes(tree, parentId, specs, tree.root.max_attempts), root);
}

function editEdit(request: EditRequest, args: EditArgs): Promise<EditOutcome> {
  return planEdit(request, "edit", (tree) =>
    editNode(tree, args.nodeId, {
      ...(args.title !== undefined ? { title: args.title } : {}),
      ...(args.goal !== undefined ? { goal: args.goal } : {}),
      ...(args.acceptance !== undefined ? { acceptance: args.acceptance } : {}),
      ...(args.order !== undefined ? { order: args.order } : {}),
      ...(args.maxAttempts !== undefined ? { maxAttempts: args.maxAttempts } : {}),
    }),
  );
}

async function moveEdit(request: EditRequest, args: MoveArgs): Promise<EditOutcome> {
  if (args.parent === undefined) throw new UsageError("`runner move` needs --parent <id>: the node to move it under. See `runner move --help`.");
  return planEdit(request, "move", (tree) => moveNode(tree, args.nodeId, args.parent!, args.order));
}

function removeEdit(request: EditRequest, args: NodeArgs): Promise<EditOutcome> {
  return planEdit(request, "remove", (tree) => removeNode(tree, args.nodeId));
}

function unstickEdit(request: EditRequest, args: UnstickArgs): Promise<EditOutcome> {
  return planEdit(request, "unstick", (tree) => unstickLeaf(tree, args.nodeId, args.attempts));
}

async function extendEdit(request: EditRequest, args: ExtendArgs): Promise<EditOutcome> {
  if (args.title === undefined)
    throw new UsageError("`runner extend` needs --title (and usually --goal): the follow-up work. See `runner extend --help`.");
  return planEdit(request, "extend", (tree) =>
    extendTree(
      tree,
      {
        title: args.title!,
        ...(args.goal !== undefined ? { goal: args.goal } : {}),
        ...(args.acceptance !== undefined ? { acceptance: args.acceptance } : {}),
        ...(args.id !== undefined ? { id: args.id } : {}),
      },
      args.maxAttempts ?? tree.root.max_attempts,
      args.rootId,
    ),
  );
}

/**
 * `runner import FILE [--under NODE]`: a plan's nodes (as `init --plan` reads them) added under an
 * open node as one person's edit — the tree, the leaves the plan marks finished added to
 * finished.json (the guard judges them first), or with --skip-done GOAL.md's list of what was left out.
 */
async function importEdit(request: EditRequest, args: ImportArgs): Promise<EditOutcome> {
  const file = args.file;
  const root = findProjectRoot(request.folder);
  const { name, bytes, options } = await readPlanFile(path.resolve(root, file), file, args);
  return withEditLock(root, "runner import", request, async (lock) => {
    const tree = await loadValidTree(root);
    const [listed, goalText] = await Promise.all([loadFinished(root), readOptional(projectPath(root, LAYOUT.goal))]);
    const { edit, files, notes } = refuseBadEdit(() => {
      const plan = importPlanNodes(name, bytes, { ...options, maxAttempts: tree.root.max_attempts }, new Set(nodesById(tree).keys()));
      const edit = importNodes(tree, args.under ?? tree.root.id, plan.root, name);
      const treeText = serializeTree(edit.tree);
      refuseOversizedTree(name, treeText);
      const files: Record<string, string> = { [LAYOUT.tree]: treeText };
      const notes: string[] = [];
      if (plan.finished.length > 0) {
        if (listed?.ok === false) throw new PlanEditError(`${LAYOUT.finished} ${listed.problem}; fix it (or remove it) first, then import again.`);
        files[LAYOUT.finished] = formatFinished([...(listed?.ids ?? []), ...plan.finished]);
        notes.push(formatChange({ kind: "finished", count: plan.finished.length }));
      }
      if (plan.done.length > 0) {
        files[LAYOUT.goal] = `${(goalText ?? "").replace(/\n*$/, "\n")}${doneSection(plan.done)}`;
        notes.push(formatChange({ kind: "goal-done", count: plan.done.length }));
      }
      return { edit, files, notes };
    });
    const changes = [...edit.changes, ...notes];
    const commit = await commitPersonEdit({
      root,
      env: processEnv(),
      subject: { verb: "import", target: edit.nodeId },
      changes,
      files,
      lockLost: () => lock.lost(),
      client: request.client,
    });
    return { committed: true, changes, commit };
  });
}

/** How `runner config` is used, for a sentence that refuses a wrong form. */
const CONFIG_FORM =
  '`runner config --set section.key=value … --unset section.key …` (e.g. `runner config --set executor.kind=command --set \'executor.command=["bash", "agent.sh"]\' --unset executor.sandbox`), or `runner config <section.key> --set <value>` for one key';

/** The changes a `runner config` command line asks for, in the order given. */
function configChanges(
  argv: { key?: string; set?: string[]; unset?: string[] },
  configValue: (key: string, text: string) => unknown,
): ConfigChange[] {
  const sets = argv.set ?? [];
  const unsets = argv.unset ?? [];
  if (argv.key !== undefined && sets.some((set) => /^[a-z_]+\.[a-z_]+=/.test(set)))
    // (`--set guard.command=npm test` unquoted: the shell made "test" a word of its own)
    throw new UsageError(`"${argv.key}" belongs to no --set; quote a value that has spaces (--set 'guard.command=npm test'): ${CONFIG_FORM}.`);
  if (argv.key !== undefined) {
    // The one-key form: `runner config guard.command --set "npm test"` (the value taken whole, `=` and all).
    if (sets.length !== 1 || unsets.length > 0)
      throw new UsageError(
        `With a key before the options, give it one --set <value> and nothing else; to change several keys, name each: ${CONFIG_FORM}.`,
      );
    return [{ key: argv.key, value: configValue(argv.key, sets[0]!) }];
  }
  if (sets.length === 0 && unsets.length === 0) throw new UsageError(`\`runner config\` needs what to change: ${CONFIG_FORM}.`);
  const changes: ConfigChange[] = [];
  for (const set of sets) {
    const at = set.indexOf("=");
    if (at < 0) throw new UsageError(`--set ${set} needs =value: ${CONFIG_FORM}.`);
    const key = set.slice(0, at).trim();
    changes.push({ key, value: configValue(key, set.slice(at + 1).trim()) });
  }
  for (const key of unsets) {
    if (key.includes("="))
      throw new UsageError(`--unset takes a key alone (--unset ${key.slice(0, key.indexOf("="))}), not a value; ${CONFIG_FORM}.`);
    changes.push({ key, unset: true });
  }
  return changes;
}

async function configEdit(request: EditRequest, args: ConfigArgs): Promise<EditOutcome> {
  // (the TOML syntax tree library is loaded by `runner config` alone, not by the plan edits beside it)
  const { configValue, editConfig } = await import("../../core/edit/config-edit.js");
  const changes = configChanges(args, configValue);
  const root = findProjectRoot(request.folder);
  return withEditLock(root, "runner config", request, async (lock) => {
    const file = projectPath(root, LAYOUT.config);
    const before = await readFile(file, "utf8").catch(() => {
      throw new RefusalError(`${LAYOUT.config} does not exist; run \`runner init\` first.`);
    });
    const edit = refuseBadEdit(() => editConfig(before, changes));
    const commit = await commitPersonEdit({
      root,
      env: processEnv(),
      subject: { verb: "config", target: edit.keys.join(", ") },
      changes: edit.changes,
      files: { [LAYOUT.config]: edit.text },
      lockLost: () => lock.lost(),
      client: request.client,
    });
    return { committed: true, changes: edit.changes, commit };
  });
}

/** Every person's edit by its verb: the command line's and `runner mcp`'s. */
export const PERSON_EDITS = {
  add: addEdit,
  edit: editEdit,
  move: moveEdit,
  remove: removeEdit,
  unstick: unstickEdit,
  extend: extendEdit,
  import: importEdit,
  config: configEdit,
} satisfies Record<PersonEditVerb, (request: EditRequest, args: never) => Promise<EditOutcome>>;

/** The command a verb is on the command line: the edit made from -C and --wait, its outcome printed, exit 0. */
function fromCommandLine<Args>(make: (request: EditRequest, args: Args) => Promise<EditOutcome>) {
  return async (argv: GlobalArgs & { wait: boolean } & Args): Promise<number> => {
    for (const line of describeEdit(await make({ folder: argv.C, wait: argv.wait }, argv))) printLine(line);
    return 0;
  };
}

export const add = fromCommandLine(addEdit);
export const edit = fromCommandLine(editEdit);
export const move = fromCommandLine(moveEdit);
export const remove = fromCommandLine(removeEdit);
export const unstick = fromCommandLine(unstickEdit);
export const extend = fromCommandLine(extendEdit);
export const importPlan = fromCommandLine(importEdit);
export const config = fromCommandLine(configEdit);
