// [hooks]: commands `runner run` starts on its events (after each iteration, when a leaf is stuck,
// when the run ends), each given the event as one JSON line on stdin, in the repository root, with
// a time limit and contained like the agent. A hook that fails (cannot start, exits non-zero, runs
// out of time) is logged in .runner/iterations/<run-id>/hooks.log (its last run's whole output in
// hooks/<name>.log) and warned about once on stderr; it never stops the run and nothing it does is
// committed by the runner.
import path from "node:path";
import type { ResolvedConfig } from "../../core/config/config.js";
import { LAYOUT } from "../../core/base/layout.js";
import { redactSecrets, secretValues } from "../../core/base/text-limits.js";
import { runProcess } from "../process/process-runner.js";
import { appendSafely, ensureRealFolder } from "../files/safe-files.js";

export type HookName = "on_iteration" | "on_run_end" | "on_stuck";

const HOOK_OUTPUT_CAP = 64 * 1024;

export interface Hooks {
  /** Runs the hook configured for `name`, if any; resolves when it has ended (never rejects). */
  fire(name: HookName, event: Record<string, unknown>, runId: string | undefined): Promise<void>;
  /** Rings the terminal bell when `[hooks] bell` asks for it. */
  bell(): void;
}

export function createHooks(options: {
  root: string;
  config: ResolvedConfig["hooks"] | undefined;
  env: Record<string, string>;
  warn: (line: string) => void;
  now: () => number;
}): Hooks {
  const { root, config, env, warn } = options;
  const secrets = secretValues(env);
  const warned = new Set<HookName>();
  const argvOf = (name: HookName) => (name === "on_iteration" ? config?.onIteration : name === "on_run_end" ? config?.onRunEnd : config?.onStuck);
  return {
    async fire(name, event, runId) {
      const argv = argvOf(name);
      if (!config || !argv) return;
      const folder = path.join(root, ...LAYOUT.iterations.split("/"), ...(runId ? [runId] : []));
      const relativeLog = path.relative(root, path.join(folder, "hooks.log"));
      try {
        ensureRealFolder(root, path.join(folder, "hooks"));
        const started = options.now();
        const result = await runProcess({
          argv,
          cwd: root,
          env: { ...env, RUNNER_HOOK: name, ...(runId ? { RUNNER_RUN_ID: runId } : {}) },
          input: `${JSON.stringify(event)}\n`,
          deadlineMs: started + config.timeoutSeconds * 1000,
          logFile: path.join(folder, "hooks", `${name}.log`),
          capBytes: HOOK_OUTPUT_CAP,
          secrets,
        });
        const ok = result.exitCode === 0;
        const how =
          result.spawnError ??
          (result.timedOut
            ? `did not finish within ${config.timeoutSeconds} s and was killed`
            : result.exitCode === undefined
              ? `was killed (${result.signal ?? "signal"})`
              : `exited with code ${result.exitCode}`);
        const last = result.tail.trim().split("\n").at(-1) ?? "";
        appendSafely(
          path.join(folder, "hooks.log"),
          redactSecrets(
            `${new Date(started).toISOString()} ${name} ${JSON.stringify(argv)} ${ok ? "ok" : how} (${Math.round(result.durationMs)} ms)${last ? `: ${last}` : ""}\n`,
            secrets,
          ),
        );
        if (!ok && !warned.has(name)) {
          warned.add(name);
          warn(`The ${name} hook ${how}; the run goes on (see ${relativeLog}).`);
        }
      } catch (error) {
        if (!warned.has(name)) {
          warned.add(name);
          warn(`The ${name} hook could not run (${error instanceof Error ? error.message : String(error)}); the run goes on.`);
        }
      }
    },
    bell() {
      if (config?.bell && process.stderr.isTTY) process.stderr.write("\x07");
    },
  };
}
