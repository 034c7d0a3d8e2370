// Runs one child process the way the runner needs it (executor and guard alike): in its own process
// group and contained (containment.ts: nothing it starts outlives it, not even a setsid daemon),
// killed whole at the deadline, stdout and stderr streamed into a log file with each stream capped
// at `capBytes` (the excess is counted, not kept), memory bounded whatever the child prints.
//
// Killing: at the deadline (or on abort) the group gets SIGTERM, then SIGKILL 2 s later. As soon as
// the direct child has exited, for whatever reason, whatever is left of its group gets SIGKILL at
// once (stragglers of a SIGTERMed group do not get the rest of the grace period), and so does
// everything else the containment holds; the result waits until they are gone. Without
// containment, processes that left the group (setsid) cannot be killed; if they hold the output
// pipes, they are closed on our side 2 s after the child's exit so the result still resolves.
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync, writeSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { StringDecoder } from "node:string_decoder";
import type { ProcessFacts } from "../../core/process/process-facts.js";
import { StreamRedactor } from "../../core/agent/stream-redactor.js";
import { ensureRealFolder, openSafely } from "../files/safe-files.js";
import { FAILING_LINE, FAILURE_WINDOW, FEEDBACK_HEAD, outputExcerpt } from "../../core/base/text-limits.js";
import {
  aheadStart,
  containedStart,
  containmentRecord,
  discardStart,
  endContainedRun,
  killLeftoversNow,
  startScript,
  type ContainedStart,
  type ContainmentMethod,
  type ContainmentRecord,
} from "./containment.js";
import { writeCgroupKill } from "./cgroups.js";
import { holdEventLoop } from "./event-loop.js";
import { interpreterProblem, lookupProgram, systemTool } from "./program-path.js";

export interface ProcessRequest {
  /** argv[0] is the program, looked up on PATH. */
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  /** Written to the child's stdin, then stdin is closed. */
  input?: string;
  /**
   * The input reaches the program through a pipe as a shell makes one (`cat | program`: a FIFO)
   * instead of Node's stdin pipe, which is a socket: for a program that reads stdin only when it is
   * a FIFO (Cline CLI).
   */
  inputThroughPipe?: boolean;
  /** Wall-clock instant (ms since epoch) at which the whole process group is killed. */
  deadlineMs: number;
  /** Log file (created or truncated) receiving both streams as they arrive. */
  logFile: string;
  /**
   * Where the log is in the agent's reach (the repository): every folder from here down to the
   * log's is made a real folder first, so that a link the agent planted never aims the write.
   */
  logTop?: string;
  /** Per-stream cap in bytes; output beyond it is dropped and counted. */
  capBytes: number;
  /** Strings replaced by `***` in the log (secret values). */
  secrets?: readonly string[];
  /** Aborting kills the whole process group at once (Ctrl-C of `runner run`). */
  abortSignal?: AbortSignal;
  /** Called with each chunk of output that was kept (for live progress). */
  onOutput?: (chunk: string, stream: "stdout" | "stderr") => void;
  /** Sees every stdout chunk, also beyond the cap and unredacted, and keeps nothing (a final result line). */
  observeStdout?: (chunk: string) => void;
  /**
   * How the child's process tree is contained: "auto" (default) is the best method that works
   * here; a named method must work or the run does not start; "off" is the process group alone.
   */
  containment?: ContainmentMethod | "auto" | "off";
  /** Called right after the spawn with what the crash journal needs to end a killed runner's child. */
  onSpawn?: (record: ContainmentRecord) => void;
  /**
   * Time between SIGTERM and SIGKILL of the group, and how long the pipes may stay open after the
   * child exits (default 2 s). A test lengthens it to tell "at once" from "after the grace period"
   * without measuring time.
   */
  graceMs?: number;
}

export interface ProcessResult {
  /** Exit code, or undefined when the process was killed by a signal or could not start. */
  exitCode: number | undefined;
  signal: string | undefined;
  /** The deadline passed and the process group was killed. */
  timedOut: boolean;
  /** The abort signal fired and the process group was killed. */
  aborted: boolean;
  /** The program could not be started (not found, not executable); the message says why. */
  spawnError: string | undefined;
  /** How the child's processes were contained ("none": containment was off or nothing started). */
  containment: ContainmentMethod | "none";
  durationMs: number;
  stdoutBytes: number;
  stderrBytes: number;
  droppedBytes: number;
  /** The last few KB of output (both streams), for progress. */
  tail: string;
  /**
   * The output as it may be fed back to the agent (CONTRACT §9): whole up to 4000 characters, else
   * the first 2500, `\n...\n`, the last 1000 — of the whole output, not just of its tail — or, when
   * the first failing line lies between those, with a window from that line kept too (outputExcerpt).
   */
  excerpt: string;
}

