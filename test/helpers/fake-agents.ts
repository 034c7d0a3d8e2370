// Fake `codex` and `claude` executables for the adapter tests: node scripts written into a temp
// `bin/` folder that the test puts first on PATH. Each checks the argv it receives against what the
// test expects (expect.json in a state folder outside the repository), records it (calls.jsonl),
// acts like an agent on the task tree (decomposes the root into three leaves, then writes one file
// per leaf), prints its output in the real tool's format (Codex: `exec --json` JSONL events;
// Claude: `--output-format stream-json` events) and answers the way the real tool does (Codex: the
// final message in the --output-last-message file; Claude: `structured_output` in the result event).
// A fake that finds a wrong argv records the problems, says so on stderr and exits 2 without an
// answer, so the iteration fails visibly.
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { tempDir } from "./sandbox.js";

/** What the fakes expect and how they behave (written to <stateDir>/expect.json). */
export interface FakeExpectations {
  codex?: {
    sandbox: string;
    model?: string;
    profile?: string;
    /** The -c overrides after the runner's own `allow_login_shell=false` (always the first). */
    overrides: string[];
    extraArgs: string[];
    /** isolation = "clean": --ignore-user-config --ephemeral. */
    clean?: boolean;
  };
  claude?: {
    permissionMode: string;
    /** The whole --allowedTools list (the guard's rule first). */
    allowedTools: string[];
    maxTurns?: number;
    maxBudgetUsd?: number;
    /** Take --max-budget-usd without checking it (the test reads it from the recorded calls). */
    anyBudget?: boolean;
    model?: string;
    extraArgs: string[];
    /** isolation = "clean": --setting-sources project --strict-mcp-config --no-session-persistence and the env switch. */
    clean?: boolean;
    /** Bytes of assistant events printed before the result event (output cap test). */
    noiseBytes?: number;
    /** Leaves whose answer comes only as the result text (a ```json fence), without structured_output. */
    resultTextOnly?: string[];
  };
  /** The agent output schema file the fakes compare against (without $schema and $id, as the real tools need it). */
  schemaFile: string;
  /** The folder that must come first on the agent's PATH (the runner's `just`). */
  pathFirst?: string;
  /** Fail every call as the real tool does when the model API answers 401 (Codex: turn.failed, exit 1; Claude: is_error result, exit 1). */
  failAuth?: boolean;
  /**
   * Answer the first `calls` calls as the real tool does when a usage limit is reached, with the
   * reset `resetInSeconds` from the call (Codex: turn.failed "You’ve hit your usage limit … try again
   * at 3:05 PM."; Claude: a rejected rate_limit_event with resetsAt, then a 429 result), exit 1.
   */
  limit?: { calls: number; resetInSeconds: number };
  /** The three leaves the root is split into. */
  leaves: string[];
}

/** One recorded invocation of a fake. */
export interface FakeCall {
  tool: "codex" | "claude";
  argv: string[];
  cwd: string;
  nodeId: string;
  iteration: string;
  stdin: string;
  problems: string[];
}

