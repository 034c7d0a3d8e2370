// The commands and their options, declared once: the parser, the help text and each handler's
// argument type come from this table. Command modules are loaded only when called.
import { runIdProblem } from "../core/commit/run-id.js";
import { command, type AnyCommand, type OptionSpec } from "./command-table.js";

export const GLOBAL_OPTIONS = {
  C: { type: "string", default: ".", describe: "Work in this folder instead of the current one", value: "dir" },
  debug: { type: "boolean", describe: "Show stack traces of errors" },
} as const satisfies Record<string, OptionSpec>;

// What `init --executor` takes: every agent of src/agents/registry.ts (test/unit/bundle.test.ts
// checks the two lists agree), the bare command, the demo agent. Names only: this table is loaded
// by every `runner` call, the registry (every agent module) only by the commands that use it.
export const EXECUTOR_CHOICES = ["codex", "claude", "gemini", "qwen", "opencode", "copilot", "pi", "cline", "command", "demo"] as const;

const json = { type: "boolean", describe: "Print one JSON document" } as const;
const runId = { type: "string", describe: "The run (default: from the runner/<id> branch)", value: "id", check: runIdProblem } as const;

const wait = { type: "boolean", describe: "While `runner run` works: wait and make the edit between two of its iterations (else refused)" } as const;
const nodeFields = {
  title: { type: "string", describe: "The node's title", value: "text" },
  goal: { type: "string", describe: "What the node must achieve", value: "text" },
  acceptance: { type: "string", multiple: true, describe: "One acceptance criterion", value: "text" },
  order: { type: "integer", describe: "Its place among its siblings (lower first)", value: "n" },
  "max-attempts": { type: "integer", min: 1, describe: "Attempts the agent gets at it", value: "n" },
} as const;
const steer = () => import("./commands/steer.js");

