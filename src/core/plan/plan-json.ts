// ralph's prd.json and task-master's tasks.json as drafts (src/core/plan/plan-draft.ts), in every shape
// they are found in: ralph's `userStories` or `stories`; task-master's legacy `{"tasks": […]}`, a top-
// level array, tags holding `{"tasks": […]}` or an array directly, and `{"tags": {…}}`. Dependencies
// become order. What each field becomes is in docs/plans.md. Every item that breaks a rule is named
// (how many, the first few) in one sentence. Walks are iterative and depth-limited.
import { childDraft, draft, refuseAll, type Draft, type Rank } from "./plan-draft.js";
import { count, firstFew } from "../base/text-limits.js";
import { PlanEditError } from "../edit/plan-edit.js";
import { isJsonObject } from "../base/json-object.js";

export type JsonFormat = "ralph" | "task-master";

type Loose = Record<string, unknown>;

const isObject = isJsonObject;

export interface JsonPlan {
  format: JsonFormat;
  root: Draft;
  /** Ties between items that may come in either order: lower first (priority). */
  rank: Rank;
  /** The task-master tag read, when the file has tags. */
  tag?: string;
}

export interface JsonOptions {
  /** `--tag NAME`: the task-master tag to read. */
  tag?: string;
  /** task-master's current tag (`.taskmaster/state.json`), read by the caller. */
  currentTag?: string;
}

export function jsonPlan(name: string, data: unknown, options: JsonOptions): JsonPlan {
  if (isObject(data) && (Array.isArray(data.userStories) || Array.isArray(data.stories))) {
    if (options.tag !== undefined) throw new PlanEditError(`--tag is for task-master's tasks.json, and ${name} is ralph's prd.json; leave --tag out`);
    return fromRalph(name, data);
  }
  const tags = taskMasterTags(data);
  if (!tags)
    throw new PlanEditError(
      `${name} is JSON of neither plan format (ralph's "userStories", task-master's "tasks" or tags): its top level is ${describeTop(data)}; convert the plan to a Markdown checklist instead`,
    );
  const chosen = chooseTag(name, tags, options);
  return fromTaskMaster(name, chosen.tasks, chosen.tag);
}

/** What a JSON document's top level holds, in a few words. */
function describeTop(data: unknown): string {
  if (Array.isArray(data)) {
    if (data.length === 0) return "an empty array";
    const kinds = [...new Set(data.map((item) => (item === null ? "null" : Array.isArray(item) ? "array" : typeof item)))];
    return `an array of ${count(data.length, "item")} (${kinds.join(", ")})`;
  }
  if (isObject(data)) {
    const keys = Object.keys(data);
    return keys.length === 0
      ? "an empty object"
      : `an object with the ${keys.length === 1 ? "key" : "keys"} ${firstFew(
          keys.map((key) => JSON.stringify(key)),
          5,
        )}`;
  }
  return data === null ? "null" : `a ${typeof data}`;
}

// ------------------------------------------------------------------------------------------------
// ralph

/**
 * prd.json: `project` → the root's title, `description` → its goal; each story a node: `id`,
 * `title`, `description` and `notes` → goal, `acceptanceCriteria` → acceptance, `passes: true` →
 * finished, `dependsOn` / `dependencies` → after those stories, then by `priority`, then file order.
 */
