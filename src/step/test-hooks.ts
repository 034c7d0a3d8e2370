// Hooks for the crash and bug tests, off unless RUNNER_TEST_HOOKS=1:
// - RUNNER_TEST_KILL_AT=<state>: the runner kills itself with SIGKILL on entry to that state
//   (before the state's actor starts);
// - RUNNER_TEST_BUG_IN=<actor>: that actor throws a TypeError, as a bug in the runner would.
import { fromPromise } from "xstate";

export function killOnEntry(env: Record<string, string>): ((state: string) => void) | undefined {
  const target = env.RUNNER_TEST_HOOKS === "1" ? env.RUNNER_TEST_KILL_AT : undefined;
  if (target === undefined) return undefined;
  return (state) => {
    if (state === target) process.kill(process.pid, "SIGKILL");
  };
}

export function withInjectedBug<A extends Record<string, unknown>>(env: Record<string, string>, actors: A): A {
  const name = env.RUNNER_TEST_HOOKS === "1" ? env.RUNNER_TEST_BUG_IN : undefined;
  if (name === undefined || !(name in actors)) return actors;
  const broken = fromPromise<never, unknown>(async () => {
    throw new TypeError(`Cannot read properties of undefined (a bug injected into ${name} by RUNNER_TEST_BUG_IN)`);
  });
  return { ...actors, [name]: broken };
}
