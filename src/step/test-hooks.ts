// Hooks for the crash, bug and wait tests, off unless RUNNER_TEST_HOOKS=1:
// - RUNNER_TEST_KILL_AT=<state>: the runner kills itself with SIGKILL on entry to that state
//   (before the state's actor starts);
// - RUNNER_TEST_BUG_IN=<actor>: that actor throws a TypeError, as a bug in the runner would;
// - RUNNER_TEST_FAIL_IN=<actor>: that actor fails as the environment can make it fail (a runner
//   error), where the runner leaves no real fault to provoke (it clears what is in its way);
// - RUNNER_TEST_KILL_AT=maintenance: `runner run` kills itself with SIGKILL while git packs the
//   repository between iterations (src/adapters/git/maintenance.ts);
// - RUNNER_TEST_MAINTAIN_EVERY=<n>: `runner run` packs the repository every n iterations.
import { fromPromise } from "xstate";
import { IterationError } from "../errors.js";

export function killOnEntry(env: Record<string, string>): ((state: string) => void) | undefined {
  const target = env.RUNNER_TEST_HOOKS === "1" ? env.RUNNER_TEST_KILL_AT : undefined;
  if (target === undefined) return undefined;
  return (state) => {
    if (state === target) process.kill(process.pid, "SIGKILL");
  };
}

export function withInjectedFaults<A extends Record<string, unknown>>(env: Record<string, string>, actors: A): A {
  if (env.RUNNER_TEST_HOOKS !== "1") return actors;
  const result: Record<string, unknown> = { ...actors };
  const bug = env.RUNNER_TEST_BUG_IN;
  if (bug !== undefined && bug in actors) {
    result[bug] = fromPromise<never, unknown>(async () => {
      throw new TypeError(`Cannot read properties of undefined (a bug injected into ${bug} by RUNNER_TEST_BUG_IN)`);
    });
  }
  const fault = env.RUNNER_TEST_FAIL_IN;
  if (fault !== undefined && fault in actors) {
    result[fault] = fromPromise<never, unknown>(async () => {
      throw new IterationError(`an environment failure injected into ${fault} by RUNNER_TEST_FAIL_IN`);
    });
  }
  return result as A;
}

/**
 * RUNNER_TEST_WAIT_SCALE=<factor> (with RUNNER_TEST_HOOKS=1): `runner run` waits that fraction of
 * what it would (a retry's backoff, a limit's reset), so a test can wait for a reset a minute away.
 */
export function waitScale(env: Record<string, string>): number {
  if (env.RUNNER_TEST_HOOKS !== "1" || env.RUNNER_TEST_WAIT_SCALE === undefined) return 1;
  const scale = Number(env.RUNNER_TEST_WAIT_SCALE);
  return Number.isFinite(scale) && scale >= 0 ? scale : 1;
}

/** Whether `runner run` kills itself while git packs the repository (RUNNER_TEST_KILL_AT=maintenance). */
export function killDuringMaintenance(env: Record<string, string>): boolean {
  return env.RUNNER_TEST_HOOKS === "1" && env.RUNNER_TEST_KILL_AT === "maintenance";
}

/** How many iterations `runner run` lets pass between two packings (RUNNER_TEST_MAINTAIN_EVERY=<n> in tests). */
export function maintenanceEvery(env: Record<string, string>, every: number): number {
  if (env.RUNNER_TEST_HOOKS !== "1" || env.RUNNER_TEST_MAINTAIN_EVERY === undefined) return every;
  const n = Number(env.RUNNER_TEST_MAINTAIN_EVERY);
  return Number.isSafeInteger(n) && n >= 1 ? n : every;
}
