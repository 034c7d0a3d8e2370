// `runner watch [run-id] [--all] [--plain]`: a run in progress, live — this checkout's run, a named
// run of the clone (in whatever worktree it is checked out), or with --all every run with one
// selected. On a terminal a full screen (src/cli/watch/screen.ts) with keys: ↑/↓ select a run, o
// opens its report, s asks its `runner run` to stop after the current iteration, q quits. Into a
// pipe (or with --plain) one line per event. Strictly read-only: the lock is never taken, nothing in
// the repository is written (the report goes to a temp folder); the only thing it ever writes is a
// person's stop request, on that key (src/adapters/state/stop-request.ts). A watch started before its run
// waits for it; watching one run, it ends when that run ends, its summary left on the screen.
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { gitDir, GitRepo } from "../../adapters/git/git.js";
import { commonDir as commonGitDir } from "../../adapters/git/git-control.js";
import { StopRequest } from "../../adapters/state/stop-request.js";
import { RefusalError, UsageError, errorMessage } from "../../errors.js";
import type { GlobalArgs } from "../command-table.js";
import { printLine } from "../output.js";
import { findProjectRoot } from "../repo.js";
import { branchRunId } from "../run-facts.js";
import { colourWanted, styleFor } from "../style.js";
import { CloneRuns, RunFollower, type RunSnapshot } from "../watch/follow.js";
import { watchFrame, type WatchState } from "../watch/frame.js";
import { endedLines, PlainWatch } from "../watch/plain.js";

/** How often the run's files are looked at: the screen's clocks count seconds. */
const POLL_MS = 1000;

export interface WatchArgs {
  runId?: string;
  all: boolean;
  plain: boolean;
}

