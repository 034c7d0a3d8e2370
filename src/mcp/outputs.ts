// What each tool of `runner mcp` answers (its structuredContent), as zod schemas: the SDK lists them
// as each tool's outputSchema and checks every answer against them. The answers are the command
// modules' own data (what `--json` prints), typed there; src/mcp/tools.ts ties each tool's data type
// to its schema, so the compiler says when the two drift apart.
import * as z from "zod/v4";

const nullable = <T extends z.ZodType>(schema: T) => schema.nullable();
const text = z.string();
const count = z.number().int();

const usage = z.object({
  input_tokens: z.number(),
  cached_input_tokens: z.number(),
  output_tokens: z.number(),
  reasoning_tokens: nullable(z.number()),
  cost_usd: nullable(z.number()),
});

const inProgress = z
  .object({
    command: text,
    pid: count,
    host: text,
    since: text,
    checked: z.boolean(),
    iteration: nullable(z.object({ run_id: text, number: count, node_id: nullable(text), step_kind: text, started_at: text })),
  })
  .describe("The runner working in the repository now (from its lock and journal)");

const statusNode = z.object({
  id: text,
  title: text,
  passes: z.boolean(),
  attempts: count,
  max_attempts: count,
  get children(): z.ZodArray<typeof statusNode> {
    return z.array(statusNode);
  },
});

/** The run's failed iterations by kind (src/core/commit/iteration-outcome.ts). */
const failureCounts = z.object({ total: count, guard: count, retry: count, runner_error: count, invalid_tree: count, other: count });
const failureKind = z.enum(["runner_error", "invalid_tree", "guard", "retry", "other"]);

export const statusOutput = z.object({
  run_id: nullable(text),
  branch: nullable(text),
  iterations: count.describe("Iterations the run has committed"),
  failures: failureCounts,
  usage: nullable(usage),
  complete: z.boolean(),
  next: nullable(z.object({ id: text, path: z.array(text), stuck: z.boolean() })),
  nodes: z.object({ total: count, passed: count }),
  leaves: z.object({ passed: count, total: count }),
  in_progress: nullable(inProgress),
  tree: statusNode,
});

export const nextOutput = z.object({
  complete: z.boolean(),
  node: nullable(z.object({ id: text, title: text, goal: text, acceptance: z.array(text), attempts: count, max_attempts: count })),
  path: z.array(text),
  stuck: z.boolean().optional(),
});

const logEntry = z.object({
  iteration: count,
  commit: text,
  node_id: nullable(text),
  kind: text,
  agent_status: nullable(text),
  guard_outcome: text,
  attempts: nullable(text),
  duration_ms: nullable(z.number()),
  summary: text,
  failure: nullable(text),
  runner_error: nullable(text),
  usage: nullable(usage),
  agent_error: nullable(text),
  limit: nullable(z.object({ kind: text, resets_at: nullable(text), message: text })),
  session_id: nullable(text),
  failure_text: nullable(text),
  guard_output_tail: z.array(text),
  guard_log: nullable(z.object({ path: text, tail: z.array(text) })),
  tree_before: nullable(text).optional(),
  tree_after: nullable(text).optional(),
  tests_changed: z.array(text),
  outcome: text.describe("What it came to in words: `agent said done`, `runner error (output parse)`, `interrupted`, …"),
  failed: nullable(failureKind).describe("Why it counts as failed, or null"),
});

const personEditEntry = z.object({
  commit: text,
  subject: text,
  made: z.enum(["runner", "hand"]),
  verb: nullable(text),
  target: nullable(text),
  author: nullable(text),
  after_iteration: count,
});

const nodeState = z.enum(["passed", "open", "stuck"]);

export const showOutput = z.object({
  id: text,
  title: text,
  goal: text,
  acceptance: z.array(text),
  passes: z.boolean(),
  attempts: count,
  max_attempts: count,
  state: nodeState,
  next: z.boolean(),
  path: z.array(text),
  children: z.array(z.object({ id: text, title: text, passes: z.boolean(), attempts: count, max_attempts: count, state: nodeState })),
  run_id: nullable(text),
  history: z.array(logEntry),
  person_edits: z.array(personEditEntry),
  next_commands: z.array(text).optional(),
});

export const logOutput = z.object({
  run_id: text,
  iteration: logEntry.optional().describe("With `iteration`: that iteration in full"),
  iterations: z.array(logEntry).optional().describe("Without `iteration`: every iteration of the run"),
  person_edits: z.array(personEditEntry).optional(),
  usage: nullable(usage).optional(),
  in_progress: nullable(inProgress).optional(),
});

export const validateOutput = z.object({
  valid: z.boolean(),
  problems: z.array(z.object({ file: text, path: text, message: text })),
});

export const auditOutput = z.object({
  run_id: text,
  clean: z.boolean(),
  loop_commits: count,
  other_commits: count,
  replayed: count.optional(),
  violations: z.array(z.object({ commit: text, iteration: nullable(count), message: text })),
  person_edits: z.array(personEditEntry.omit({ after_iteration: true }).extend({ valid: z.boolean(), problems: z.array(text) })),
});

export const reportOutput = z.object({ path: text.describe("The page written"), run_id: text });

export const runsOutput = z.object({
  runs: z.array(
    z.object({
      run_id: text,
      branch: text,
      state: z.enum(["working", "stopped", "complete"]),
      worktree: nullable(text),
      leaves: nullable(z.object({ passed: count, total: count })),
      last_iteration: nullable(z.object({ number: count, node_id: nullable(text), kind: text, at: text })),
      usage: nullable(usage),
      runner: nullable(z.object({ pid: count, command: text })),
    }),
  ),
  other_worktrees: z.array(z.object({ path: text, branch: nullable(text), main: z.boolean() })),
});

export const editOutput = z.object({
  committed: z.boolean().describe("Whether a commit was made (false: nothing to change)"),
  message: text.describe("What changed and the commit, or why nothing did"),
  changes: z.array(text),
  commit: nullable(text),
  subject: nullable(text),
  run_id: nullable(text),
  person: nullable(text),
});

export const recheckOutput = z.object({
  passed: z.boolean().describe("Whether the guard passed the leaf"),
  outcome: text,
  message: text,
  run_id: nullable(text),
  iteration: nullable(count),
  node_id: nullable(text),
  kind: nullable(text),
  agent_status: nullable(text),
  guard_outcome: nullable(text),
  attempts_after: nullable(count),
  passes_after: nullable(z.boolean()),
  commit: nullable(text),
  usage: nullable(usage),
  path: z.array(text),
  guard_output_tail: z.array(text),
  tests_changed: z.array(text),
});
