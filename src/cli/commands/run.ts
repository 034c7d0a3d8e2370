// `runner run [--max-iterations N] [--halt-on-stuck]`: step until the root passes (exit 0), a stop
// condition (exit 3), or an error (1, or 2 for a bug). Ctrl-C kills the agent's process group; the
// interrupted iteration is recorded as a runner error and committed before the run stops. A person's
// request from `runner watch` stops it after the current iteration (exit 3). While it works, it keeps
// its status file for `runner watch` (src/cli/live-status-view.ts).
import path from "node:path";
import { gitDir } from "../../adapters/git/git.js";
import { createHooks } from "../../adapters/records/hooks.js";
import { LiveStatusFile } from "../../adapters/records/live-status.js";
import { processStart } from "../../adapters/state/lock-holder.js";
import { STOP_NAME, takeStopRequest } from "../../adapters/state/stop-request.js";
import { loadConfig } from "../../adapters/files/project-files.js";
import { secretValues } from "../../core/base/text-limits.js";
import { packRepository, PACK_EVERY } from "../../adapters/git/maintenance.js";
import { runLoop, type RunSummary } from "../../run/run-loop.js";
import { killDuringMaintenance, maintenanceEvery } from "../../step/test-hooks.js";
import { EXIT } from "../../exit-codes.js";
import type { GlobalArgs } from "../command-table.js";
import { processEnv } from "../environment.js";
import { printError } from "../output.js";
import { liveStatusView } from "../live-status-view.js";
import { jsonView, plainView, terminalView, type ProgressView } from "../progress.js";
import { iterationEvent, noticeEvent, summaryEvent } from "../run-events.js";
import { findProjectRoot } from "../repo.js";
import { withRepositoryLock } from "../repository-lock.js";
import { branchRunId, currentLeaves } from "../run-facts.js";
import { styleFor } from "../style.js";

export interface RunArgs {
  maxIterations?: number;
  haltOnStuck: boolean;
  json: boolean;
  runId?: string;
}

export async function run(argv: RunArgs & GlobalArgs): Promise<number> {
  const root = findProjectRoot(argv.C);
  const summary = await runWithView(root, argv);
  if (summary.last?.outcome === "crashed" && argv.debug && summary.last.error instanceof Error) printError(summary.last.error.stack ?? "");
  return summary.exitCode;
}

/** Runs the loop with the progress view that suits stdout, and Ctrl-C handling. */
export async function runWithView(root: string, argv: RunArgs, label?: string): Promise<RunSummary> {
  const startedAt = Date.now();
  const write = (line: string) => process.stdout.write(line);
  const env = processEnv();
  const config = await loadConfig(root);
  const knownRunId = argv.runId ?? (argv.json ? undefined : await branchRunId(root));
  const style = styleFor(process.stdout);
  const view: ProgressView = argv.json
    ? jsonView(write, Date.now)
    : process.stdout.isTTY
      ? terminalView(process.stdout, Date.now, label ?? knownRunId ?? "(no run branch)", {
          style,
          runId: knownRunId,
          facts: {
            startedAt,
            maxIterations: argv.maxIterations ?? (config.ok ? config.config.limits.maxIterations : undefined),
            leaves: await currentLeaves(root),
          },
        })
      : plainView(write, { style, runId: knownRunId });
  const liveRunId = knownRunId ?? (await branchRunId(root));
  const limits = config.ok ? config.config.limits : undefined;
  const live =
    liveRunId === undefined
      ? undefined
      : liveStatusView(new LiveStatusFile(root, liveRunId, secretValues(env)), Date.now, {
          runId: liveRunId,
          startedAt,
          maxIterations: argv.maxIterations ?? limits?.maxIterations,
          budgets: { seconds: limits?.maxRunSeconds ?? null, tokens: limits?.maxRunTokens ?? null, cost_usd: limits?.maxRunCostUsd ?? null },
        });
  const gitFolder = await gitDir(root);
  const self = { pid: process.pid, start: processStart(process.pid) };
  const controller = new AbortController();
  let interrupts = 0;
  const onSignal = () => {
    interrupts += 1;
    if (interrupts === 1) {
      printError("Stopping: the agent is being stopped; the iteration will be recorded and committed (Ctrl-C again to quit at once).");
      controller.abort();
    } else {
      process.exit(130);
    }
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  const hooks = createHooks({ root, config: config.ok ? config.config.hooks : undefined, env, warn: printError, now: Date.now });
  let runId = argv.runId;
  // `.git` packed every few iterations and when the run ends (src/adapters/git/maintenance.ts): between iterations, under the lock.
  const every = maintenanceEvery(env, PACK_EVERY);
  let unpacked = 0;
  const pack = async () => {
    unpacked = 0;
    await packRepository(root, killDuringMaintenance(env) ? () => process.kill(process.pid, "SIGKILL") : undefined);
  };
  try {
    const summary = await withRepositoryLock(root, "runner run", async (lock) => {
      const ended = await runLoop({
        // A person's edit waiting for the lock (`--wait`) is made between two iterations.
        betweenIterations: async () => {
          await lock.handOver(Date.now, (notice) => {
            view.notice({ type: "lock", ...notice }, runId);
            live?.notice({ type: "lock", ...notice }, runId);
          });
        },
        // A person's request from `runner watch` (checked: src/adapters/state/stop-request.ts); one without a person behind it is removed and said.
        stopRequested: () => {
          const ask = takeStopRequest(gitFolder, self);
          if (ask?.kind === "ignored") {
            const notice = {
              type: "lock",
              cause: "ignored",
              message: `Ignored and removed ${path.join(gitFolder, STOP_NAME)}: ${ask.why}; no person asked to stop.`,
            } as const;
            view.notice(notice, runId);
            live?.notice(notice, runId);
          }
          return ask?.kind === "asked" ? `${ask.user} (from \`runner watch\`, pid ${ask.pid})` : undefined;
        },
        lockLost: () => lock.lost(),
        root,
        runIdOption: argv.runId,
        maxIterations: argv.maxIterations,
        haltOnStuck: argv.haltOnStuck,
        env,
        now: Date.now,
        abortSignal: controller.signal,
        onProgress: (event) => {
          view.progress(event);
          live?.progress(event);
        },
        onStep: async (result) => {
          runId = result.runId ?? runId;
          view.step(result);
          live?.step(result);
          if (result.record) await hooks.fire("on_iteration", iterationEvent(result, Date.now()), runId);
          if (result.commit !== undefined && ++unpacked >= every) await pack();
        },
        onNotice: async (notice) => {
          view.notice(notice, runId);
          live?.notice(notice, runId);
          if (notice.type === "stuck") {
            hooks.bell();
            await hooks.fire("on_stuck", noticeEvent(notice, runId, Date.now()), runId);
          }
        },
      });
      if (controller.signal.aborted && ended.exitCode === 0) ended.exitCode = 1;
      if (unpacked > 0) await pack();
      // (told before the lock is let go: a watch that sees the run gone has its summary)
      live?.summary(ended);
      // (still under the lock: a hook may look at the repository as the run left it)
      hooks.bell();
      await hooks.fire("on_run_end", summaryEvent(ended, Date.now()), ended.runId ?? runId);
      return ended;
    });
    view.summary(summary);
    // An error or a refusal: its sentence once, on stderr (a bug's, with the stack under --debug, by the caller).
    if (summary.exitCode === EXIT.failed || summary.exitCode === EXIT.bug) printError(summary.reason);
    return summary;
  } finally {
    view.close();
    live?.close();
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}
