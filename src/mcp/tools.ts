// The tools of `runner mcp`: each one a command of the command table, its input that command's
// options (src/mcp/tool-input.ts), its answer the data the command module computes for its own
// printer (what `--json` prints). A person's edit goes through the very function `runner add …`
// calls — the same checks, the same lock (refused while `runner run` works unless `wait`), the same
// refusal inside an agent's containment, the same commit — with the MCP client named in its
// Runner-Client trailer. The command modules are imported when a tool is called, as the command
// table imports them: a module imported both ways would be bundled with a namespace object that
// every command's start-up then pays for (`runner next` included).
import type { ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import type * as z from "zod/v4";
import type { EditOutcome, EditRequest } from "../cli/commands/steer.js";
import type { EditClient, PersonEditVerb } from "../core/commit/commit-message.js";
import { RefusalError } from "../errors.js";
import { exitCodeOfStep, EXIT } from "../exit-codes.js";
import {
  auditOutput,
  editOutput,
  logOutput,
  nextOutput,
  recheckOutput,
  reportOutput,
  runsOutput,
  showOutput,
  statusOutput,
  validateOutput,
} from "./outputs.js";

/** What a tool call knows besides its arguments. */
export interface ToolContext {
  /** The folder the repository is found from (`runner mcp`'s -C). */
  folder: string;
  /** The MCP client, as its `initialize` named it. */
  client: () => EditClient;
  /** Aborted when the client cancels the call or goes away. */
  signal: AbortSignal;
}

export interface Tool<Output extends z.ZodObject = z.ZodObject> {
  name: string;
  title: string;
  description: string;
  /** The command of the command table whose options are the tool's input. */
  command: string;
  /** Options a tool does not take (what only a terminal needs). */
  omit?: string[];
  output: Output;
  annotations: ToolAnnotations;
  /** Whether it takes the repository lock: the server runs such calls one at a time (the lock names this one process). */
  exclusive?: boolean;
  /** The answer (the command module's data); a refusal throws one of the runner's errors, whose sentence the client gets. */
  call: (args: Record<string, unknown>, context: ToolContext) => Promise<z.input<Output>>;
}

/** A tool, its answer's type checked against its output schema. */
function tool<Output extends z.ZodObject>(definition: Tool<Output>): Tool {
  return definition as unknown as Tool;
}

const READ_ONLY: ToolAnnotations = { readOnlyHint: true, openWorldHint: false };
type RunArg = { runId?: string };

/** How an MCP client waits for a run, in the sentence that refuses an edit while one works. */
const WAIT_HINT = "call the tool again with `wait: true`";

async function editAnswer(outcome: EditOutcome): Promise<z.input<typeof editOutput>> {
  const { describeEdit } = await import("../cli/commands/steer.js");
  const message = describeEdit(outcome).join(" ");
  if (!outcome.committed) return { committed: false, message, changes: [], commit: null, subject: null, run_id: null, person: null };
  const { changes, commit } = outcome;
  return { committed: true, message, changes, commit: commit.sha, subject: commit.subject, run_id: commit.runId ?? null, person: commit.person };
}

const EDIT_DESCRIPTIONS: Record<PersonEditVerb, { title: string; description: string; destructive: boolean }> = {
  add: {
    title: "Add a node",
    description:
      "A person's edit: add an open node (or a subtree from_file) under an open node; its id is derived from the title unless given. Checked, then committed in your git name with the MCP client named.",
    destructive: false,
  },
  edit: {
    title: "Edit a node",
    description:
      "A person's edit: change an open node's title, goal, acceptance, order or max_attempts (never below its attempts). Checked and committed.",
    destructive: true,
  },
  move: {
    title: "Move a node",
    description: "A person's edit: move an open node with no passed node under it under another open node (no cycle). Checked and committed.",
    destructive: true,
  },
  remove: {
    title: "Remove a node",
    description: "A person's edit: remove an open node whose subtree holds no passed node. Checked and committed.",
    destructive: true,
  },
  unstick: {
    title: "Unstick a leaf",
    description:
      "A person's edit: give a stuck leaf more attempts (max_attempts rises by `attempts`, default its max_attempts again; the attempts spent stay).",
    destructive: false,
  },
  extend: {
    title: "Extend a finished run",
    description: "A person's edit after the root passed: a new root over the passed tree (unchanged) and the new work as an open leaf.",
    destructive: false,
  },
  import: {
    title: "Import a plan",
    description:
      "A person's edit: add a plan's nodes (a Markdown checklist, ralph's prd.json, task-master's tasks.json; `file` relative to the repository) under an open node (default: the root), as one commit.",
    destructive: false,
  },
  config: {
    title: "Set or unset config keys",
    description:
      'A person\'s edit of .runner/state/config.toml: set and unset keys in one edit (e.g. executor.kind to "command" with executor.command), the whole file checked, then committed.',
    destructive: true,
  },
};

/** The tool of a person's edit: the command line's own function, with the MCP client and the call's cancellation. */
function personEditTool(verb: PersonEditVerb): Tool {
  const { title, description, destructive } = EDIT_DESCRIPTIONS[verb];
  return tool({
    name: verb,
    title,
    description: `${description} While \`runner run\` works it is refused, unless \`wait\` is true: then it is made between two iterations.`,
    command: verb,
    output: editOutput,
    annotations: { readOnlyHint: false, destructiveHint: destructive, idempotentHint: false, openWorldHint: false },
    exclusive: true,
    call: async (args, { folder, client, signal }) => {
      const request: EditRequest = { folder, wait: args.wait === true, waitHint: WAIT_HINT, signal, client: client() };
      const { PERSON_EDITS } = await import("../cli/commands/steer.js");
      const make = PERSON_EDITS[verb] as (request: EditRequest, args: Record<string, unknown>) => Promise<EditOutcome>;
      return editAnswer(await make(request, args));
    },
  });
}

export const TOOLS: Tool[] = [
  tool({
    name: "status",
    title: "Run status",
    description:
      "The task tree with passes and attempts, leaves passed, the next leaf, the run and its iteration count, the agents' usage, and a runner at work in the repository (as `runner status --json`).",
    command: "status",
    omit: ["json"],
    output: statusOutput,
    annotations: READ_ONLY,
    call: async (args, { folder }) => {
      const { readStatus } = await import("../cli/commands/status.js");
      return (await readStatus(folder, (args as RunArg).runId)).status;
    },
  }),
  tool({
    name: "next",
    title: "Next leaf",
    description: "The leaf `runner step` would select next, with its goal, acceptance, attempts and path from the root (as `runner next --json`).",
    command: "next",
    omit: ["json"],
    output: nextOutput,
    annotations: READ_ONLY,
    call: async (_args, { folder }) => (await import("../cli/commands/next.js")).nextLeaf(folder),
  }),
  tool({
    name: "show",
    title: "Show a node",
    description:
      "One node: title, goal, acceptance, attempts, path and children, and this run's iterations on it with their failures and the guard's last lines, and a person's edits of it (as `runner show <node-id> --json`).",
    command: "show",
    omit: ["json"],
    output: showOutput,
    annotations: READ_ONLY,
    call: async (args, { folder }) => {
      const { nodeId, runId } = args as RunArg & { nodeId: string };
      const { showNode } = await import("../cli/commands/show.js");
      return (await showNode(folder, nodeId, runId)).report;
    },
  }),
  tool({
    name: "log",
    title: "Iteration log",
    description:
      "With `iteration`: that iteration in full — node, kind, the agent's status and summary, the guard's outcome and last lines, the failure told to the next iteration, usage, tree snapshots (as `runner log --iteration N --json`). Without: every iteration of the run and a person's edits (as `runner log --json`).",
    command: "log",
    omit: ["json", "diagram", "tree", "format", "output"],
    output: logOutput,
    annotations: READ_ONLY,
    call: async (args, { folder }) => {
      const { runId, iteration } = args as RunArg & { iteration?: number };
      const { readIteration, readRunLog } = await import("../cli/commands/log.js");
      if (iteration === undefined) return readRunLog(folder, runId);
      const { runId: run, entry } = await readIteration(folder, runId, iteration);
      return { run_id: run, iteration: entry };
    },
  }),
  tool({
    name: "validate",
    title: "Validate",
    description:
      "Checks the tree, the config, node policies and prompt templates; every problem with its file and JSON path (as `runner validate --json`).",
    command: "validate",
    omit: ["json"],
    output: validateOutput,
    annotations: READ_ONLY,
    call: async (_args, { folder }) => {
      const { validateProject } = await import("../cli/commands/validate.js");
      const { valid, problems } = await validateProject(folder);
      return { valid, problems };
    },
  }),
  tool({
    name: "audit",
    title: "Audit the run",
    description:
      "Replays the run's commits and checks every transition against the rules; lists violations and a person's edits, each judged (as `runner audit --json`). `replay` runs the guard again, in a clean checkout, on every commit that passed a leaf.",
    command: "audit",
    omit: ["json"],
    output: auditOutput,
    annotations: READ_ONLY,
    call: async (args, { folder }) => {
      const { runId, replay } = args as RunArg & { replay: boolean };
      const { auditRun } = await import("../cli/commands/audit.js");
      return auditRun(folder, runId, replay);
    },
  }),
  tool({
    name: "report",
    title: "Write the report",
    description:
      "Writes one self-contained HTML page about the run (outcome, totals, timeline, tree, every iteration, how to merge) and returns its path (default .runner/iterations/<run-id>/report.html).",
    command: "report",
    omit: ["open"],
    output: reportOutput,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    call: async (args, { folder }) => {
      const { runId, output } = args as RunArg & { output?: string };
      const { writeReport } = await import("../cli/commands/report.js");
      return writeReport(folder, runId, output);
    },
  }),
  tool({
    name: "runs",
    title: "Runs",
    description:
      "Every run of the repository (each runner/* branch, wherever it is checked out): working / stopped / complete, leaves passed, the last iteration, usage (as `runner runs --json`).",
    command: "runs",
    omit: ["json"],
    output: runsOutput,
    annotations: READ_ONLY,
    call: async (_args, { folder }) => {
      const { listRuns } = await import("../cli/commands/runs.js");
      const { runs, other_worktrees } = await listRuns(folder);
      return { runs, other_worktrees };
    },
  }),
  ...(["add", "edit", "move", "remove", "unstick", "extend", "import", "config"] as const).map(personEditTool),
  tool({
    name: "recheck",
    title: "Re-check a leaf",
    description:
      "The guard alone judges an open leaf (default: the next one) whose work is already on the branch: a green guard passes it, a red one leaves it open (no attempt counted); committed like an iteration. Refused while `runner run` works.",
    command: "recheck",
    omit: ["json"],
    output: recheckOutput,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    exclusive: true,
    call: async (args, { folder }) => {
      const { nodeId, runId } = args as RunArg & { nodeId?: string };
      const [{ recheckLeaf }, { describeStep, stepJson }] = await Promise.all([
        import("../cli/commands/recheck.js"),
        import("../cli/step-report.js"),
      ]);
      const result = await recheckLeaf(folder, nodeId, runId);
      if (result.outcome === "crashed") throw result.error;
      // Refused, or an iteration that ended in a runner error: the client gets the sentence as an error.
      if (exitCodeOfStep(result.outcome) !== EXIT.ok) throw new RefusalError(describeStep(result));
      return { passed: result.outcome === "committed" && result.record?.guard === "pass", ...stepJson(result) };
    },
  }),
];