type StreamName = "stdout" | "stderr";

/** Time between SIGTERM and SIGKILL of the group; also how long pipes may stay open after the child exits. */
const GRACE_MS = 2_000;
/** Characters of output kept in `tail`, and at the start of the output for `excerpt`. */
const TAIL_CHARS = 4_096;
/** setTimeout cannot wait longer than this (larger delays fire at once). */
const MAX_TIMER_MS = 2_147_483_647;

/** How a run ended, as the machine's facts carry it (src/core/process/process-facts.ts). */
export type ProcessOutcome = ProcessFacts;

/** Just the outcome fields of a result (no output, no byte counts). */
export function outcomeOf(result: ProcessOutcome): ProcessOutcome {
  return {
    exitCode: result.exitCode,
    timedOut: result.timedOut,
    aborted: result.aborted,
    spawnError: result.spawnError,
    durationMs: result.durationMs,
  };
}

/**
 * Runs `request.argv` in a new process group, contained, and resolves when it has ended, what it
 * left behind is killed and its output is drained. Never rejects because of the child (a program
 * that cannot start yields `spawnError`); it throws only when the log file itself cannot be created.
 */
export async function runProcess(request: ProcessRequest): Promise<ProcessResult> {
  const log = new OutputLog(request);
  try {
    const notStarted = (fields: Partial<ProcessResult>, note: string): ProcessResult => {
      log.note(note);
      return { ...emptyResult(), ...fields };
    };
    const program = request.argv[0];
    if (program === undefined || program === "") {
      const spawnError = "cannot start: no program given";
      return notStarted({ spawnError }, spawnError);
    }
    if (request.abortSignal?.aborted) return notStarted({ aborted: true }, "not started: aborted");
    if (!(request.deadlineMs > Date.now())) return notStarted({ timedOut: true }, "not started: the deadline had already passed");
    if (!isDirectory(request.cwd)) {
      const spawnError = `cannot start ${JSON.stringify(program)}: working directory ${JSON.stringify(request.cwd)} does not exist`;
      return notStarted({ spawnError }, spawnError);
    }
    let start: ContainedStart | undefined;
    let argv = request.argv;
    const piped = request.input !== undefined && request.inputThroughPipe === true;
    if (request.containment !== "off" || piped) {
      // Behind a wrapper the spawn itself succeeds: check here what a direct spawn would have said.
      const found = lookupProgram(program, request.env, request.cwd);
      if (found.problem !== undefined) {
        const spawnError = describeSpawnError(program, found.problem);
        return notStarted({ spawnError }, spawnError);
      }
      const interpreter = interpreterProblem(found.file);
      if (interpreter !== undefined) {
        const spawnError = `cannot start ${JSON.stringify(program)}: its interpreter ${JSON.stringify(interpreter)} (its #! line) does not exist`;
        return notStarted({ spawnError }, spawnError);
      }
      if (piped) {
        const sh = systemTool("sh");
        if (sh === undefined) {
          const spawnError = `cannot start ${JSON.stringify(program)}: no sh found to give it its input through a pipe`;
          return notStarted({ spawnError }, spawnError);
        }
        argv = [sh, "-c", 'cat | exec "$@"', "sh", found.file, ...request.argv.slice(1)];
      }
    }
    // A wrapper started ahead is this run's if it can be; never left waiting while a run goes on.
    const early = await takeAheadStart();
    let ready: Ready | undefined;
    if (request.containment !== "off") {
      const method = request.containment ?? "auto";
      const script =
        early && (method === "auto" || method === "cgroup")
          ? startScript(early.start, argv, request.env, request.cwd, request.input !== undefined)
          : undefined;
      // (a script that cannot be written — no room in the temporary folder — means a start made at once)
      const scriptFile = script === undefined ? undefined : writeStartScript(script);
      if (early !== undefined && scriptFile !== undefined) {
        start = early.start;
        ready = { child: early.child, scriptFile };
      } else {
        if (early !== undefined) await endAheadStart(early);
        try {
          start = await containedStart(method, argv, request.env);
        } catch (error) {
          const spawnError = `cannot start ${JSON.stringify(program)}: ${(error as Error).message}`;
          return notStarted({ spawnError }, spawnError);
        }
      }
      // The first run of a process probes the methods: the signal may have fired meanwhile.
      if (request.abortSignal?.aborted) {
        if (ready !== undefined && early !== undefined) {
          rmSync(ready.scriptFile, { force: true });
          await endAheadStart(early);
        } else discardStart(start);
        return notStarted({ aborted: true }, "not started: aborted");
      }
    } else if (early !== undefined) {
      await endAheadStart(early);
    }
    return await supervise({ ...request, argv }, program, start, log, ready);
  } finally {
    log.close();
  }
}

