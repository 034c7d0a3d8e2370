// The runner's commit messages, both ways (CONTRACT §7, §11): one codec for every subject the
// runner writes — a loop commit, a person's edit, a run's goal — and for the Runner-* trailers, and
// the one place that says what kind of commit a commit is. Whatever reads a commit reads it here.
import type { GuardOutcome } from "../tree/state-update.js";
import { oneLine, safeText } from "../base/text-limits.js";

/** A node id (CONTRACT §3; the tree schema's pattern, checked to agree by test/unit/core.test.ts). */
export const NODE_ID = "[A-Za-z0-9][A-Za-z0-9._-]{0,127}";
/** A run id (CONTRACT §4). */
export const RUN_ID = "[A-Za-z0-9._-]{1,64}";
export const NODE_ID_PATTERN = new RegExp(`^${NODE_ID}$`);

/** What an agent's iteration was, by the paths it changed (src/core/guard/classify.ts decides). */
export type IterationKind = "decompose" | "execute";

// ---------------------------------------------------------------------------------------------
// Loop commits.

/**
 * What a loop commit on a node was: the agent's iteration, classified (CONTRACT §7); a person's
 * re-check of the node by the guard alone (`runner recheck`); or an iteration the run's stop (Ctrl-C)
 * or the runner's death interrupted, recorded as a runner error.
 */
export type NodeCommitKind = IterationKind | "recheck" | "interrupted";

export type CommitSubject =
  | { kind: NodeCommitKind; runId: string; iteration: number; nodeId: string; guard: GuardOutcome }
  | { kind: "repair"; runId: string; iteration: number };

export function formatCommitSubject(subject: CommitSubject): string {
  const head = `chore(loop): run ${subject.runId} iter ${subject.iteration}`;
  if (subject.kind === "repair") return `${head} repair guard=skipped`;
  return `${head} node ${subject.nodeId} ${subject.kind} guard=${subject.guard}`;
}

const LOOP_SUBJECT = new RegExp(
  `^chore\\(loop\\): run (${RUN_ID}) iter ([1-9][0-9]*) (?:node (${NODE_ID}) (decompose|execute|recheck|interrupted) guard=(pass|fail|skipped)|repair guard=skipped)$`,
);

export function parseCommitSubject(line: string): CommitSubject | undefined {
  const match = LOOP_SUBJECT.exec(line);
  if (!match) return undefined;
  const [, runId, iteration, nodeId, kind, guard] = match;
  if (nodeId === undefined) return { kind: "repair", runId: runId!, iteration: Number(iteration) };
  return { kind: kind as NodeCommitKind, runId: runId!, iteration: Number(iteration), nodeId, guard: guard as GuardOutcome };
}

/** An extended regular expression (git log -E --grep) matching this run's loop commit subjects. */
export function loopSubjectPattern(runId: string): string {
  return `^chore\\(loop\\): run ${runId.replace(/[.]/g, "\\.")} iter [0-9]+ `;
}

// ---------------------------------------------------------------------------------------------
// A person's edits.

/** The verbs of a person's edit of the plan, and of the config. */
export const EDIT_VERBS = ["add", "edit", "move", "remove", "unstick", "extend", "import"] as const;
export type EditVerb = (typeof EDIT_VERBS)[number];
export type PersonEditVerb = EditVerb | "config";

export interface PersonEditSubject {
  runId: string | undefined;
  verb: PersonEditVerb;
  /** The node (plan verbs), or the config keys changed, joined by ", " (config). */
  target: string;
}

/** The config keys a config edit's subject names (its target), in order. */
function configKeysOf(subject: PersonEditSubject): string[] {
  return subject.verb === "config" ? subject.target.split(", ") : [];
}

function formatPersonEditSubject(subject: PersonEditSubject): string {
  const run = subject.runId === undefined ? "" : `run ${subject.runId} `;
  const what = subject.verb === "config" ? `config ${subject.target}` : `${subject.verb} node ${subject.target}`;
  return `chore(runner): ${run}edit ${what}`;
}

const CONFIG_KEY = "[A-Za-z0-9_.-]{1,64}";
const PERSON_SUBJECT = new RegExp(
  `^chore\\(runner\\): (?:run (${RUN_ID}) )?edit (?:(${EDIT_VERBS.join("|")}) node (${NODE_ID})|config (${CONFIG_KEY}(?:, ${CONFIG_KEY})*))$`,
);

export function parsePersonEditSubject(line: string): PersonEditSubject | undefined {
  const match = PERSON_SUBJECT.exec(line);
  if (!match) return undefined;
  const [, runId, verb, nodeId, key] = match;
  return verb !== undefined ? { runId, verb: verb as EditVerb, target: nodeId! } : { runId, verb: "config", target: key! };
}

/** The program a person's edit was made through other than the command line: an MCP client, as its `initialize` named itself. */
export interface EditClient {
  name: string;
  version: string;
}

/** The longest Runner-Client value kept: a client's name and version are short; anything longer is cut. */
const CLIENT_LIMIT = 120;