function fromRalph(name: string, data: Loose): JsonPlan {
  const key = Array.isArray(data.userStories) ? "userStories" : "stories";
  const stories = data[key] as unknown[];
  const project = typeof data.project === "string" && data.project.trim() ? data.project.trim() : `Plan from ${name}`;
  const root = draft(project, "the root", 0);
  if (typeof data.description === "string" && data.description.trim()) root.goal.push(data.description.trim());
  const problems = new Problems();
  const priority = new Map<Draft, number>();
  const byId = new Map<string, Draft>();
  const wanted: { item: Draft; ids: unknown[] }[] = [];
  stories.forEach((story, i) => {
    const fallback = `${key}[${i}]`;
    if (!isObject(story)) return problems.add("not an object", fallback);
    const id = typeof story.id === "string" || typeof story.id === "number" ? String(story.id) : undefined;
    const where = id !== undefined ? `story ${id}` : fallback;
    const title = typeof story.title === "string" ? story.title.trim() : "";
    if (title === "") problems.add("no title", where);
    const node = childDraft(name, root, title, where);
    if (id !== undefined) {
      node.id = id;
      if (byId.has(id)) problems.add("an id used twice", where);
      byId.set(id, node);
    }
    if (typeof story.description === "string" && story.description.trim()) node.goal.push(story.description.trim());
    if (typeof story.notes === "string" && story.notes.trim()) node.goal.push("", `Notes: ${story.notes.trim()}`);
    const criteria = story.acceptanceCriteria ?? [];
    if (!Array.isArray(criteria) || criteria.some((line) => typeof line !== "string"))
      problems.add("acceptanceCriteria that is not a list of strings", where);
    else node.acceptance = (criteria as string[]).map((line) => line.trim()).filter(Boolean);
    if (story.priority !== undefined) {
      if (typeof story.priority !== "number" || !Number.isFinite(story.priority)) problems.add("a priority that is not a number", where);
      else priority.set(node, story.priority);
    }
    if (story.passes === true) node.finished = true;
    const dependencies = story.dependsOn ?? story.dependencies ?? [];
    if (!Array.isArray(dependencies)) problems.add("dependsOn that is not a list of story ids", where);
    else wanted.push({ item: node, ids: dependencies });
    root.children.push(node);
  });
  problems.refuse(name, "story", "stories");
  const unknown: string[] = [];
  for (const { item, ids } of wanted) {
    item.after = [];
    for (const id of ids) {
      const target = typeof id === "string" || typeof id === "number" ? byId.get(String(id)) : undefined;
      if (target && target !== item) item.after.push(target);
      else if (!target) unknown.push(`${item.where} on ${JSON.stringify(id)}`);
    }
  }
  refuseAll(name, unknown, (n) => `${count(n, "dependency", "dependencies")} name no story`, "fix or remove them (a dependency names a story's id)");
  if (root.children.length === 0) throw new PlanEditError(`${name} has no user stories; add at least one`);
  return { format: "ralph", root, rank: (item) => priority.get(item) ?? Number.MAX_SAFE_INTEGER };
}

// ------------------------------------------------------------------------------------------------
// task-master

/** The task lists of a tasks.json by tag (`""` for a file without tags); undefined when it is not task-master's. */
function taskMasterTags(data: unknown): Map<string, unknown[]> | undefined {
  if (Array.isArray(data)) return data.length > 0 && data.every(isObject) ? new Map([["", data]]) : undefined;
  if (!isObject(data)) return undefined;
  if (Array.isArray(data.tasks)) return new Map([["", data.tasks]]);
  const holder = isObject(data.tags) ? data.tags : data;
  const tags = new Map<string, unknown[]>();
  let definite = false;
  for (const [tag, value] of Object.entries(holder)) {
    if (isObject(value) && Array.isArray(value.tasks)) {
      tags.set(tag, value.tasks);
      definite = true;
    } else if (Array.isArray(value) && value.length > 0 && value.every(isObject)) {
      tags.set(tag, value);
      definite = true;
    } else if (Array.isArray(value) && value.length === 0) tags.set(tag, value);
  }
  return definite || (holder !== data && tags.size > 0) ? tags : undefined;
}