async function supervise(
  request: ProcessRequest,
  program: string,
  start: ContainedStart | undefined,
  log: OutputLog,
  ready?: Ready,
): Promise<ProcessResult> {
  const started = performance.now();
  const [command, ...args] = start?.argv ?? request.argv;
  // node:child_process directly (not execa: its 100+ ms of imports would be paid by every step).
  const subprocess =
    ready?.child ??
    spawn(command!, args, {
      cwd: request.cwd,
      env: start?.env ?? request.env,
      detached: true,
      stdio: [request.input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
    });
  // A wrapper started ahead gets its program now: the script's path, then the program's input.
  let scriptFile: string | undefined;
  if (ready !== undefined) {
    scriptFile = ready.scriptFile;
    subprocess.stdin!.on("error", () => undefined);
    subprocess.stdin!.write(`${scriptFile}\n`);
    if (request.input === undefined) subprocess.stdin!.end();
  }
  // Settles once: with the exit code and signal when every pipe has closed, or with the spawn error.
  const settled = new Promise<{ exitCode: number | undefined; signal: string | undefined; code?: string }>((resolve) => {
    subprocess.once("error", (error: NodeJS.ErrnoException) => {
      if (subprocess.pid === undefined) resolve({ exitCode: undefined, signal: undefined, code: error.code });
    });
    subprocess.once("close", (code, signal) => resolve({ exitCode: code ?? undefined, signal: signal ?? undefined }));
  });
  if (request.input !== undefined && subprocess.stdin) {
    // A child that never reads its stdin (or exits first) must not fail the run: EPIPE is expected.
    subprocess.stdin.on("error", () => undefined);
    subprocess.stdin.end(request.input);
  }
  const pid = subprocess.pid;
  let record: ContainmentRecord | undefined;
  if (start !== undefined && pid === undefined) discardStart(start);
  if (start !== undefined && pid !== undefined) {
    record = containmentRecord(start, pid);
    try {
      request.onSpawn?.(record);
    } catch {
      // the journal's failure must not leave the child unsupervised
    }
  }

  const graceMs = request.graceMs ?? GRACE_MS;
  let timedOut = false;
  let aborted = false;
  let exited = false;
  let deadlineTimer: NodeJS.Timeout | undefined;
  let graceTimer: NodeJS.Timeout | undefined;
  let drainTimer: NodeJS.Timeout | undefined;
  let cleanup: Promise<void> | undefined;

  const terminate = (reason: "deadline" | "abort"): void => {
    if (pid === undefined || exited || graceTimer !== undefined) return;
    if (reason === "deadline") timedOut = true;
    else aborted = true;
    killGroup(pid, "SIGTERM");
    graceTimer = setTimeout(() => killGroup(pid, "SIGKILL"), graceMs);
  };
  const armDeadline = (): void => {
    const remaining = request.deadlineMs - Date.now();
    if (!(remaining > 0)) return terminate("deadline");
    // Long deadlines are reached in steps: setTimeout fires at once beyond MAX_TIMER_MS.
    deadlineTimer = setTimeout(armDeadline, Math.min(remaining, MAX_TIMER_MS));
  };
  const onAbort = (): void => terminate("abort");
  // If the runner itself exits while the child runs, the detached group must not survive it.
  const onRunnerExit = (): void => {
    if (pid === undefined || exited) return;
    killGroup(pid, "SIGKILL");
    if (record !== undefined) killLeftoversNow(record);
  };
  const onChildExit = (): void => {
    exited = true;
    clearTimeout(deadlineTimer);
    clearTimeout(graceTimer);
    // Whatever the child left behind in its group dies with it; that also closes their copies of the pipes.
    if (pid !== undefined) killGroup(pid, "SIGKILL");
    // And so does everything else it started (the result waits for that).
    if (record !== undefined) cleanup = endContainedRun(record, start?.since);
    // A process that left the group (setsid) may still hold the pipes: stop waiting for it after a grace period.
    drainTimer = setTimeout(() => {
      subprocess.stdout?.destroy();
      subprocess.stderr?.destroy();
    }, graceMs);
  };

  if (pid !== undefined) {
    const stdoutDecoder = new StringDecoder("utf8");
    subprocess.stdout?.on("data", (chunk: Buffer) => {
      if (request.observeStdout) {
        try {
          request.observeStdout(stdoutDecoder.write(chunk));
        } catch {
          // an observer's failure must not stop the output from being read
        }
      }
      log.write(chunk, "stdout");
    });
    subprocess.stderr?.on("data", (chunk: Buffer) => log.write(chunk, "stderr"));
    subprocess.once("exit", onChildExit);
    process.once("exit", onRunnerExit);
    request.abortSignal?.addEventListener("abort", onAbort, { once: true });
    armDeadline();
  }

  try {
    const result = await settled;
    await cleanup;
    const durationMs = performance.now() - started;
    if (pid === undefined) {
      const spawnError = describeSpawnError(program, result.code);
      log.note(spawnError);
      return { ...emptyResult(), spawnError, durationMs };
    }
    const counts = log.finish();
    return {
      exitCode: result.exitCode,
      signal: result.signal,
      timedOut,
      aborted,
      spawnError: undefined,
      containment: start?.method ?? "none",
      durationMs,
      ...counts,
    };
  } finally {
    clearTimeout(deadlineTimer);
    clearTimeout(graceTimer);
    clearTimeout(drainTimer);
    subprocess.off("exit", onChildExit);
    process.off("exit", onRunnerExit);
    request.abortSignal?.removeEventListener("abort", onAbort);
    if (scriptFile !== undefined) rmSync(scriptFile, { force: true });
  }
}

/** A wrapper started ahead, in its cgroup, waiting for its program (containment.ts, aheadStart). */
interface AheadStart {
  start: ContainedStart;
  child: ChildProcess;
  record: ContainmentRecord;
}

/** What supervise needs to give a waiting wrapper its program. */
interface Ready {
  child: ChildProcess;
  /** The script that makes the wrapper the program (removed when the run ends). */
  scriptFile: string;
}

let ahead: Promise<AheadStart | undefined> | undefined;
/** The wrapper waiting now, for the runner's own exit. */
let waiting: AheadStart | undefined;

/**
 * Starts the wrapper of the next contained run now (the cgroup method, containment.ts:
 * aheadStart), so that its move into the cgroup is done while the runner still prepares the run.
 * Call it only where no agent or guard process exists — a step does so once a killed runner's
 * leftovers are ended, and again once the agent's run has ended: the next runProcess takes it (it
 * is never left waiting while another run goes on), and discardAheadStart ends one nobody took.
 */
export function prepareAheadStart(): void {
  if (os.tmpdir().includes("\n")) return; // (the script's path is one line on the wrapper's stdin)
  ahead ??= aheadStart().then(
    (start) => (start === undefined ? undefined : spawnAhead(start)),
    () => undefined,
  );
}

/** Ends a wrapper started ahead that no run took (the end of a step). */
export async function discardAheadStart(): Promise<void> {
  const early = await takeAheadStart();
  if (early !== undefined) await endAheadStart(early);
}

function spawnAhead(start: ContainedStart): AheadStart | undefined {
  const [command, ...args] = start.argv;
  const child = spawn(command!, args, { cwd: "/", env: start.env, detached: true, stdio: ["pipe", "pipe", "pipe"] });
  child.once("error", () => undefined);
  if (child.pid === undefined) {
    discardStart(start);
    return undefined;
  }
  // While it waits it must not keep the runner alive; when the runner exits, it ends too.
  holdEventLoop(child, false);
  waiting = { start, child, record: containmentRecord(start, child.pid) };
  process.once("exit", killWaiting);
  return waiting;
}

async function takeAheadStart(): Promise<AheadStart | undefined> {
  const pending = ahead;
  ahead = undefined;
  const early = await pending;
  if (early === undefined) return undefined;
  waiting = undefined;
  process.off("exit", killWaiting);
  if (early.child.exitCode !== null || early.child.signalCode !== null) {
    await endAheadStart(early);
    return undefined;
  }
  holdEventLoop(early.child, true);
  return early;
}

async function endAheadStart(early: AheadStart): Promise<void> {
  if (early.child.pid !== undefined) killGroup(early.child.pid, "SIGKILL");
  early.child.stdin?.destroy();
  early.child.stdout?.destroy();
  early.child.stderr?.destroy();
  await endContainedRun(early.record, early.start.since);
}

function killWaiting(): void {
  if (waiting?.child.pid === undefined) return;
  killGroup(waiting.child.pid, "SIGKILL");
  if (waiting.start.cgroup !== null) writeCgroupKill(waiting.start.cgroup);
}

let scriptFolder: string | undefined;

/** A start script in a folder of the runner's own (only its user can enter it; removed when the runner exits); undefined when it cannot be written. */
function writeStartScript(script: string): string | undefined {
  try {
    if (scriptFolder === undefined) {
      const folder = mkdtempSync(path.join(os.tmpdir(), "runner-start-"));
      scriptFolder = folder;
      process.once("exit", () => rmSync(folder, { recursive: true, force: true }));
    }
    const file = path.join(scriptFolder, `${process.pid}-${++scripts}.sh`);
    writeFileSync(file, script, { mode: 0o600, flag: "wx" });
    return file;
  } catch {
    return undefined;
  }
}
let scripts = 0;

/** Signals every process of the group led by `pid`; a group that is already gone is fine. */
function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch (error) {
    const code = errorCode(error);
    // ESRCH: nobody left. EPERM: only processes we may not signal are left (nothing we can do).
    if (code !== "ESRCH" && code !== "EPERM") throw error;
  }
}