/**
 * The Runner-Client trailer's value: the client's name and version on one line, made safe (they come
 * from the client's own `initialize`: a newline there must not forge another trailer).
 */
function clientTrailerValue(client: EditClient): string {
  return oneLine(safeText(`${client.name} ${client.version}`), CLIENT_LIMIT) || "unnamed";
}

/**
 * The full message: subject, what changed, and the Runner-Edit / Runner-Node / Runner-Person /
 * Runner-Change trailers, and Runner-Client for an edit made through an MCP client (`runner mcp`).
 */
export function formatPersonEditMessage(
  subject: PersonEditSubject,
  person: string,
  changes: readonly string[],
  options: { note?: string; client?: EditClient } = {},
): string {
  const { note, client } = options;
  const trailers = [
    `Runner-Edit: ${subject.verb}`,
    // A config edit names every key it changed, one Runner-Key line each.
    ...(subject.verb === "config" ? configKeysOf(subject).map((key) => `Runner-Key: ${key}`) : [`Runner-Node: ${subject.target}`]),
    `Runner-Person: ${person}`,
    ...changes.map((change) => `Runner-Change: ${change.replace(/\s+/g, " ")}`),
    ...(client ? [`Runner-Client: ${clientTrailerValue(client)}`] : []),
  ];
  const body = note?.trim() ? `${note.trim()}\n\n` : "";
  return `${formatPersonEditSubject(subject)}\n\n${body}A person's edit of ${subject.verb === "config" ? "the config" : "the plan"}, made with \`runner ${subject.verb}\`${client ? " through `runner mcp`" : ""}.\n\n${trailers.join("\n")}\n`;
}

// ---------------------------------------------------------------------------------------------
// A run's goal (`runner start --goal`).

/** The subject of the commit `runner start --goal` makes before the run's first iteration. */
const GOAL_PREFIX = "runner goal: ";

/** `runner start --goal`'s commit: the new goal's title as the subject, the goal as the body. */
export function goalCommitMessage(title: string, goal: string): string {
  return `${GOAL_PREFIX}${title.replace(/\s+/g, " ").trim()}\n\n${goal.trim()}\n`;
}

// ---------------------------------------------------------------------------------------------
// Trailers: the last paragraph of a message when every line of it is `Runner-<Key>: <value>`. A key
// may repeat (Runner-Change, Runner-Key); whoever reads one value of a key takes its first.

export interface Trailers {
  /** Every trailer in order: [key in lower case, value]. */
  lines: [string, string][];
  /** The first value of `key` (lower case), or undefined. */
  first(key: string): string | undefined;
  /** Every value of `key`, in order. */
  all(key: string): string[];
}

/** A message body's text before its trailers, and the trailers. */
export function splitTrailers(body: string): { paragraphs: string[]; trailers: Trailers } {
  const paragraphs = body.trim().split(/\n\n+/);
  const last = (paragraphs[paragraphs.length - 1] ?? "").split("\n");
  const isTrailers = last.length > 0 && last[0] !== "" && last.every((line) => /^Runner-[A-Za-z]+: /.test(line));
  const lines: [string, string][] = isTrailers
    ? last.map((line) => {
        const colon = line.indexOf(": ");
        return [line.slice("Runner-".length, colon).toLowerCase(), line.slice(colon + 2)];
      })
    : [];
  if (isTrailers) paragraphs.pop();
  return {
    paragraphs,
    trailers: {
      lines,
      first: (key) => lines.find(([name]) => name === key)?.[1],
      all: (key) => lines.filter(([name]) => name === key).map(([, value]) => value),
    },
  };
}

/** The trailer values of a message's body by key, the first of each (for readers of single-valued keys). */
export function trailerRecord(trailers: Trailers): Record<string, string> {
  const record: Record<string, string> = {};
  for (const [key, value] of trailers.lines) record[key] ??= value;
  return record;
}

// ---------------------------------------------------------------------------------------------
// What kind of commit a commit is, decided once.

export type CommitKind =
  | { kind: "loop"; subject: CommitSubject }
  | { kind: "person-edit"; subject: PersonEditSubject; made: "runner" | "hand" }
  | { kind: "goal" }
  | { kind: "other" };

/**
 * What a commit says it is: a loop commit of `runId`; a person's edit — made by a runner command
 * when a Runner-Edit trailer names its subject's verb, else by hand with that subject; a run's goal;
 * or anything else (which the audit judges by its content: a person's edit by hand when it changes
 * only the runner's files).
 */
export function commitKindOf(subjectLine: string, body: string, runId: string): CommitKind {
  const loop = parseCommitSubject(subjectLine);
  if (loop) return loop.runId === runId ? { kind: "loop", subject: loop } : { kind: "other" };
  const edit = parsePersonEditSubject(subjectLine);
  if (edit) return { kind: "person-edit", subject: edit, made: splitTrailers(body).trailers.first("edit") === edit.verb ? "runner" : "hand" };
  if (subjectLine.startsWith(GOAL_PREFIX)) return { kind: "goal" };
  return { kind: "other" };
}