// The shared body of both fakes; TOOL is set by the first line.
const FAKE_BODY =
  String.raw`
import { appendFileSync, existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import path from "node:path";

const stateDir = process.env.FAKE_AGENT_STATE;
const expect = JSON.parse(readFileSync(path.join(stateDir, "expect.json"), "utf8"));
const args = process.argv.slice(2);
const problems = [];
const check = (ok, message) => { if (!ok) problems.push(message); };
const schemaText = readFileSync(expect.schemaFile, "utf8");
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

/** Takes the value after a flag, once; records a problem when the flag is missing or repeated. */
const rest = [...args];
function take(flag, { optional = false, variadic = false, repeatable = false } = {}) {
  const at = rest.indexOf(flag);
  if (at === -1) { if (!optional) problems.push("missing " + flag); return undefined; }
  if (!repeatable && rest.indexOf(flag, at + 1) !== -1) problems.push(flag + " given twice");
  if (variadic) {
    let end = at + 1;
    while (end < rest.length && !rest[end].startsWith("-")) end++;
    const values = rest.slice(at + 1, end);
    rest.splice(at, end - at);
    return values;
  }
  const value = rest[at + 1];
  rest.splice(at, 2);
  return value;
}
function takeSwitch(flag) {
  const at = rest.indexOf(flag);
  if (at === -1) { problems.push("missing " + flag); return; }
  rest.splice(at, 1);
}

let stdin = "";
try { stdin = readFileSync(0, "utf8"); } catch { stdin = ""; }
const nodeId = process.env.RUNNER_NODE_ID ?? "";
let repo = process.cwd();
let lastMessageFile;

if (TOOL === "codex") {
  const e = expect.codex;
  check(args[0] === "exec", "argv[0] is " + args[0] + ", not exec");
  check(args[args.length - 1] === "-", "the last argument is not - (prompt on stdin)");
  rest.shift();
  rest.pop();
  takeSwitch("--json");
  takeSwitch("--skip-git-repo-check");
  const login = args.indexOf("allow_login_shell=false");
  check(login > 0 && args[login - 1] === "-c", "no -c allow_login_shell=false");
  if (login > 0) rest.splice(rest.indexOf("allow_login_shell=false") - 1, 2);
  for (const flag of ["--ignore-user-config", "--ephemeral"]) {
    if (e.clean) takeSwitch(flag);
    else check(!args.includes(flag), flag + " without isolation = clean");
  }
  const dir = take("-C");
  check(dir !== undefined && existsSync(dir) && realpathSync(dir) === realpathSync(process.cwd()), "-C " + dir + " is not the repository " + process.cwd());
  if (dir) repo = dir;
  const sandbox = take("--sandbox");
  check(sandbox === e.sandbox, "--sandbox " + sandbox + ", expected " + e.sandbox);
  check(!args.includes("danger-full-access") || e.sandbox === "danger-full-access", "danger-full-access without the config asking for it");
  const schema = take("--output-schema");
  check(schema !== undefined && path.isAbsolute(schema) && existsSync(schema), "--output-schema " + schema + " is not an existing absolute path");
  if (schema && existsSync(schema)) check(same(JSON.parse(readFileSync(schema, "utf8")), JSON.parse(schemaText)), "--output-schema is not the agent output schema");
  if (schema && existsSync(schema)) check(!("$schema" in JSON.parse(readFileSync(schema, "utf8"))), "--output-schema has $schema");
  lastMessageFile = take("--output-last-message");
  check(lastMessageFile !== undefined && path.isAbsolute(lastMessageFile) && existsSync(path.dirname(lastMessageFile)), "--output-last-message " + lastMessageFile + " is not in an existing folder");
  check(take("-m", { optional: e.model === undefined }) === e.model, "-m does not match the config");
  check(take("-p", { optional: e.profile === undefined }) === e.profile, "-p does not match the config");
  const overrides = [];
  const c = { optional: true, repeatable: true };
  for (let value = take("-c", c); value !== undefined; value = take("-c", c)) overrides.push(value);
  check(same(overrides, e.overrides), "-c overrides " + JSON.stringify(overrides) + ", expected " + JSON.stringify(e.overrides));
  check(same(rest, e.extraArgs), "left over " + JSON.stringify(rest) + ", expected extra_args " + JSON.stringify(e.extraArgs));
  if (e.extraArgs.length > 0) check(same(args.slice(args.length - 1 - e.extraArgs.length, -1), e.extraArgs), "extra_args are not right before -");
} else {
  const e = expect.claude;
  check(args[0] === "-p", "argv[0] is " + args[0] + ", not -p");
  rest.shift();
  check(take("--output-format") === "stream-json", "--output-format is not stream-json");
  takeSwitch("--verbose");
  const schema = take("--json-schema");
  let parsed;
  try { parsed = JSON.parse(schema ?? ""); } catch { parsed = undefined; }
  check(parsed !== undefined && same(parsed, JSON.parse(schemaText)), "--json-schema is not the agent output schema as JSON text");
  // The real Claude Code exits 1 before any request: "--json-schema is not a valid JSON Schema: no schema with key or ref …".
  check(parsed === undefined || (!("$schema" in parsed) && !("$id" in parsed)), "--json-schema has $schema or $id");
  const mode = take("--permission-mode");
  check(mode === e.permissionMode, "--permission-mode " + mode + ", expected " + e.permissionMode);
  const tools = take("--allowedTools", { optional: e.allowedTools.length === 0, variadic: true }) ?? [];
  check(same(tools, e.allowedTools), "--allowedTools " + JSON.stringify(tools) + ", expected " + JSON.stringify(e.allowedTools));
  if (e.clean) {
    check(take("--setting-sources") === "project", "--setting-sources is not project");
    takeSwitch("--strict-mcp-config");
    takeSwitch("--no-session-persistence");
    check(process.env.CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC === "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC is not 1");
  } else {
    for (const flag of ["--setting-sources", "--strict-mcp-config", "--no-session-persistence"]) check(!args.includes(flag), flag + " without isolation = clean");
  }
  const turns = take("--max-turns", { optional: e.maxTurns === undefined });
  check(turns === (e.maxTurns === undefined ? undefined : String(e.maxTurns)), "--max-turns " + turns + ", expected " + e.maxTurns);
  const budget = take("--max-budget-usd", { optional: e.maxBudgetUsd === undefined });
  if (!e.anyBudget) check(budget === (e.maxBudgetUsd === undefined ? undefined : String(e.maxBudgetUsd)), "--max-budget-usd " + budget + ", expected " + e.maxBudgetUsd);
  check(take("--model", { optional: e.model === undefined }) === e.model, "--model does not match the config");
  check(same(rest, e.extraArgs), "left over " + JSON.stringify(rest) + ", expected extra_args " + JSON.stringify(e.extraArgs));
  if (e.extraArgs.length > 0) check(same(args.slice(-e.extraArgs.length), e.extraArgs), "extra_args are not last");
}
if (expect.pathFirst) check((process.env.PATH ?? "").split(":")[0] === expect.pathFirst, "PATH does not start with " + expect.pathFirst + ": " + process.env.PATH);
check(stdin.length > 0 && stdin.includes(nodeId), "the prompt on stdin does not name node " + nodeId);
check(process.env.RUNNER_OUTPUT_FILE === undefined || lastMessageFile === undefined || lastMessageFile === process.env.RUNNER_OUTPUT_FILE, "--output-last-message is not RUNNER_OUTPUT_FILE");

appendFileSync(path.join(stateDir, "calls.jsonl"), JSON.stringify({
  tool: TOOL, argv: args, cwd: process.cwd(), nodeId, iteration: process.env.RUNNER_ITERATION ?? "", stdin, problems,
}) + "\n");
const callNumber = readFileSync(path.join(stateDir, "calls.jsonl"), "utf8").split("\n").filter(Boolean).length;
if (problems.length > 0) {
  process.stderr.write(TOOL + " (fake): wrong invocation: " + problems.join("; ") + "\n");
  process.exitCode = 2;
} else if (expect.limit && callNumber <= expect.limit.calls) {
  // What the real tools print when a usage limit is reached (docs/agents.md).
  const line = (event) => process.stdout.write(JSON.stringify(event) + "\n");
  const reset = new Date(Date.now() + expect.limit.resetInSeconds * 1000);
  if (TOOL === "codex") {
    // codex-rs format_retry_timestamp: "%-I:%M %p", local time.
    const hours = reset.getHours();
    const at = ((hours % 12) || 12) + ":" + String(reset.getMinutes()).padStart(2, "0") + " " + (hours < 12 ? "AM" : "PM");
    const message = "You\u2019ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/settings/usage to purchase more credits or try again at " + at + ".";
    line({ type: "thread.started", thread_id: "0199a213-81c0-7800-8aa1-bbab2a035a53" });
    line({ type: "turn.started" });
    line({ type: "error", message });
    line({ type: "turn.failed", error: { message } });
    writeFileSync(lastMessageFile, "");
  } else {
    line({ type: "system", subtype: "init", session_id: "8e5c3c2e", model: "claude-opus-5-5", permissionMode: expect.claude.permissionMode });
    line({ type: "rate_limit_event", rate_limit_info: { status: "rejected", resetsAt: Math.floor(reset.getTime() / 1000), rateLimitType: "five_hour" }, session_id: "8e5c3c2e" });
    line({ type: "result", subtype: "success", is_error: true, api_error_status: 429, terminal_reason: "api_error", num_turns: 1, result: "API Error: Request rejected (429) \u00b7 Usage limit reached",
      session_id: "8e5c3c2e", total_cost_usd: 0, usage: { input_tokens: 0, output_tokens: 0 } });
  }
  process.exitCode = 1;
} else if (expect.failAuth) {
  // What the real tools print when the model API answers 401 (docs/agents.md), key included to be redacted.
  const key = process.env.OPENAI_API_KEY ?? "";
  const line = (event) => process.stdout.write(JSON.stringify(event) + "\n");
  if (TOOL === "codex") {
    line({ type: "thread.started", thread_id: "0199a213-81c0-7800-8aa1-bbab2a035a53" });
    line({ type: "turn.started" });
    const message = "unexpected status 401 Unauthorized: Incorrect API key provided: " + key + ", url: http://127.0.0.1:9/v1/responses, request id: req_mock";
    for (let i = 1; i <= 5; i++) line({ type: "error", message: "Reconnecting... " + i + "/5 (" + message + ")" });
    line({ type: "turn.failed", error: { message } });
    writeFileSync(lastMessageFile, "");
  } else {
    line({ type: "system", subtype: "init", session_id: "8e5c3c2e", model: "claude-opus-5-5", permissionMode: expect.claude.permissionMode });
    line({ type: "system", subtype: "api_retry", attempt: 1, max_retries: 1, retry_delay_ms: 600, error_status: 401, error: "authentication_failed" });
    line({ type: "assistant", message: { id: "x", model: "<synthetic>", content: [{ type: "text", text: "Invalid API key · Fix external API key" }] }, is_api_error_message: true });
    line({ type: "result", subtype: "success", is_error: true, api_error_status: 401, terminal_reason: "api_error", num_turns: 1, result: "Invalid API key · Fix external API key",
      session_id: "8e5c3c2e", total_cost_usd: 0, usage: { input_tokens: 0, output_tokens: 0 } });
  }
  process.exitCode = 1;
} else {
  // Act like an agent: split the root into the leaves, or write the leaf's file.
  const treeFile = path.join(repo, ".runner", "state", "tree.json");
  const tree = JSON.parse(readFileSync(treeFile, "utf8"));
  const find = (n, id) => { if (n.id === id) return n; for (const c of n.children) { const f = find(c, id); if (f) return f; } return undefined; };
  const node = find(tree.root, nodeId);
  let answer;
  if (node && node.id === tree.root.id && node.children.length === 0) {
    node.children = expect.leaves.map((id, order) => ({ id, order, title: "Leaf " + id, goal: "Write src/" + id + ".txt", acceptance: ["src/" + id + ".txt says ok " + id],
      passes: false, attempts: 0, max_attempts: 3, children: [] }));
    writeFileSync(treeFile, JSON.stringify(tree, null, 2) + "\n");
    answer = { status: "decomposed", summary: "Split " + nodeId + " into " + expect.leaves.join(", ") };
  } else if (node) {
    mkdirSync(path.join(repo, "src"), { recursive: true });
    writeFileSync(path.join(repo, "src", nodeId + ".txt"), "ok " + nodeId + "\n");
    answer = { status: "done", summary: "Wrote src/" + nodeId + ".txt" };
  } else {
    answer = { status: "retry", summary: "no node " + nodeId };
  }
  const secret = process.env.OPENAI_API_KEY ?? "";
  if (TOOL === "codex") {
    const line = (event) => process.stdout.write(JSON.stringify(event) + "\n");
    line({ type: "thread.started", thread_id: "0199a213-81c0-7800-8aa1-bbab2a035a53" });
    line({ type: "turn.started" });
    line({ type: "item.completed", item: { id: "item_0", type: "reasoning", text: "**Looking at node " + nodeId + "**" } });
    line({ type: "item.completed", item: { id: "item_1", type: "command_execution", command: "bash -lc 'echo key " + secret + "'", aggregated_output: "key " + secret + "\n", exit_code: 0, status: "completed" } });
    line({ type: "item.completed", item: { id: "item_2", type: "agent_message", text: JSON.stringify(answer) } });
    line({ type: "turn.completed", usage: { input_tokens: 2410, cached_input_tokens: 1024, output_tokens: 96, reasoning_output_tokens: 8 } });
    writeFileSync(lastMessageFile, JSON.stringify(answer));
  } else {
    const e = expect.claude;
    const line = (event) => process.stdout.write(JSON.stringify(event) + "\n");
    const session = "8e5c3c2e-4f3b-4a7e-9d43-1f0e6f9d2a10";
    line({ type: "system", subtype: "init", cwd: process.cwd(), session_id: session, tools: ["Read", "Edit", "Bash"], model: e.model ?? "claude-sonnet", permissionMode: e.permissionMode, apiKeySource: "none" });
    line({ type: "assistant", message: { id: "msg_01", type: "message", role: "assistant", content: [{ type: "text", text: "Working on " + nodeId + " (key " + secret + ")" }] }, session_id: session });
    if (e.noiseBytes) {
      const text = "x".repeat(1000);
      for (let written = 0; written < e.noiseBytes; written += text.length + 120) {
        line({ type: "assistant", message: { id: "msg_02", type: "message", role: "assistant", content: [{ type: "text", text }] }, session_id: session });
      }
    }
    const textOnly = (e.resultTextOnly ?? []).includes(nodeId);
    line({ type: "result", subtype: "success", is_error: false, duration_ms: 1234, num_turns: 2,
      result: textOnly ? "Here is my answer:\n\n" + "` +
  "```" +
  String.raw`json\n" + JSON.stringify(answer) + "\n` +
  "```" +
  String.raw`" : answer.summary,
      session_id: session, total_cost_usd: 0.01, usage: { input_tokens: 10, cache_read_input_tokens: 90, output_tokens: 20 },
      ...(textOnly ? {} : { structured_output: { ...answer, summary: answer.summary + (secret ? " (key " + secret + ")" : "") } }) });
  }
}
`;

