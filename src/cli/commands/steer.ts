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
import type { ConfigChange } from "../../core/config-edit.js";
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
  return withEditLock(root, `runner ${verb}`, argv.wait, async () => {
    const tree = await loadValidTree(root);
    const edit = refuseBadEdit(() => make(tree));
    const commit = await commitPersonEdit({
      root,
      env: processEnv(),
      subject: { verb, target: edit.nodeId },
      changes: edit.changes,
      files: { [LAYOUT.tree]: serializeTree(edit.tree) },
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

export async function config(argv: Common & { key?: string; set?: string[]; unset?: string[] }): Promise<number> {
  // (the TOML syntax tree library is loaded by `runner config` alone, not by the plan edits beside it)
  const { configValue, editConfig } = await import("../../core/config-edit.js");
  const changes = configChanges(argv, configValue);
  const root = findProjectRoot(argv.C);
  return withEditLock(root, "runner config", argv.wait, async () => {
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
    });
    return printCommitted(edit.changes, commit);
  });
}
