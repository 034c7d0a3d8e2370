// 4. Build the prompt pack and the context folder for the selected leaf; its policy sidecar is judged
//    first (an invalid one refuses the iteration before anything is written). Hands the prompt on to
//    `agentSession`.
import { assign, setup } from "xstate";
import { judgeNodePolicy, type NodePolicyVerdict } from "../src/core/guard/change-policy.js";
import type { PromptFacts } from "../src/core/step/step-facts.js";
import { ACTORS } from "./actors.js";
import { recoveryOf } from "./hand-offs.js";
import type { LeafPromptInput, Route } from "./iteration-types.js";
import { FAILURE_GUARDS, finals, onFailure, recoverOnError, routeActions, type Routed, routedChild } from "./transitions.js";

interface LeafPromptContext extends LeafPromptInput, Routed {
  /** The selected node's policy verdict. */
  policy?: NodePolicyVerdict;
}

export const leafPromptMachine = setup({
  types: { context: {} as LeafPromptContext, input: {} as LeafPromptInput, output: {} as Route },
  actors: { preparePrompt: ACTORS.preparePrompt },
  guards: {
    ...FAILURE_GUARDS,
    policyInvalid: ({ context }) => context.policy?.kind === "policyInvalid",
    promptReady: ({ context }) => context.policy?.kind === "policyValid",
  },
  actions: routeActions<LeafPromptContext>(),
}).createMachine({
  ...routedChild<LeafPromptInput>("leafPrompt", "start record, leaf"),
  initial: "buildPrompt",
  states: {
    buildPrompt: {
      invoke: {
        id: "preparePrompt",
        src: "preparePrompt",
        input: ({ context }) => ({ start: context.start, leaf: context.leaf }),
        onDone: { actions: assign(({ context, event }) => prompted(context, event.output)) },
        onError: onFailure(recoverOnError("other", (context: LeafPromptContext, error) => recoveryOf(context, error))),
      },
      always: [
        { guard: "policyInvalid", target: "refused" },
        { guard: "promptReady", target: "agentSession" },
      ],
    },
    ...finals("refused", "agentSession", "recovery", "crashed"),
  },
});

/** The policy's verdict, and the prompt handed to the agent (or the refusal). */
function prompted(context: LeafPromptContext, facts: PromptFacts): Pick<LeafPromptContext, "policy" | "route"> {
  const policy = judgeNodePolicy(facts.policy);
  if (policy.kind === "policyInvalid") return { policy, route: { to: "refused", message: policy.message } };
  const prompt = { text: facts.prompt, allowedWritePaths: policy.allowedWritePaths };
  return { policy, route: { to: "agentSession", input: { start: context.start, leaf: context.leaf, prompt } } };
}
