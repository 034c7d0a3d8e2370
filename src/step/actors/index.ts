// The wiring: the real actors of the iteration machine, each made from the step's dependencies.
import { GitRepo } from "../../adapters/git.js";
import { secretValues } from "../../core/text-limits.js";
import type { ActorDeps, StepDeps } from "../deps.js";
import { collectResultActor } from "./collect-result.js";
import { commitIterationActor } from "./commit-iteration.js";
import { inspectRepositoryActor } from "./inspect-repository.js";
import { loadInterruptedActor } from "./load-interrupted.js";
import { loadStateActor } from "./load-state.js";
import { persistIterationActor } from "./persist-iteration.js";
import { preparePromptActor } from "./prepare-prompt.js";
import { runAgentActor } from "./run-agent.js";
import { runGuardActor } from "./run-guard.js";

export function createStepActors(step: StepDeps) {
  const deps: ActorDeps = { ...step, git: new GitRepo(step.root), secrets: secretValues(step.env) };
  return {
    deps,
    actors: {
      inspectRepository: inspectRepositoryActor(deps),
      loadInterrupted: loadInterruptedActor(deps),
      loadState: loadStateActor(deps),
      preparePrompt: preparePromptActor(deps),
      runAgent: runAgentActor(deps),
      collectResult: collectResultActor(deps),
      runGuard: runGuardActor(deps),
      persistIteration: persistIterationActor(deps),
      commitIteration: commitIterationActor(deps),
    },
  };
}
