// What every machine of the iteration shares, built once: the typed placeholder of an actor the
// driver provides; the failure transitions of an invoked actor (a bug ends the step "crashed"; any
// other failure goes where the state says: a runner error to the recovery, or an ending with its
// sentence); and a child machine's scaffolding: the `route` it hands back as its output, its final
// states (one per route), the actions that set the route.
import { assign, fromPromise, type AnyEventObject } from "xstate";
import { errorMessage, isBug } from "../src/errors.js";
import type { RunnerErrorKind } from "../src/core/step/runner-errors.js";
import type { RunnerErrorFact } from "../src/core/step/step-facts.js";
import type { Ending, RecoveryInput, Route } from "./iteration-types.js";

/** An actor the driver must provide (machines/iteration.ts `createIterationMachine`). */
export function placeholder<Output, Input>(name: string) {
  return fromPromise<Output, Input>(async () => {
    throw new Error(`actor ${name} was not provided`);
  });
}

/** A child machine's context: its input, and the route it hands back (until set: a bug, "crashed"). */
export interface Routed {
  route: Route;
}

/**
 * The route of a child machine that ends without choosing one: a bug in the machine, reported as one
 * (the step ends "crashed"). Every final state of a child is entered by a transition that sets its route.
 */
export function unrouted(machine: string): Ending {
  return { to: "crashed", error: new TypeError(`the ${machine} machine ended without choosing where the step goes on`) };
}

/**
 * What every child machine's config begins with: its id; what it is invoked with (its description,
 * which `runner diagram` shows); its context, its input with no route chosen yet; its output, the route.
 */
export function routedChild<Input extends object>(id: string, description: string) {
  return {
    id,
    description,
    context: ({ input }: { input: Input }) => ({ ...input, route: unrouted(id) }),
    output: ({ context }: { context: Routed }) => context.route,
  };
}

/** A child's final states, one per route it can hand back (each named after the parent's state it leads to). */
export function finals<const Name extends string>(...names: Name[]) {
  return Object.fromEntries(names.map((name) => [name, { type: "final" as const }])) as { [Key in Name]: { type: "final" } };
}

const errorOf = (event: AnyEventObject): unknown => (event as { error?: unknown }).error;

/** The guard every failure transition names; spread into each machine's `setup({ guards })`. */
export const FAILURE_GUARDS = {
  /** An unexpected exception in an actor: a bug, not a runner error. */
  isBug: ({ event }: { event: AnyEventObject }) => isBug(errorOf(event)),
};

/** The actions routes are set with; spread into each machine's `setup({ actions })`. */
export function routeActions<C extends Routed>() {
  return {
    /** A transition says where the step goes on. */
    route: assign<C, AnyEventObject, { route: Route }, AnyEventObject, never>((_, params) => ({ route: params.route }) as Partial<C>),
    /** A bug: nothing more is written; the journal lets the next step record the iteration. */
    routeBug: assign<C, AnyEventObject, undefined, AnyEventObject, never>(
      ({ event }) => ({ route: { to: "crashed", error: errorOf(event) } satisfies Route }) as Partial<C>,
    ),
  };
}

/** An invoked actor's `onError`: a bug ends the step "crashed"; any other failure takes `otherwise`. */
export function onFailure<const T extends object>(otherwise: T) {
  return [{ guard: "isBug" as const, target: "crashed" as const, actions: "routeBug" as const }, otherwise];
}

/** The failure of an actor the step cannot go on without: it ends `to` ("failed" or "refused") with what `ending` says. */
export function endOnError<To extends "failed" | "refused", C>(
  to: To,
  ending: (error: unknown, context: C) => Omit<Extract<Ending, { to: To }>, "to">,
) {
  return {
    target: to,
    actions: {
      type: "route" as const,
      params: ({ context, event }: { context: C; event: AnyEventObject }) => ({ route: { ...ending(errorOf(event), context), to } as Ending }),
    },
  };
}

/**
 * An actor failed for a reason outside the runner (git, the file system): a runner error (seed 002),
 * recovered by the `recovery` machine with what `recovery` says the iteration knew.
 */
export function recoverOnError<C>(kind: RunnerErrorKind, recovery: (context: C, runnerError: RunnerErrorFact) => RecoveryInput) {
  return {
    target: "recovery" as const,
    actions: {
      type: "route" as const,
      params: ({ context, event }: { context: C; event: AnyEventObject }) => ({
        route: { to: "recovery", input: recovery(context, { kind, message: errorMessage(errorOf(event)) }) } satisfies Route,
      }),
    },
  };
}
