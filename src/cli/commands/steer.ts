// A person steers the run (CONTRACT §4, "Steering a run"): `runner add | edit | move | remove |
// unstick | extend | config`. Each edit is computed and checked on a copy (src/core/plan-edit.ts)
// before anything is written, then committed as a person's edit (src/adapters/person-edit.ts) under
// the repository lock: while `runner run` works, refused, or with --wait made between two of its
// iterations.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { commitPersonEdit, type PersonEditCommit } from "../../adapters/person-edit.js";
import { projectPath } from "../../adapters/project-files.js";
import { serializeTree } from "../../core/canonical.js";
import { configValue, setConfigValue } from "../../core/config-edit.js";
import { LAYOUT } from "../../core/layout.js";
import {
  addNodes,
  editNode,
  extendTree,
  moveNode,
  newNodesFromJson,
  PlanEditError,
  removeNode,
  unstickLeaf,
  type NewNode,
  type PlanEdit,
} from "../../core/plan-edit.js";
import type { PersonEditVerb } from "../../core/person-edit.js";
import type { TaskTree } from "../../core/tree.js";
import { RefusalError, UsageError } from "../../errors.js";
import type { GlobalArgs } from "../command-table.js";
import { processEnv } from "../environment.js";
import { printLine } from "../output.js";
import { findProjectRoot } from "../repo.js";
import { withEditLock } from "../repository-lock.js";
import { loadValidTree } from "../valid-tree.js";

interface Common extends GlobalArgs {
  wait: boolean;
}

/** Runs a plan edit: under the lock, on the tree as it is now, committed as a person's edit. */
async function planEdit(argv: Common, verb: PersonEditVerb, make: (tree: TaskTree) => PlanEdit): Promise<number> {
  const root = findProjectRoot(argv.C);
  return withEditLock(root, `runner ${verb}`, argv.wait, async (lock) => {
    const tree = await loadValidTree(root);
    const edit = refuseBadEdit(() => make(tree));
    const commit = await commitPersonEdit({
      root,
      env: processEnv(),
      subject: { verb, target: edit.nodeId },
      changes: edit.changes,
      files: { [LAYOUT.tree]: serializeTree(edit.tree) },
      lockLost: () => lock.lost(),
    });
    return printCommitted(edit.changes, commit);
  });
}

/** What a person's edit changed and the commit it made; exit 0. */
function printCommitted(changes: readonly string[], commit: PersonEditCommit): number {
  printLine(`${changes.join("; ")}.`);
  printLine(`committed ${commit.sha.slice(0, 7)} "${commit.subject}" as a person's edit by ${commit.person}.`);
  return 0;
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

export async function add(
  argv: Common & {
    parentId?: string;
    title?: string;
    goal?: string;
    acceptance?: string[];
    order?: number;
    maxAttempts?: number;
    id?: string;
    fromFile?: string;
  },
): Promise<number> {
  const parentId = argv.parentId ?? "";
  if (argv.fromFile !== undefined && argv.title !== undefined)
    throw new UsageError("Give either --title (one node) or --from-file (a subtree), not both. See `runner add --help`.");
  if (argv.fromFile === undefined && argv.title === undefined)
    throw new UsageError("`runner add` needs --title (and usually --goal), or --from-file with nodes. See `runner add --help`.");
  const root = findProjectRoot(argv.C);
  const specs: NewNode[] =
    argv.fromFile !== undefined
      ? await readNodesFile(root, argv.fromFile)
      : [
          {
            title: argv.title!,
            ...(argv.goal !== undefined ? { goal: argv.goal } : {}),
            ...(argv.acceptance !== undefined ? { acceptance: argv.acceptance } : {}),
            ...(argv.order !== undefined ? { order: argv.order } : {}),
            ...(argv.maxAttempts !== undefined ? { maxAttempts: argv.maxAttempts } : {}),
            ...(argv.id !== undefined ? { id: argv.id } : {}),
          },
        ];
  return planEdit(argv, "add", (tree) => addNodes(tree, parentId, specs, tree.root.max_attempts));
}

export async function edit(
  argv: Common & { nodeId?: string; title?: string; goal?: string; acceptance?: string[]; order?: number; maxAttempts?: number },
): Promise<number> {
  return planEdit(argv, "edit", (tree) =>
    editNode(tree, argv.nodeId ?? "", {
      ...(argv.title !== undefined ? { title: argv.title } : {}),
      ...(argv.goal !== undefined ? { goal: argv.goal } : {}),
      ...(argv.acceptance !== undefined ? { acceptance: argv.acceptance } : {}),
      ...(argv.order !== undefined ? { order: argv.order } : {}),
      ...(argv.maxAttempts !== undefined ? { maxAttempts: argv.maxAttempts } : {}),
    }),
  );
}

export async function move(argv: Common & { nodeId?: string; parent?: string; order?: number }): Promise<number> {
  if (argv.parent === undefined) throw new UsageError("`runner move` needs --parent <id>: the node to move it under. See `runner move --help`.");
  return planEdit(argv, "move", (tree) => moveNode(tree, argv.nodeId ?? "", argv.parent!, argv.order));
}

export async function remove(argv: Common & { nodeId?: string }): Promise<number> {
  return planEdit(argv, "remove", (tree) => removeNode(tree, argv.nodeId ?? ""));
}

export async function unstick(argv: Common & { nodeId?: string; attempts?: number }): Promise<number> {
  return planEdit(argv, "unstick", (tree) => unstickLeaf(tree, argv.nodeId ?? "", argv.attempts));
}

export async function extend(
  argv: Common & { title?: string; goal?: string; acceptance?: string[]; maxAttempts?: number; id?: string; rootId?: string },
): Promise<number> {
  if (argv.title === undefined)
    throw new UsageError("`runner extend` needs --title (and usually --goal): the follow-up work. See `runner extend --help`.");
  return planEdit(argv, "extend", (tree) =>
    extendTree(
      tree,
      {
        title: argv.title!,
        ...(argv.goal !== undefined ? { goal: argv.goal } : {}),
        ...(argv.acceptance !== undefined ? { acceptance: argv.acceptance } : {}),
        ...(argv.id !== undefined ? { id: argv.id } : {}),
      },
      argv.maxAttempts ?? tree.root.max_attempts,
      argv.rootId,
    ),
  );
}

export async function config(argv: Common & { key?: string; set?: string }): Promise<number> {
  const key = argv.key ?? "";
  if (argv.set === undefined) throw new UsageError('`runner config` needs --set <value>, e.g. `runner config guard.command --set "npm test"`.');
  const root = findProjectRoot(argv.C);
  return withEditLock(root, "runner config", argv.wait, async (lock) => {
    const file = projectPath(root, LAYOUT.config);
    const before = await readFile(file, "utf8").catch(() => {
      throw new RefusalError(`${LAYOUT.config} does not exist; run \`runner init\` first.`);
    });
    const value = configValue(key, argv.set!);
    const text = refuseBadEdit(() => setConfigValue(before, key, value));
    if (text === before) {
      printLine(`${key} is already ${JSON.stringify(value)}; nothing to change.`);
      return 0;
    }
    const change = `${key} = ${JSON.stringify(value)}`;
    const commit = await commitPersonEdit({
      root,
      env: processEnv(),
      subject: { verb: "config", target: key },
      changes: [change],
      files: { [LAYOUT.config]: text },
      lockLost: () => lock.lost(),
    });
    return printCommitted([change], commit);
  });
}