export interface FakeAgents {
  /** Put this first on PATH. */
  binDir: string;
  /** Outside the repository: expect.json and calls.jsonl. */
  stateDir: string;
  /** PATH and FAKE_AGENT_STATE for the runner's environment. */
  env: Record<string, string>;
  expect(expectations: FakeExpectations): void;
  calls(): FakeCall[];
}

/** Writes fake `codex` and `claude` executables into a fresh temp bin/ folder. */
export function installFakeAgents(): FakeAgents {
  const base = tempDir("runner-fakes-");
  const binDir = path.join(base, "bin");
  const stateDir = path.join(base, "state");
  mkdirSync(binDir);
  mkdirSync(stateDir);
  for (const tool of ["codex", "claude"] as const) {
    const file = path.join(binDir, tool);
    writeFileSync(file, `#!/usr/bin/env node\nconst TOOL = ${JSON.stringify(tool)};\n${FAKE_BODY}`);
    chmodSync(file, 0o755);
  }
  return {
    binDir,
    stateDir,
    env: { PATH: `${binDir}${path.delimiter}${process.env.PATH ?? ""}`, FAKE_AGENT_STATE: stateDir },
    expect(expectations) {
      writeFileSync(path.join(stateDir, "expect.json"), JSON.stringify(expectations));
    },
    calls() {
      const file = path.join(stateDir, "calls.jsonl");
      if (!existsSync(file)) return [];
      return readFileSync(file, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line) as FakeCall);
    },
  };
}