export const COMMANDS: AnyCommand[] = [
  command({
    name: "init",
    describe: "Scaffold .runner/ in this repository (refuses if it exists)",
    options: {
      goal: { type: "string", describe: "The project goal (written to .runner/GOAL.md and the root node)", value: "text" },
      "max-attempts": { type: "integer", default: 3, min: 1, describe: "max_attempts of the root node", value: "n" },
      executor: { type: "string", choices: EXECUTOR_CHOICES, default: "codex", describe: "The agent the config starts with" },
      plan: {
        type: "string",
        describe: "Build the tree from a plan: a Markdown checklist or headings (spec-kit, Kiro), ralph's prd.json, task-master's tasks.json",
        value: "file",
      },
      "skip-done": {
        type: "boolean",
        describe: "With --plan: leave finished items out (listed in GOAL.md) instead of having the guard judge them first",
      },
      tag: { type: "string", describe: "With --plan: the task-master tag to read (default: the current tag, else master)", value: "name" },
    },
    load: () => import("./commands/init.js"),
  }),
  command({
    name: "validate",
    describe: "Check the tree, the config and node policies; every problem with its JSON path",
    options: { json },
    load: () => import("./commands/validate.js"),
  }),
  command({
    name: "next",
    describe: "The leaf `runner step` would select, with its path from the root",
    options: { json },
    load: () => import("./commands/next.js"),
  }),
  command({
    name: "status",
    describe: "The tree with passes and attempts, the next leaf, the run and its iteration count",
    options: { json, "run-id": runId },
    load: () => import("./commands/status.js"),
  }),
  command({
    name: "show",
    describe: "One node: title, goal, acceptance, attempts, its path and children, and this run's iterations on it with their failures",
    positional: { name: "node-id", describe: "The node to show (`runner status` lists them)", required: true },
    options: { json, "run-id": runId },
    load: () => import("./commands/show.js"),
  }),
  command({
    name: "add",
    describe: "A person's edit: add an open node (or a subtree --from-file) under an open node, committed and audited",
    positional: { name: "parent-id", describe: "The open node to add under", required: true },
    options: {
      ...nodeFields,
      id: { type: "string", describe: "The new node's id (default: derived from the title)", value: "id" },
      "from-file": { type: "string", describe: "Add the node(s) of this JSON file (a node or an array; children allowed)", value: "file" },
      wait,
    },
    load: async () => ({ run: (await steer()).add }),
  }),
  command({
    name: "edit",
    describe: "A person's edit: change an open node's title, goal, acceptance, order or max_attempts",
    positional: { name: "node-id", describe: "The open node to change", required: true },
    options: { ...nodeFields, wait },
    load: async () => ({ run: (await steer()).edit }),
  }),
  command({
    name: "move",
    describe: "A person's edit: move an open node (with no passed node under it) under another open node",
    positional: { name: "node-id", describe: "The node to move", required: true },
    options: { parent: { type: "string", describe: "The new parent", value: "id" }, order: nodeFields.order, wait },
    load: async () => ({ run: (await steer()).move }),
  }),
  command({
    name: "remove",
    describe: "A person's edit: remove an open node whose subtree holds no passed node",
    positional: { name: "node-id", describe: "The node to remove", required: true },
    options: { wait },
    load: async () => ({ run: (await steer()).remove }),
  }),
  command({
    name: "unstick",
    describe: "A person's edit: give a stuck leaf more attempts (max_attempts rises; the attempts spent stay)",
    positional: { name: "node-id", describe: "The leaf", required: true },
    options: { attempts: { type: "integer", min: 1, describe: "How many more (default: its max_attempts again)", value: "n" }, wait },
    load: async () => ({ run: (await steer()).unstick }),
  }),
  command({
    name: "extend",
    describe: "Follow-up work after the root passed: a new root over the passed tree (kept unchanged) and the new work as an open leaf",
    options: {
      title: nodeFields.title,
      goal: nodeFields.goal,
      acceptance: nodeFields.acceptance,
      "max-attempts": nodeFields["max-attempts"],
      id: { type: "string", describe: "The new work's id (default: derived from the title)", value: "id" },
      "root-id": { type: "string", describe: "The new root's id (default: root-2, root-3, …)", value: "id" },
      wait,
    },
    load: async () => ({ run: (await steer()).extend }),
  }),
  command({
    name: "import",
    describe: "A person's edit: add a plan's nodes (Markdown, ralph's prd.json, task-master's tasks.json) under an open node, committed and audited",
    positional: { name: "file", describe: "The plan file (as `runner init --plan` reads it; docs/plans.md)", required: true },
    options: {
      under: { type: "string", describe: "The open node to add the plan under (default: the root)", value: "id" },
      "skip-done": { type: "boolean", describe: "Leave finished items out (listed in GOAL.md) instead of having the guard judge them first" },
      tag: { type: "string", describe: "The task-master tag to read (default: the current tag, else master)", value: "name" },
      wait,
    },
    load: async () => ({ run: (await steer()).importPlan }),
  }),
  command({
    name: "config",
    describe:
      "A person's edit of .runner/state/config.toml: set or unset keys (e.g. switch the agent) in one edit, checked as a whole, committed and audited",
    positional: {
      name: "key",
      describe: "With one --set <value>: the key to set, e.g. guard.command (or name each in --set key=value)",
      required: false,
    },
    options: {
      set: {
        type: "string",
        multiple: true,
        describe: 'section.key=value: a TOML value, or plain text (an argv key splits it: guard.command="npm test")',
        value: "key=value",
      },
      unset: { type: "string", multiple: true, describe: "section.key: remove the key (its default applies again)", value: "key" },
      wait,
    },
    load: async () => ({ run: (await steer()).config }),
  }),
  command({
    name: "doctor",
    describe: "Check everything a run needs before anything is spent: config, tree, the agent's and the guard's programs, the guard's recipe",
    options: { json },
    load: () => import("./commands/doctor.js"),
  }),
  command({
    name: "start",
    describe: "Create and check out the run branch runner/<id> (clean working tree required), or with --worktree in a new worktree",
    positional: {
      name: "path",
      describe: "With --worktree: the new worktree's folder (default: beside the repository, <repo>-<id>)",
      required: false,
    },
    options: {
      "run-id": { type: "string", describe: "The run id (default: the UTC time as YYYYMMDD-HHMMSS)", value: "id", check: runIdProblem },
      from: { type: "string", describe: "Start from this branch or commit (default: HEAD; needed on another run's branch)", value: "ref" },
      worktree: { type: "boolean", describe: "Check the run branch out in a new linked worktree (this checkout is left as it is)" },
      goal: {
        type: "string",
        describe: "The run's own goal: a one-leaf tree and GOAL.md for it, committed on the run branch (the config kept)",
        value: "text",
      },
    },
    load: () => import("./commands/start.js"),
  }),
  command({
    name: "step",
    describe: "One iteration: select, run the agent, guard, update, commit",
    options: { "run-id": runId, json },
    load: () => import("./commands/step.js"),
  }),
  command({
    name: "run",
    describe: "Step until the root passes, a stop condition, or an error",
    options: {
      "max-iterations": { type: "integer", min: 1, describe: "Iterations this run may take (default: [limits] max_iterations)", value: "n" },
      "halt-on-stuck": { type: "boolean", describe: "Stop (exit 3) when the next leaf is stuck instead of asking to decompose it" },
      json: { type: "boolean", describe: "Stream one JSON event object per line" },
      "run-id": runId,
    },
    load: () => import("./commands/run.js"),
  }),
  command({
    name: "recheck",
    describe: "Run the guard alone on an open leaf whose work is already on the branch; a green guard passes it (committed like an iteration)",
    positional: { name: "node-id", describe: "The open leaf to re-check (default: the one `runner next` names)", required: false },
    options: { "run-id": runId, json },
    load: () => import("./commands/recheck.js"),
  }),
  command({
    name: "log",
    describe: "The iterations of the current run",
    options: {
      json,
      "run-id": runId,
      iteration: { type: "integer", min: 1, describe: "Show one iteration", value: "n" },
      diagram: { type: "boolean", describe: "With --iteration: the machine diagram with the path that iteration took highlighted" },
      tree: {
        type: "string",
        choices: ["before", "after"],
        describe: "With --iteration: print that iteration's tree snapshot (from git where it was committed)",
      },
      format: { type: "string", choices: ["dot", "svg"], default: "dot", describe: "Diagram format" },
      output: { type: "string", describe: "Write the diagram to this file instead of stdout", value: "file" },
    },
    load: () => import("./commands/log.js"),
  }),
  command({
    name: "diagram",
    describe: "The iteration machine as a diagram, generated from the machine itself",
    options: {
      format: { type: "string", choices: ["mermaid", "dot", "json", "svg"], default: "mermaid", describe: "Output format" },
      output: { type: "string", describe: "Write to this file instead of stdout", value: "file" },
    },
    load: () => import("./commands/diagram.js"),
  }),
  command({
    name: "audit",
    describe: "Replay the current run's commits and check every transition against the rules",
    options: {
      json,
      "run-id": runId,
      replay: { type: "boolean", describe: "Also run the guard again, in a clean checkout, on every commit that passed a leaf" },
    },
    load: () => import("./commands/audit.js"),
  }),
  command({
    name: "runs",
    describe:
      "The runs of this repository (every runner/* branch, wherever it is checked out): working / stopped / complete, leaves, last iteration, usage",
    options: { json },
    load: () => import("./commands/runs.js"),
  }),
  command({
    name: "watch",
    describe: "A run in progress, live and read-only: its tree, iteration, agent and guard, usage and budgets (--all: every run of the clone)",
    positional: {
      name: "run-id",
      describe: "The run to watch (default: this checkout's run; `runner runs` lists them)",
      required: false,
      check: runIdProblem,
    },
    options: {
      all: {
        type: "boolean",
        describe: "Every run of the clone, one selected: ↑/↓ select, o opens its report, s stops it after this iteration, q quits",
      },
      plain: { type: "boolean", describe: "One line per event, as into a pipe (the default when stdout is not a terminal)" },
    },
    load: () => import("./commands/watch.js"),
  }),
  command({
    name: "cleanup",
    describe: "Clean up after a run: remove its worktree, and its branch when another branch holds its commits (--force: regardless)",
    positional: { name: "run-id", describe: "The run to clean up (`runner runs` lists them)", required: true, check: runIdProblem },
    options: {
      force: { type: "boolean", describe: "Also drop uncommitted changes in its worktree, and delete a branch whose commits are on no other branch" },
    },
    load: () => import("./commands/cleanup.js"),
  }),
  command({
    name: "report",
    describe: "One self-contained HTML page about a run: outcome, totals, timeline, tree, iterations, how to merge",
    options: {
      "run-id": runId,
      output: { type: "string", describe: "Write the page here (default: .runner/iterations/<run-id>/report.html)", value: "file" },
      open: { type: "boolean", describe: "Open the page with xdg-open / open when available" },
    },
    // (the audit's thread starts before the report's modules load, so that its own start overlaps theirs)
    load: async () => {
      (await import("../adapters/audit/thread-ahead.js")).startAuditThreadAhead();
      return import("./commands/report.js");
    },
  }),
  command({
    name: "mcp",
    describe:
      "Serve this repository's runner to an MCP client (Claude Code, Codex, Gemini CLI, Cursor, VS Code) over stdio: status, show, log, … and a person's edits as tools",
    options: {},
    load: async () => ({ run: (await import("./commands/mcp.js")).serving(COMMANDS) }),
  }),
  command({
    name: "demo",
    describe: "Run the whole loop on a throw-away repository with the built-in demo agent (no network)",
    options: {
      dir: { type: "string", describe: "Create the demo repository here (default: a new temp folder)", value: "dir" },
      json: { type: "boolean", describe: "Stream one JSON event object per line" },
    },
    load: () => import("./commands/demo.js"),
  }),
];
