// 10. Persist: the tree atomically in canonical form, and the iteration's logs. Then commit the
// iteration (failures included) with the deterministic subject; a runner error is reported after
// its commit.
import { setup } from "xstate";
import { errorMessage } from "../src/errors.js";
import { runnerErrorSentence } from "../src/core/step/run-policy.js";
import { ACTORS } from "./actors.js";
import type { RecordingInput, Route } from "./iteration-types.js";
import { endOnError, FAILURE_GUARDS, finals, onFailure, routeActions, type Routed, routedChild } from "./transitions.js";

type RecordingContext = RecordingInput & Routed;

export const recordingMachine = setup({
  types: { context: {} as RecordingContext, input: {} as RecordingInput, output: {} as Route },
  actors: { persistIteration: ACTORS.persistIteration, commitIteration: ACTORS.commitIteration },
  guards: {
    ...FAILURE_GUARDS,
    hadRunnerError: ({ context }) => context.record.runnerError !== undefined,
  },
  actions: routeActions<RecordingContext>(),
}).createMachine({
  ...routedChild<RecordingInput>("recording", "start record, the iteration's record"),
  initial: "persist",
  states: {
    persist: {
      invoke: {
        id: "persistIteration",
        src: "persistIteration",
        input: ({ context }) => ({ record: context.record }),
        onDone: { target: "commit" },
        onError: onFailure(
          endOnError("failed", (error, context: RecordingContext) => ({
            message: `Could not persist the iteration: ${errorMessage(error)}; the working tree holds the agent's changes uncommitted.`,
            record: context.record,
            commit: undefined,
          })),
        ),
      },
    },
    commit: {
      invoke: {
        id: "commitIteration",
        src: "commitIteration",
        input: ({ context }) => ({ record: context.record, start: context.start }),
        onDone: [
          {
            guard: "hadRunnerError",
            target: "failed",
            actions: {
              type: "route",
              params: ({ context, event }) => ({
                route: {
                  to: "failed",
                  message: context.record.runnerError
                    ? runnerErrorSentence(context.start.runId, context.start.iteration, context.record.runnerError)
                    : "",
                  record: context.record,
                  commit: event.output,
                },
              }),
            },
          },
          {
            target: "committed",
            actions: {
              type: "route",
              params: ({ context, event }) => ({ route: { to: "committed", record: context.record, commit: event.output } }),
            },
          },
        ],
        onError: onFailure(
          endOnError("failed", (error, context: RecordingContext) => ({
            message: `Could not commit the iteration: ${errorMessage(error)}; the working tree holds the iteration uncommitted.`,
            record: context.record,
            commit: undefined,
          })),
        ),
      },
    },
    ...finals("committed", "failed", "crashed"),
  },
});