function describeSpawnError(program: string, code: string | undefined): string {
  const name = JSON.stringify(program);
  switch (code) {
    case "ENOENT":
      return program.includes("/") ? `cannot start ${name}: no such file` : `cannot start ${name}: not found on PATH`;
    case "EACCES":
      return `cannot start ${name}: permission denied (not an executable file)`;
    case "ENOEXEC":
      return `cannot start ${name}: not an executable format`;
    default:
      return `cannot start ${name}: ${code ?? "unknown error"}`;
  }
}

function errorCode(error: unknown): string | undefined {
  if (typeof error !== "object" || error === null || !("code" in error)) return undefined;
  return typeof error.code === "string" ? error.code : undefined;
}

function isDirectory(dir: string): boolean {
  try {
    return statSync(dir).isDirectory();
  } catch {
    return false;
  }
}

function emptyResult(): ProcessResult {
  return {
    exitCode: undefined,
    signal: undefined,
    timedOut: false,
    aborted: false,
    spawnError: undefined,
    containment: "none",
    durationMs: 0,
    stdoutBytes: 0,
    stderrBytes: 0,
    droppedBytes: 0,
    tail: "",
    excerpt: "",
  };
}

/** Per-stream state: bytes seen and kept, a UTF-8 decoder and a secret redactor. */
interface StreamState {
  produced: number;
  kept: number;
  dropped: number;
  decoder: StringDecoder;
  redactor: StreamRedactor;
}

