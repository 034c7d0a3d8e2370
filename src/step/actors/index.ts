// The wiring: the real actors of the iteration machine, each made from the step's dependencies.
import { gitDir, GitRepo } from "../../adapters/git/git.js";
import { withRunnerJust } from "../../adapters/guard/just-bin.js";
import { repositoryState } from "../../adapters/state/runner-state.js";
import { secretValues } from "../../core/base/text-limits.js";
import type { ActorDeps, StepDeps } from "../deps.js";
import { collectResultActor } from "./collect-result.js";
import { commitIterationActor } from "./commit-iteration.js";
import { inspectRepositoryActor } from "./inspect-repository.js";
import { loadInterruptedActor } from "./load-interrupted.js";
import { loadStateActor } from "./load-state.js";
import { persistIterationActor } from "./persist-iteration.js";
import { preparePromptActor } from "./prepare-prompt.js";
import { prepareRecheckActor } from "./prepare-recheck.js";
import { runAgentActor } from "./run-agent.js";
import { runGuardActor } from "./run-guard.js";

export async function createStepActors(step: StepDeps) {
  const dir = await gitDir(step.root);
  const state = repositoryState(step.env, dir);
  // The runner's own `just` first on PATH, for the guard's lookup, the agent and the guard alike.
  const env = withRunnerJust(step.env);
  const deps: ActorDeps = { ...step, env, gitDir: dir, state, git: GitRepo.forStep(step.root, dir, state.index), secrets: secretValues(step.env) };
  return {
    deps,
    actors: {
      inspectRepository: inspectRepositoryActor(deps),
      loadInterrupted: loadInterruptedActor(deps),
      loadState: loadStateActor(deps),
      preparePrompt: preparePromptActor(deps),
      prepareRecheck: prepareRecheckActor(deps),
      runAgent: runAgentActor(deps),
      collectResult: collectResultActor(deps),
      runGuard: runGuardActor(deps),
      persistIteration: persistIterationActor(deps),
      commitIteration: commitIterationActor(deps),
    },
  };
}