/** A guard (node script, committed in the repository) that passes when src/<RUNNER_NODE_ID>.txt says `ok <id>`. */
export const LEAF_FILE_GUARD = String.raw`import { existsSync, readFileSync } from "node:fs";
const id = process.env.RUNNER_NODE_ID;
const file = "src/" + id + ".txt";
if (!existsSync(file) || readFileSync(file, "utf8") !== "ok " + id + "\n") {
  console.error(file + " does not say ok " + id);
  process.exit(1);
}
console.log(file + " ok");
`;

/** Wraps the scenario's agent.mjs: records the agent's own pid (agent-pid-<n>), then runs it in the same process. */
export const PID_RECORDING_AGENT = String.raw`import { writeFileSync } from "node:fs";
import path from "node:path";
writeFileSync(path.join(process.env.SCENARIO_DIR, "agent-pid-" + process.env.RUNNER_ITERATION), String(process.pid));
await import("./agent.mjs");
`;

/** The flags named in the comment at the top of an adapter source file (its documented argv), in order. */
export function documentedFlags(source: string, program: string): string[] {
  const lines = source.split("\n");
  const start = lines.findIndex((line) => line.startsWith(`//   ${program} `));
  if (start === -1) throw new Error(`no documented ${program} argv in the adapter's header comment`);
  const argvLines: string[] = [];
  for (let i = start; i < lines.length && /^\/\/ {3,}/.test(lines[i]!); i++) argvLines.push(lines[i]!.replace(/^\/\//, ""));
  return argvLines
    .join(" ")
    .split(/\s+/)
    .map((token) => token.replace(/^\[+/, "").replace(/\]+$/, ""))
    .filter((token) => token.startsWith("-"));
}
