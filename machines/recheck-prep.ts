// A re-check (`runner recheck`, or a leaf an imported plan marks finished): no agent. The iteration is
// journaled and logged like any other, and its budget starts; then `guarding`: the guard alone
// judges the leaf.
import { setup } from "xstate";
import { ACTORS } from "./actors.js";
import { recoveryOf } from "./hand-offs.js";
import type { RecheckPrepInput, Route } from "./iteration-types.js";
import { FAILURE_GUARDS, finals, onFailure, recoverOnError, routeActions, type Routed, routedChild } from "./transitions.js";

type RecheckPrepContext = RecheckPrepInput & Routed;

export const recheckPrepMachine = setup({
  types: { context: {} as RecheckPrepContext, input: {} as RecheckPrepInput, output: {} as Route },
  actors: { prepareRecheck: ACTORS.prepareRecheck },
  guards: FAILURE_GUARDS,
  actions: routeActions<RecheckPrepContext>(),
}).createMachine({
  ...routedChild<RecheckPrepInput>("recheckPrep", "start record, leaf, plan-finished batch"),
  initial: "prepareRecheck",
  states: {
    prepareRecheck: {
      tags: ["recorded"],
      invoke: {
        id: "prepareRecheck",
        src: "prepareRecheck",
        input: ({ context }) => ({ start: context.start, leaf: context.leaf }),
        onDone: {
          target: "guarding",
          actions: {
            type: "route",
            params: ({ context, event }) => ({
              route: {
                to: "guarding",
                input: { kind: "recheck", start: context.start, leaf: context.leaf, deadlineMs: event.output.deadlineMs, batch: context.batch },
              },
            }),
          },
        },
        onError: onFailure(recoverOnError("other", (context: RecheckPrepContext, error) => recoveryOf(context, error))),
      },
    },
    ...finals("guarding", "recovery", "crashed"),
  },
});
