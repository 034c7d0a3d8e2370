// 5.1 REPAIR TREE: a repair prompt instead of a leaf's (no leaf is selected), against the last valid
// tree and its problems. Hands the prompt on to `agentSession`.
import { setup } from "xstate";
import { ACTORS } from "./actors.js";
import { recoveryOf } from "./hand-offs.js";
import type { RepairPromptInput, Route } from "./iteration-types.js";
import { FAILURE_GUARDS, finals, onFailure, recoverOnError, routeActions, type Routed, routedChild } from "./transitions.js";

type RepairPromptContext = RepairPromptInput & Routed;

export const repairPromptMachine = setup({
  types: { context: {} as RepairPromptContext, input: {} as RepairPromptInput, output: {} as Route },
  actors: { preparePrompt: ACTORS.preparePrompt },
  guards: FAILURE_GUARDS,
  actions: routeActions<RepairPromptContext>(),
}).createMachine({
  ...routedChild<RepairPromptInput>("repairPrompt", "start record"),
  initial: "repairTree",
  states: {
    repairTree: {
      invoke: {
        id: "prepareRepairPrompt",
        src: "preparePrompt",
        input: ({ context }) => ({ start: context.start, leaf: undefined }),
        onDone: {
          target: "agentSession",
          actions: {
            type: "route",
            params: ({ context, event }) => ({
              route: {
                to: "agentSession",
                input: { start: context.start, leaf: undefined, prompt: { text: event.output.prompt, allowedWritePaths: undefined } },
              },
            }),
          },
        },
        onError: onFailure(
          recoverOnError("other", (context: RepairPromptContext, error) => recoveryOf({ start: context.start, leaf: undefined }, error)),
        ),
      },
    },
    ...finals("agentSession", "recovery", "crashed"),
  },
});