/**
 * The log file plus the bookkeeping around it. Writes are synchronous, so nothing accumulates in
 * memory beyond one chunk, the redactor's hold-back and the tail.
 */
class OutputLog {
  private fd: number | undefined;
  private readonly streams: Record<StreamName, StreamState>;
  private tail = "";
  /** The first TAIL_CHARS characters of the output, and how many characters there were in all. */
  private head = "";
  private chars = 0;
  /** The line being read (up to TAIL_CHARS of it) and where it starts, to find the first failing line. */
  private line = "";
  private lineAt = 0;
  /** The first failing line after the head and what follows it (up to FAILURE_WINDOW), where it starts. */
  private failure: { at: number; text: string } | undefined;
  private endsWithNewline = true;

  constructor(private readonly request: ProcessRequest) {
    if (request.logTop === undefined) mkdirSync(path.dirname(request.logFile), { recursive: true });
    else ensureRealFolder(request.logTop, path.dirname(request.logFile));
    // (and never through a link planted at the file's own name)
    this.fd = openSafely(request.logFile);
    const secrets = request.secrets ?? [];
    const state = (): StreamState => ({
      produced: 0,
      kept: 0,
      dropped: 0,
      decoder: new StringDecoder("utf8"),
      redactor: new StreamRedactor(secrets),
    });
    this.streams = { stdout: state(), stderr: state() };
  }