export async function run(argv: WatchArgs & GlobalArgs): Promise<number> {
  if (argv.all && argv.runId !== undefined)
    throw new UsageError(`Give a run id or --all, not both: \`runner watch ${argv.runId}\` watches one run, \`runner watch --all\` every run.`);
  const root = findProjectRoot(argv.C);
  const git = new GitRepo(root);
  // (gitDir refuses, in one sentence, where there is no repository)
  const commonDir = commonGitDir(await gitDir(root));
  let source: () => Promise<RunSnapshot[]>;
  let followerOf: (runId: string) => RunFollower | undefined;
  if (argv.all) {
    const runs = new CloneRuns(git, commonDir);
    source = () => runs.look(Date.now());
    followerOf = (runId) => runs.follower(runId);
  } else {
    const branchRun = argv.runId === undefined ? await branchRunId(root) : undefined;
    const runId = argv.runId ?? branchRun;
    if (runId === undefined)
      throw new RefusalError(
        "This checkout is on no run branch (runner/<id>); name the run to watch (`runner watch <run-id>`, `runner runs` lists them) or watch every run with `runner watch --all`.",
      );
    const follower = new RunFollower(git, commonDir, runId, branchRun !== undefined ? { worktree: root } : undefined);
    source = async () => [await follower.look(Date.now())];
    followerOf = () => follower;
  }
  const interactive = !argv.plain && process.stdout.isTTY === true && process.stdin.isTTY === true;
  return interactive ? watchOnScreen(argv, root, source, followerOf) : watchPlainly(argv, source);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function watchPlainly(argv: WatchArgs, source: () => Promise<RunSnapshot[]>): Promise<number> {
  const plain = new PlainWatch((line) => process.stdout.write(line), { prefix: argv.all, style: styleFor(process.stdout) });
  for (;;) {
    let ended = false;
    for (const run of await source()) ended = plain.see(run) || ended;
    // One run: its end is the watch's end.
    if (ended && !argv.all) return 0;
    await sleep(POLL_MS);
  }
}

async function watchOnScreen(
  argv: WatchArgs,
  root: string,
  source: () => Promise<RunSnapshot[]>,
  followerOf: (runId: string) => RunFollower | undefined,
): Promise<number> {
  const { openScreen } = await import("../watch/screen.js");
  const state: WatchState = { mode: argv.all ? "all" : "one", runs: [], selected: 0, now: Date.now(), message: undefined, canStop: false };
  /** The stop requests made, by run id, with the runner each asks. */
  const requests = new Map<string, { request: StopRequest; pid: number }>();
  /** What a key waits for: a y to a stop, a second q. */
  let asking: { kind: "stop"; runId: string } | { kind: "quit" } | undefined;
  /** The runner seen working on the one run watched: its end ends the watch. */
  let seenRunner: number | undefined;
  /** Where reports are written (a temp folder: never the repository); it stays, a browser may have a report open. */
  let reportDir: string | undefined;
  let quitting = false;
  let done: (code: number) => void = () => undefined;
  const finished = new Promise<number>((resolve) => (done = resolve));

  const selectedRun = () => state.runs[state.selected];
  const stoppable = (run: RunSnapshot | undefined) =>
    run !== undefined &&
    run.runner !== undefined &&
    run.runner.command === "runner run" &&
    !requests.has(run.runId) &&
    followerOf(run.runId)?.gitDir !== undefined;
  const draw = () => {
    state.now = Date.now();
    state.canStop = stoppable(selectedRun());
    screen.draw(watchFrame(state, screen.width, screen.height));
  };
  const say = (message: string | undefined) => {
    state.message = message;
    draw();
  };
  const quit = (code: number) => {
    if (quitting) return;
    quitting = true;
    for (const { request } of requests.values()) request.withdraw();
    requests.clear();
    done(code);
  };

  const onKey = (name: string) => {
    const waiting = asking;
    asking = undefined;
    if (waiting?.kind === "stop" && (name === "y" || name === "Y")) return askToStop(waiting.runId);
    if (name === "q" || name === "Q" || name === "CTRL_C" || name === "ESCAPE") {
      const standing = [...requests.keys()];
      if (standing.length > 0 && waiting?.kind !== "quit" && name !== "CTRL_C") {
        asking = { kind: "quit" };
        return say(`A stop request for run ${standing.join(", ")} stands; quitting withdraws it. q again to quit, any other key to stay.`);
      }
      return quit(0);
    }
    if (name === "UP" || name === "k") state.selected = Math.max(0, state.selected - 1);
    else if (name === "DOWN" || name === "j") state.selected = Math.min(Math.max(0, state.runs.length - 1), state.selected + 1);
    else if (name === "o" || name === "O") return void openReport(selectedRun());
    else if (name === "s" || name === "S") {
      const run = selectedRun();
      if (run === undefined) return say(undefined);
      if (requests.has(run.runId)) return say(`Run ${run.runId} is already asked to stop after its current iteration.`);
      if (!stoppable(run)) return say(`No \`runner run\` works on run ${run.runId} now: there is nothing to stop.`);
      asking = { kind: "stop", runId: run.runId };
      return say(`Stop run ${run.runId} after its current iteration? y to ask, any other key not to.`);
    }
    say(undefined);
  };

  const askToStop = (runId: string) => {
    const run = state.runs.find((r) => r.runId === runId);
    const dir = followerOf(runId)?.gitDir;
    if (run?.runner === undefined || dir === undefined) return say(`Run ${runId} has no runner working any more: nothing to stop.`);
    try {
      requests.set(runId, { request: StopRequest.make(dir, run.runner.pid, Date.now), pid: run.runner.pid });
    } catch (error) {
      return say(`Could not ask run ${runId} to stop: ${errorMessage(error)}.`);
    }
    say(`Asked run ${runId} to stop after its current iteration; keep this watch open until it has stopped (quitting withdraws the request).`);
  };

  const openReport = async (run: RunSnapshot | undefined) => {
    if (run === undefined || !run.branchExists) return say(undefined);
    reportDir ??= mkdtempSync(path.join(tmpdir(), "runner-watch-"));
    const file = path.join(reportDir, `${run.runId}.html`);
    say(`Writing the report of run ${run.runId}…`);
    const args = [process.argv[1]!, "-C", run.worktree ?? root, "report", "--run-id", run.runId, "--output", file, "--open"];
    const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.once("error", (error) => say(`Could not write the report: ${error.message}.`));
    child.once("close", (code) => {
      const lines = output.trim().split("\n").filter(Boolean);
      if (code !== 0) return say(lines.at(-1) ?? `\`runner report\` exited with code ${code}.`);
      const note = lines.find((line) => line !== file);
      say(`Report of run ${run.runId}: ${file}${note ? ` — ${note}` : " (opened)"}`);
    });
  };

  const screen = await openScreen({ colour: colourWanted(true, process.env), onKey, onResize: () => draw() });
  const onSignal = () => quit(130);
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  let ended: RunSnapshot | undefined;
  const loop = async () => {
    for (;;) {
      const runs = await source();
      const selectedId = selectedRun()?.runId;
      state.runs = runs;
      const again = runs.findIndex((r) => r.runId === selectedId);
      state.selected = again >= 0 ? again : Math.min(state.selected, Math.max(0, runs.length - 1));
      for (const [runId, { request, pid }] of requests) {
        const run = runs.find((r) => r.runId === runId);
        if (run?.runner?.pid === pid && request.pending) continue;
        request.withdraw();
        requests.delete(runId);
        if (run?.runner?.pid !== pid) say(`Run ${runId} has stopped${run?.live?.ended ? `: ${run.live.ended.reason}` : "."}`);
      }
      if (!argv.all) {
        const run = runs[0];
        if (run?.runner !== undefined) seenRunner = run.runner.pid;
        const over =
          run !== undefined &&
          seenRunner !== undefined &&
          (run.runner?.pid !== seenRunner || (run.live?.pid === seenRunner && run.live.ended !== null));
        if (over) {
          ended = run;
          return quit(0);
        }
      }
      if (quitting) return;
      draw();
      await Promise.race([sleep(POLL_MS), finished]);
      if (quitting) return;
    }
  };
  void loop();
  const code = await finished;
  screen.close();
  process.off("SIGINT", onSignal);
  process.off("SIGTERM", onSignal);
  // The run's end stays on the terminal once the full screen is gone.
  if (ended !== undefined) for (const line of endedLines(ended, seenRunner)) printLine(line);
  return code;
}
