// `runner init --plan FILE`: the initial tree from a plan a person already wrote — a Markdown file
// (headings and nested checklists), ralph's prd.json, or task-master's tasks.json. Pure and
// deterministic: the same text gives the same tree, and so the same bytes. What cannot be mapped is
// refused in one sentence (PlanEditError). How each field maps: docs/contract.md "Importing a plan".
import { checkTreeShape } from "./invariants.js";
import { formatProblem } from "./problems.js";
import { ID_PATTERN, idFromTitle, PlanEditError } from "./plan-edit.js";
import { sortedCopy, type TaskNode, type TaskTree } from "./tree.js";

type PlanFormat = "markdown" | "ralph" | "task-master";

interface Draft {
  id?: string;
  title: string;
  goal: string[];
  acceptance: string[];
  children: Draft[];
  order?: number;
}

/** Which format a plan file is: by its name (.md) or its JSON shape. */
function planFormat(name: string, text: string): PlanFormat {
  if (/\.(md|markdown)$/i.test(name)) return "markdown";
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new PlanEditError(
      `${name} is neither Markdown (.md) nor valid JSON; give a Markdown checklist, ralph's prd.json or task-master's tasks.json.`,
    );
  }
  if (isObject(data) && Array.isArray(data.userStories)) return "ralph";
  if (isObject(data) && (Array.isArray(data.tasks) || Object.values(data).some((value) => isObject(value) && Array.isArray(value.tasks))))
    return "task-master";
  throw new PlanEditError(
    `${name} is JSON, but neither ralph's prd.json (a "userStories" array) nor task-master's tasks.json (a "tasks" array); convert it to a Markdown checklist instead.`,
  );
}