/** The tag to read: --tag; else task-master's own default, the current tag, else master — never an empty tag over a full one. */
function chooseTag(name: string, tags: ReadonlyMap<string, unknown[]>, options: JsonOptions): { tag: string | undefined; tasks: unknown[] } {
  const named = [...tags.keys()].filter((tag) => tag !== "");
  if (options.tag !== undefined) {
    if (named.length === 0) {
      if (options.tag === "master") return { tag: undefined, tasks: tags.get("")! };
      throw new PlanEditError(`${name} has no tags (its tasks are task-master's "master"); leave --tag out`);
    }
    const tasks = tags.get(options.tag);
    if (!tasks)
      throw new PlanEditError(
        `${name} has no tag ${JSON.stringify(options.tag)}; its tags are ${firstFew(
          named.map((tag) => JSON.stringify(tag)),
          6,
        )}`,
      );
    if (tasks.length === 0) throw new PlanEditError(`${name}: the tag ${JSON.stringify(options.tag)} has no tasks; give another --tag`);
    return { tag: options.tag, tasks };
  }
  if (named.length === 0) return { tag: undefined, tasks: tags.get("")! };
  const full = named.filter((tag) => tags.get(tag)!.length > 0);
  const pick = [options.currentTag, "master"].find((tag) => tag !== undefined && full.includes(tag)) ?? (full.length === 1 ? full[0] : undefined);
  if (pick !== undefined) return { tag: pick, tasks: tags.get(pick)! };
  if (full.length === 0) throw new PlanEditError(`${name} has no tasks in any tag; add at least one task`);
  throw new PlanEditError(
    `${name} has ${count(full.length, "tag")} with tasks (${firstFew(
      full.map((tag) => JSON.stringify(tag)),
      6,
    )}); choose one with --tag NAME`,
  );
}

const FINISHED_STATUSES = new Set(["done", "completed", "complete"]);
const CANCELLED_STATUSES = new Set(["cancelled", "canceled"]);
const PRIORITY_RANK: Record<string, number> = { critical: 0, high: 1, medium: 2, low: 3 };

/**
 * Each task a node `task-<id>`, its subtasks `task-<id>.<n>` under it (deeper subtasks the same way):
 * `title`; `description` and `details` → goal; `testStrategy` → acceptance; status done / completed
 * → finished (a subtask without a status takes its task's); cancelled → left out; `dependencies` →
 * order (a number among its siblings, "N.M" task N's subtask M), ties by `priority`, then id.
 */
