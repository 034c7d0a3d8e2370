// The commands and their options, declared once: yargs builds the full CLI (help, suggestions,
// errors) from this table, and the fast path parses the common case from the same table.

export type OptionType = "string" | "number" | "boolean";

export interface OptionSpec {
  type: OptionType;
  describe: string;
  default?: string | number | boolean;
  choices?: readonly string[];
}

// Each command module types its own argv; the parser has checked the options against this table.
export type Handler = (argv: never) => Promise<number>;

export interface CommandSpec {
  command: string;
  describe: string;
  options: Record<string, OptionSpec>;
  load: () => Promise<{ run: Handler }>;
}

export const GLOBAL_OPTIONS: Record<string, OptionSpec> = {
  C: { type: "string", default: ".", describe: "Work in this folder instead of the current one" },
  debug: { type: "boolean", default: false, describe: "Show stack traces of errors" },
};

const json = (describe = "Print one JSON document"): OptionSpec => ({ type: "boolean", default: false, describe });
const runId: OptionSpec = { type: "string", describe: "The run (default: from the runner/<id> branch)" };

export const COMMANDS: CommandSpec[] = [
  {
    command: "init",
    describe: "Scaffold .runner/ in this repository (refuses if it exists)",
    options: {
      goal: { type: "string", describe: "The project goal (written to .runner/GOAL.md and the root node)" },
      "max-attempts": { type: "number", default: 3, describe: "max_attempts of the root node" },
      executor: { type: "string", choices: ["codex", "claude", "command", "demo"], default: "codex", describe: "The agent the config starts with" },
    },
    load: () => import("./commands/init.js"),
  },
  {
    command: "validate",
    describe: "Check the tree, the config and node policies; every problem with its JSON path",
    options: { json: json() },
    load: () => import("./commands/validate.js"),
  },
  {
    command: "next",
    describe: "The leaf `runner step` would select, with its path from the root",
    options: { json: json() },
    load: () => import("./commands/next.js"),
  },
  {
    command: "status",
    describe: "The tree with passes and attempts, the next leaf, the run and its iteration count",
    options: { json: json(), "run-id": runId },
    load: () => import("./commands/status.js"),
  },
  {
    command: "start",
    describe: "Create and check out the run branch runner/<id> (clean working tree required)",
    options: { "run-id": { type: "string", describe: "The run id (default: the UTC time as YYYYMMDD-HHMMSS)" } },
    load: () => import("./commands/start.js"),
  },
  {
    command: "step",
    describe: "One iteration: select, run the agent, guard, update, commit",
    options: { "run-id": runId, json: json() },
    load: () => import("./commands/step.js"),
  },
  {
    command: "run",
    describe: "Step until the root passes, a stop condition, or an error",
    options: {
      "max-iterations": { type: "number", describe: "Iterations this run may take (default: [limits] max_iterations)" },
      "halt-on-stuck": { type: "boolean", default: false, describe: "Stop (exit 3) when the next leaf is stuck instead of asking to decompose it" },
      json: json("Stream one JSON event object per line"),
      "run-id": runId,
    },
    load: () => import("./commands/run.js"),
  },
  {
    command: "log",
    describe: "The iterations of the current run",
    options: {
      json: json(),
      "run-id": runId,
      iteration: { type: "number", describe: "Show one iteration" },
      diagram: { type: "boolean", default: false, describe: "With --iteration: the machine diagram with the path that iteration took highlighted" },
      format: { type: "string", choices: ["dot", "svg"], default: "dot", describe: "Diagram format" },
      output: { type: "string", describe: "Write the diagram to this file instead of stdout" },
    },
    load: () => import("./commands/log.js"),
  },
  {
    command: "diagram",
    describe: "The iteration machine as a diagram, generated from the machine itself",
    options: {
      format: { type: "string", choices: ["mermaid", "dot", "json", "svg"], default: "mermaid", describe: "Output format" },
      output: { type: "string", describe: "Write to this file instead of stdout" },
    },
    load: () => import("./commands/diagram.js"),
  },
  {
    command: "audit",
    describe: "Replay the current run's commits and check every transition against the rules",
    options: { json: json(), "run-id": runId },
    load: () => import("./commands/audit.js"),
  },
  {
    command: "report",
    describe: "One self-contained HTML page about a run: outcome, totals, timeline, tree, iterations, how to merge",
    options: {
      "run-id": runId,
      output: { type: "string", describe: "Write the page here (default: .runner/iterations/<run-id>/report.html)" },
      open: { type: "boolean", default: false, describe: "Open the page with xdg-open / open when available" },
    },
    load: () => import("./commands/report.js"),
  },
  {
    command: "demo",
    describe: "Run the whole loop on a throw-away repository with the built-in demo agent (no network)",
    options: {
      dir: { type: "string", describe: "Create the demo repository here (default: a new temp folder)" },
      json: json("Stream one JSON event object per line"),
    },
    load: () => import("./commands/demo.js"),
  },
];

/** `max-attempts` → `maxAttempts`, as yargs names parsed options. */
export function camelCase(name: string): string {
  return name.replace(/-([a-z])/g, (_m, letter: string) => letter.toUpperCase());
}