  /** Counts a chunk, keeps what fits under the cap, redacts it and passes it on. */
  write(chunk: Buffer, stream: StreamName): void {
    const state = this.streams[stream];
    state.produced += chunk.length;
    const room = this.request.capBytes - state.kept;
    if (room <= 0) {
      state.dropped += chunk.length;
      return;
    }
    const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
    state.dropped += chunk.length - kept.length;
    state.kept += kept.length;
    this.emit(state.redactor.push(state.decoder.write(kept)), stream);
  }

  /** Flushes what the decoders and redactors hold back, writes the byte-count line, returns the counts. */
  finish(): Pick<ProcessResult, "stdoutBytes" | "stderrBytes" | "droppedBytes" | "tail" | "excerpt"> {
    for (const stream of ["stdout", "stderr"] as const) {
      const state = this.streams[stream];
      this.emit(state.redactor.push(state.decoder.end()) + state.redactor.end(), stream);
    }
    const { stdout, stderr } = this.streams;
    const droppedBytes = stdout.dropped + stderr.dropped;
    this.note(
      `stdout ${stdout.produced} bytes, stderr ${stderr.produced} bytes, ${droppedBytes} dropped over the cap of ${this.request.capBytes} per stream`,
    );
    const tail = this.tail.slice(-TAIL_CHARS);
    if (this.failure === undefined) this.findFailure("\n");
    // Longer than the head: its first characters, the first failing line's window, the tail's last.
    const excerpt = outputExcerpt(this.head, tail, this.chars, this.failure);
    return { stdoutBytes: stdout.produced, stderrBytes: stderr.produced, droppedBytes, tail, excerpt };
  }

  /** Appends one `[runner] …` line to the log. */
  note(text: string): void {
    this.writeFile(`${this.endsWithNewline ? "" : "\n"}[runner] ${text}\n`);
  }

  close(): void {
    if (this.fd === undefined) return;
    closeSync(this.fd);
    this.fd = undefined;
  }

  private emit(text: string, stream: StreamName): void {
    if (text === "") return;
    this.writeFile(text);
    if (this.head.length < TAIL_CHARS) this.head += text.slice(0, TAIL_CHARS - this.head.length);
    this.findFailure(text);
    this.chars += text.length;
    this.tail += text;
    if (this.tail.length > 2 * TAIL_CHARS) this.tail = this.tail.slice(-TAIL_CHARS);
    try {
      this.request.onOutput?.(text, stream);
    } catch {
      // Live progress is best effort: a failing listener must not break the run.
    }
  }

  /** Reads `text` (what follows the `chars` read so far) line by line until the first failing line past the head is found and its window filled. */
  private findFailure(text: string): void {
    if (this.failure !== undefined) {
      if (this.failure.text.length < FAILURE_WINDOW) this.failure.text += text.slice(0, FAILURE_WINDOW - this.failure.text.length);
      return;
    }
    let from = 0;
    for (let end = text.indexOf("\n"); end >= 0; end = text.indexOf("\n", from)) {
      const line = this.line + text.slice(from, end);
      if (this.lineAt >= FEEDBACK_HEAD && FAILING_LINE.test(line)) {
        this.failure = { at: this.lineAt, text: "" };
        this.findFailure(`${line}${text.slice(end)}`);
        return;
      }
      this.lineAt = this.chars + end + 1;
      this.line = "";
      from = end + 1;
    }
    if (this.line.length < TAIL_CHARS) this.line += text.slice(from, from + TAIL_CHARS - this.line.length);
  }

  private writeFile(text: string): void {
    if (this.fd === undefined) return;
    try {
      writeSync(this.fd, text);
      this.endsWithNewline = text.endsWith("\n");
    } catch {
      // A log that cannot be written (disk full) must not kill the supervision of the child: stop logging.
      closeSync(this.fd);
      this.fd = undefined;
    }
  }
}