function fromTaskMaster(name: string, tasks: unknown[], tag: string | undefined): JsonPlan {
  const root = draft(`Tasks from ${name}${tag !== undefined ? ` (tag ${tag})` : ""}`, "the root", 0);
  const problems = new Problems();
  const byPath = new Map<string, Draft>();
  const priority = new Map<Draft, number>();
  const wanted: { item: Draft; path: string; parentPath: string | undefined; deps: unknown[] }[] = [];
  /** A list of tasks (or subtasks) being read, one item at a time: the plan is read in its own order, without recursion. */
  interface Frame {
    items: unknown[];
    next: number;
    parent: Draft;
    /** The dotted path of the parent task ("" for the top level). */
    parentPath: string;
    finished: boolean;
    cancelled: boolean;
    field: string;
  }
  const stack: Frame[] = [{ items: tasks, next: 0, parent: root, parentPath: "", finished: false, cancelled: false, field: "tasks" }];
  while (stack.length > 0) {
    const level = stack[stack.length - 1]!;
    if (level.next >= level.items.length) {
      // Siblings in id order (numbers numerically): the tie-break after priority.
      sortByIds(level.parent.children);
      stack.pop();
      continue;
    }
    const i = level.next++;
    const item = level.items[i];
    const fallback = `${level.parentPath === "" ? "" : `task ${level.parentPath} `}${level.field}[${i}]`;
    if (!isObject(item)) {
      problems.add("not an object", fallback);
      continue;
    }
    const rawId = typeof item.id === "number" || typeof item.id === "string" ? String(item.id).trim() : "";
    // A subtask's id may be written in full ("3.2" under task 3): its own part counts.
    const own = level.parentPath !== "" && rawId.startsWith(`${level.parentPath}.`) ? rawId.slice(level.parentPath.length + 1) : rawId;
    const path = level.parentPath === "" ? own : `${level.parentPath}.${own}`;
    const where = own === "" ? fallback : `task ${path}`;
    if (own === "") problems.add("no id", where);
    const title = typeof item.title === "string" ? item.title.trim() : "";
    if (title === "") problems.add("no title", where);
    const node = childDraft(name, level.parent, title, where);
    if (own !== "") {
      node.id = `task-${path}`;
      if (byPath.has(path)) problems.add("an id used twice", where);
      byPath.set(path, node);
    }
    const status = typeof item.status === "string" ? item.status.trim().toLowerCase() : undefined;
    const finished = status === undefined ? level.finished : FINISHED_STATUSES.has(status);
    const isCancelled = status === undefined ? level.cancelled : CANCELLED_STATUSES.has(status);
    node.finished = finished;
    if (isCancelled) node.cancelled = true;
    const text = (value: unknown) => (typeof value === "string" ? value.trim() : "");
    if (text(item.description)) node.goal.push(text(item.description));
    if (text(item.details)) node.goal.push("", text(item.details));
    if (text(item.testStrategy)) node.acceptance.push(text(item.testStrategy));
    if (typeof item.priority === "string") priority.set(node, PRIORITY_RANK[item.priority.toLowerCase()] ?? PRIORITY_RANK.medium!);
    const deps = item.dependencies ?? [];
    if (!Array.isArray(deps) || deps.some((dep) => typeof dep !== "number" && typeof dep !== "string"))
      problems.add("dependencies that are not a list of task ids", where);
    else if (deps.length > 0) wanted.push({ item: node, path, parentPath: level.parentPath === "" ? undefined : level.parentPath, deps });
    level.parent.children.push(node);
    if (item.subtasks !== undefined && !Array.isArray(item.subtasks)) problems.add("subtasks that are not a list", where);
    else if (Array.isArray(item.subtasks) && item.subtasks.length > 0)
      stack.push({ items: item.subtasks, next: 0, parent: node, parentPath: path, finished, cancelled: isCancelled, field: "subtasks" });
  }
  problems.refuse(name, "task");
  const unknown: string[] = [];
  for (const { item, path, parentPath, deps } of wanted) {
    item.after = [];
    for (const dep of deps) {
      const text = String(dep).trim();
      // A plain number in a subtask names a sibling subtask (else a task); "N.M" names task N's subtask M.
      const target = text.includes(".")
        ? byPath.get(text)
        : parentPath !== undefined
          ? (byPath.get(`${parentPath}.${text}`) ?? byPath.get(text))
          : byPath.get(text);
      if (!target) unknown.push(`task ${path} on ${text}`);
      else if (target !== item) item.after.push(target);
    }
  }
  refuseAll(
    name,
    unknown,
    (n) => `${count(n, "dependency", "dependencies")} name no task`,
    'fix or remove them (another task\'s subtask is "<task>.<subtask>")',
  );
  if (root.children.length === 0) throw new PlanEditError(`${name} has no tasks; add at least one`);
  return { format: "task-master", root, rank: (item) => priority.get(item) ?? PRIORITY_RANK.medium!, ...(tag !== undefined ? { tag } : {}) };
}

/** Siblings in task id order: each dotted part numerically where it is a number, else as text (each id parsed once). */
function sortByIds(items: Draft[]): void {
  const keys = new Map(items.map((item) => [item, (item.id ?? "").replace(/^task-/, "").split(".")]));
  items.sort((a, b) => {
    const [x, y] = [keys.get(a)!, keys.get(b)!];
    for (let i = 0; i < Math.max(x.length, y.length); i++) {
      const [p, q] = [x[i], y[i]];
      if (p === undefined || q === undefined) return p === undefined ? -1 : 1;
      const [m, n] = [Number(p), Number(q)];
      if (Number.isFinite(m) && Number.isFinite(n) && m !== n) return m - n;
      if (p !== q) return p < q ? -1 : 1;
    }
    return 0;
  });
}

/** Every item that breaks a rule, by the rule: refused as one sentence naming how many and the first few. */
class Problems {
  private readonly byRule = new Map<string, string[]>();

  add(rule: string, where: string): void {
    const list = this.byRule.get(rule);
    if (list) list.push(where);
    else this.byRule.set(rule, [where]);
  }

  refuse(name: string, one: string, many = `${one}s`): void {
    const all = [...this.byRule.values()].flat();
    if (all.length === 0) return;
    const rules = [...this.byRule.entries()].map(([rule, list]) => `${list.length} with ${rule}`).join(", ");
    throw new PlanEditError(
      `${name}: ${count(all.length, one, many)} cannot be read (${rules}: ${firstFew([...new Set(all)])}); fix them in the file`,
    );
  }
}
