// The actors of an iteration: typed placeholders the machines invoke, supplied by the driver with
// `createIterationMachine(actors)` (machines/iteration.ts): the CLI gives real adapters
// (src/step/actors/), tests give scripted ones.
import type { RepositoryFacts } from "../src/core/step/safety.js";
import type { AgentRunFacts, CollectedFacts, GuardFacts, InterruptedState, LoadedState, PromptFacts } from "../src/core/step/step-facts.js";
import type {
  AgentRequest,
  CollectRequest,
  CommitFacts,
  CommitRequest,
  GuardRequest,
  LoadRequest,
  PersistRequest,
  PromptRequest,
  RecheckPrepareRequest,
} from "./iteration-types.js";
import { placeholder } from "./transitions.js";

export const ACTORS = {
  inspectRepository: placeholder<RepositoryFacts, { runIdOption: string | undefined }>("inspectRepository"),
  loadInterrupted: placeholder<InterruptedState, LoadRequest>("loadInterrupted"),
  loadState: placeholder<LoadedState, LoadRequest>("loadState"),
  preparePrompt: placeholder<PromptFacts, PromptRequest>("preparePrompt"),
  prepareRecheck: placeholder<{ deadlineMs: number }, RecheckPrepareRequest>("prepareRecheck"),
  runAgent: placeholder<AgentRunFacts, AgentRequest>("runAgent"),
  collectResult: placeholder<CollectedFacts, CollectRequest>("collectResult"),
  runGuard: placeholder<GuardFacts, GuardRequest>("runGuard"),
  persistIteration: placeholder<void, PersistRequest>("persistIteration"),
  commitIteration: placeholder<CommitFacts, CommitRequest>("commitIteration"),
};

/** The actors the driver supplies, by name. */
export type IterationActors = { [Name in keyof typeof ACTORS]: (typeof ACTORS)[Name] };
