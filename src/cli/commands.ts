// The commands and their options, declared once: the parser, the help text and each handler's
// argument type come from this table. Command modules are loaded only when called.
import { AGENTS } from "../agents/registry.js";
import { command, type OptionSpec } from "./command-table.js";

export const GLOBAL_OPTIONS = {
  C: { type: "string", default: ".", describe: "Work in this folder instead of the current one", value: "dir" },
  debug: { type: "boolean", describe: "Show stack traces of errors" },
} as const satisfies Record<string, OptionSpec>;

const json = { type: "boolean", describe: "Print one JSON document" } as const;
const runId = { type: "string", describe: "The run (default: from the runner/<id> branch)", value: "id" } as const;

export const COMMANDS = [
  command({
    name: "init",
    describe: "Scaffold .runner/ in this repository (refuses if it exists)",
    options: {
      goal: { type: "string", describe: "The project goal (written to .runner/GOAL.md and the root node)", value: "text" },
      "max-attempts": { type: "integer", default: 3, min: 1, describe: "max_attempts of the root node", value: "n" },
      executor: {
        type: "string",
        choices: [...AGENTS.map((agent) => agent.kind), "command", "demo"],
        default: "codex",
        describe: "The agent the config starts with",
      },
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
    name: "doctor",
    describe: "Check everything a run needs before anything is spent: config, tree, the agent's and the guard's programs, the guard's recipe",
    options: { json },
    load: () => import("./commands/doctor.js"),
  }),
  command({
    name: "start",
    describe: "Create and check out the run branch runner/<id> (clean working tree required)",
    options: {
      "run-id": { type: "string", describe: "The run id (default: the UTC time as YYYYMMDD-HHMMSS)", value: "id" },
      from: { type: "string", describe: "Start from this branch or commit (default: HEAD; needed on another run's branch)", value: "ref" },
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
    name: "report",
    describe: "One self-contained HTML page about a run: outcome, totals, timeline, tree, iterations, how to merge",
    options: {
      "run-id": runId,
      output: { type: "string", describe: "Write the page here (default: .runner/iterations/<run-id>/report.html)", value: "file" },
      open: { type: "boolean", describe: "Open the page with xdg-open / open when available" },
    },
    load: () => import("./commands/report.js"),
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