/** The tree of a plan file; `goal` (from --goal) overrides the root's goal where given. */
export function importPlan(name: string, text: string, options: { maxAttempts: number; goal?: string }): TaskTree {
  const format = planFormat(name, text);
  const root =
    format === "markdown"
      ? fromMarkdown(name, text)
      : format === "ralph"
        ? fromRalph(name, JSON.parse(text))
        : fromTaskMaster(name, JSON.parse(text));
  if (options.goal?.trim()) root.goal = [options.goal.trim()];
  const taken = new Set<string>(["root"]);
  const build = (draft: Draft, order: number): TaskNode => {
    let id = draft.id;
    if (id !== undefined) {
      if (!ID_PATTERN.test(id))
        throw new PlanEditError(`${name}: ${JSON.stringify(id)} cannot be a node id; ids use letters, digits, '.', '_' and '-'.`);
      if (taken.has(id)) throw new PlanEditError(`${name}: the id ${JSON.stringify(id)} is used twice; ids must be unique.`);
    } else id = idFromTitle(draft.title, taken);
    taken.add(id);
    return {
      id,
      order: draft.order ?? order,
      title: draft.title,
      goal: draft.goal.join("\n").trim(),
      acceptance: draft.acceptance,
      passes: false,
      attempts: 0,
      max_attempts: options.maxAttempts,
      children: draft.children.map((child, i) => build(child, i)),
    };
  };
  const top: TaskNode = { ...build({ ...root, children: [] }, 0), id: "root", order: 0 };
  top.children = root.children.map((child, i) => build(child, i));
  const tree = sortedCopy({ version: 1, root: top });
  const shape = checkTreeShape(tree);
  if (!shape.tree) throw new PlanEditError(`${name} does not give a valid tree (${formatProblem(shape.problems[0]!)}).`);
  return tree;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

const draft = (title: string): Draft => ({ title, goal: [], acceptance: [], children: [] });

/**
 * Markdown: a single top `#` heading is the root (its text the root's goal); deeper headings nest
 * by level; checklist items (`- [ ] …`) nest by indentation under the heading above them. Text
 * under a heading or item is its goal; plain bullets (`- …`) under it are its acceptance. A checked
 * item (`- [x]`) is refused: only a green guard passes a node.
 */
function fromMarkdown(name: string, text: string): Draft {
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  const headings = lines.filter((line) => /^#{1,6}\s/.test(line));
  const topLevel = headings.filter((line) => /^#\s/.test(line));
  const singleTop = topLevel.length === 1 && headings[0] === topLevel[0];
  const root = draft(`Plan from ${name.split("/").pop()}`);
  // The open containers: headings by level, then checklist items by indentation.
  let headingStack: { level: number; node: Draft }[] = [{ level: 0, node: root }];
  let itemStack: { indent: number; node: Draft }[] = [];
  let current: Draft = root;
  let fenced = false;
  lines.forEach((line, index) => {
    const where = `${name} line ${index + 1}`;
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const heading = fenced ? null : /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      const level = heading[1]!.length;
      const title = heading[2]!.trim();
      if (title === "") throw new PlanEditError(`${where}: a heading without text; give it a title or remove it.`);
      itemStack = [];
      if (singleTop && level === 1) {
        root.title = title;
        current = root;
        return;
      }
      headingStack = headingStack.filter((entry) => entry.level < level);
      const node = draft(title);
      headingStack[headingStack.length - 1]!.node.children.push(node);
      headingStack.push({ level, node });
      current = node;
      return;
    }
    const item = fenced ? null : /^(\s*)[-*+]\s+\[([ xX])\]\s+(.*)$/.exec(line);
    if (item) {
      if (item[2] !== " ")
        throw new PlanEditError(
          `${where}: "${line.trim()}" is checked, but only a green guard passes a node; uncheck it or leave it out of the plan.`,
        );
      const indent = item[1]!.replace(/\t/g, "    ").length;
      const title = item[3]!.trim();
      if (title === "") throw new PlanEditError(`${where}: a checklist item without text; give it a title or remove it.`);
      itemStack = itemStack.filter((entry) => entry.indent < indent);
      const parent = itemStack[itemStack.length - 1]?.node ?? headingStack[headingStack.length - 1]!.node;
      const node = draft(title);
      parent.children.push(node);
      itemStack.push({ indent, node });
      current = node;
      return;
    }
    if (fenced || /^\s*(```|~~~)/.test(line)) {
      current.goal.push(line.trim() === "" ? "" : line.replace(/^\s{0,8}/, ""));
      return;
    }
    const bullet = /^\s*[-*+]\s+(.*)$/.exec(line);
    if (bullet) {
      current.acceptance.push(bullet[1]!.trim());
      return;
    }
    if (line.trim() === "" && current.goal.length === 0) return;
    current.goal.push(line.trim());
  });
  if (root.children.length === 0)
    throw new PlanEditError(
      `${name} has no headings or checklist items (\`- [ ] …\`) to make nodes of; write the plan as a checklist, or use \`runner init --goal\`.`,
    );
  return root;
}

function stringList(value: unknown, where: string): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.some((line) => typeof line !== "string")) throw new PlanEditError(`${where} must be an array of strings.`);
  return value as string[];
}

function requiredText(value: unknown, where: string): string {
  if (typeof value !== "string" || value.trim() === "") throw new PlanEditError(`${where} must be a non-empty string.`);
  return value.trim();
}

/**
 * ralph's prd.json: `project` → the root's title, `description` → its goal; each of `userStories`
 * a leaf: `id` → id, `title` → title, `description` → goal, `acceptanceCriteria` → acceptance,
 * `priority` → order (then file order). A story with `passes: true` is refused.
 */
function fromRalph(name: string, data: Record<string, unknown>): Draft {
  const root = draft(typeof data.project === "string" && data.project.trim() ? data.project.trim() : `Plan from ${name}`);
  if (typeof data.description === "string") root.goal.push(data.description);
  (data.userStories as unknown[]).forEach((story, i) => {
    const where = `${name} userStories[${i}]`;
    if (!isObject(story)) throw new PlanEditError(`${where} must be an object with a title.`);
    if (story.passes === true)
      throw new PlanEditError(`${where} says "passes": true, but only a green guard passes a node; set it to false or leave the story out.`);
    const node = draft(requiredText(story.title, `${where}.title`));
    if (story.id !== undefined) node.id = String(story.id);
    if (typeof story.description === "string") node.goal.push(story.description);
    node.acceptance = stringList(story.acceptanceCriteria, `${where}.acceptanceCriteria`);
    if (story.priority !== undefined) {
      if (!Number.isSafeInteger(story.priority)) throw new PlanEditError(`${where}.priority must be a whole number.`);
      node.order = story.priority as number;
    }
    root.children.push(node);
  });
  if (root.children.length === 0) throw new PlanEditError(`${name} has no user stories; add at least one.`);
  return root;
}

/**
 * task-master's tasks.json (`{"tasks": […]}`, or tagged: `{"master": {"tasks": […]}}` — one tag):
 * each task a node `task-<id>` (its subtasks `task-<id>.<n>` under it), `title` → title,
 * `description` and `details` → goal, `testStrategy` → acceptance; `dependencies` become order (a
 * task comes after every task it depends on; ties by id). A task marked done is refused, as is a
 * dependency on no task or a cycle.
 */
function fromTaskMaster(name: string, data: Record<string, unknown>): Draft {
  let tasks = data.tasks;
  if (!Array.isArray(tasks)) {
    const tags = Object.entries(data).filter(([, value]) => isObject(value) && Array.isArray(value.tasks));
    if (tags.length !== 1)
      throw new PlanEditError(
        `${name} has ${tags.length} tags with tasks (${tags.map(([tag]) => tag).join(", ")}); export one tag's tasks to import.`,
      );
    tasks = (tags[0]![1] as Record<string, unknown>).tasks;
  }
  const root = draft(`Tasks from ${name.split("/").pop()}`);
  root.children = ordered(tasks as unknown[], name, "tasks", (id) => `task-${id}`);
  if (root.children.length === 0) throw new PlanEditError(`${name} has no tasks; add at least one.`);
  return root;
}

function ordered(items: unknown[], name: string, path: string, idOf: (id: string) => string): Draft[] {
  const nodes = new Map<string, { draft: Draft; deps: string[] }>();
  items.forEach((item, i) => {
    const where = `${name} ${path}[${i}]`;
    if (!isObject(item)) throw new PlanEditError(`${where} must be an object with an id and a title.`);
    if (typeof item.id !== "number" && typeof item.id !== "string") throw new PlanEditError(`${where}.id must be a number or a string.`);
    const key = String(item.id);
    if (nodes.has(key)) throw new PlanEditError(`${where}: id ${key} is used twice; task ids must be unique.`);
    if (item.status === "done" || item.status === "completed")
      throw new PlanEditError(
        `${where} (${key}) has status ${String(item.status)}, but only a green guard passes a node; import the open tasks only.`,
      );
    const node = draft(requiredText(item.title, `${where}.title`));
    node.id = idOf(key);
    if (typeof item.description === "string" && item.description.trim()) node.goal.push(item.description.trim());
    if (typeof item.details === "string" && item.details.trim()) node.goal.push("", item.details.trim());
    if (typeof item.testStrategy === "string" && item.testStrategy.trim()) node.acceptance.push(item.testStrategy.trim());
    const deps = item.dependencies === undefined ? [] : item.dependencies;
    if (!Array.isArray(deps) || deps.some((dep) => typeof dep !== "number" && typeof dep !== "string"))
      throw new PlanEditError(`${where}.dependencies must be an array of task ids.`);
    if (Array.isArray(item.subtasks) && item.subtasks.length > 0)
      node.children = ordered(item.subtasks, name, `${path}[${i}].subtasks`, (sub) => `${node.id}.${sub}`);
    nodes.set(key, { draft: node, deps: deps.map(String) });
  });
  // Subtasks may name siblings as "<parent>.<n>": only the last part counts among siblings.
  for (const entry of nodes.values()) entry.deps = entry.deps.map((dep) => (nodes.has(dep) ? dep : (dep.split(".").pop() ?? dep)));
  for (const [key, entry] of nodes)
    for (const dep of entry.deps)
      if (!nodes.has(dep))
        throw new PlanEditError(
          `${name} ${path}: task ${key} depends on ${dep}, which is not among its sibling tasks; fix or remove the dependency.`,
        );
  // Topological order, ties by id (numbers numerically): each node's order is its place.
  const compare = (a: string, b: string) => {
    const [x, y] = [Number(a), Number(b)];
    return Number.isFinite(x) && Number.isFinite(y) ? x - y : a < b ? -1 : a > b ? 1 : 0;
  };
  const done = new Set<string>();
  const result: Draft[] = [];
  while (done.size < nodes.size) {
    const ready = [...nodes.keys()].filter((key) => !done.has(key) && nodes.get(key)!.deps.every((dep) => done.has(dep))).sort(compare);
    if (ready.length === 0) {
      const left = [...nodes.keys()].filter((key) => !done.has(key)).sort(compare);
      throw new PlanEditError(`${name} ${path}: the dependencies of tasks ${left.join(", ")} form a cycle; break it to give the tasks an order.`);
    }
    const next = ready[0]!;
    done.add(next);
    const node = nodes.get(next)!.draft;
    node.order = result.length;
    result.push(node);
  }
  return result;
}
