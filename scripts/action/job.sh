#!/bin/sh
# The container's job (Dockerfile ENTRYPOINT; docs/scale.md runs it as a Kubernetes Job): clone the
# repository, then the same steps as the GitHub Action (run.mjs beside this file: start or continue
# runner/<run-id>, `runner run`, report, push). What a run needs, each checked first with one sentence:
#   RUNNER_REPOSITORY  a clone URL with push rights (e.g. https://x-access-token:TOKEN@github.com/o/r.git)
#   HOME               writable (the runner's state, the agents' own config)
#   the agent's credentials in the environment (OPENAI_API_KEY, ANTHROPIC_API_KEY, ...)
# Optional: RUNNER_BASE (the branch to clone), INPUT_GOAL, INPUT_RUN_ID, INPUT_MAX_ITERATIONS
# (run.mjs), RUNNER_TEMP (where the report is written; default a folder under HOME).
set -u
fail() {
  echo "$1" >&2
  exit 1
}
[ -n "${RUNNER_REPOSITORY:-}" ] || fail "RUNNER_REPOSITORY is not set; give the job the clone URL of the repository, with push rights."
[ -n "${HOME:-}" ] && [ -d "$HOME" ] && [ -w "$HOME" ] || fail "HOME (${HOME:-unset}) is not a writable folder; the runner keeps its state there (mount an emptyDir at it)."
work="$HOME/job"
mkdir -p "$work" || fail "cannot create $work under HOME."
if [ -z "${RUNNER_TEMP:-}" ]; then
  RUNNER_TEMP="$work/out"
  export RUNNER_TEMP
fi
mkdir -p "$RUNNER_TEMP" || fail "cannot create RUNNER_TEMP ($RUNNER_TEMP)."
rm -rf "$work/repo"
if [ -n "${RUNNER_BASE:-}" ]; then
  git clone -q --branch "$RUNNER_BASE" "$RUNNER_REPOSITORY" "$work/repo" || fail "git could not clone RUNNER_REPOSITORY (branch $RUNNER_BASE); check the URL and its credentials."
else
  git clone -q "$RUNNER_REPOSITORY" "$work/repo" || fail "git could not clone RUNNER_REPOSITORY; check the URL and its credentials."
fi
cd "$work/repo" || exit 1
GITHUB_WORKSPACE="$work/repo" exec node "$(dirname "$0")/run.mjs"
