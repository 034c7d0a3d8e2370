#!/usr/bin/env bash
# The action's install step (action.yml): `runner` on PATH through `npm install -g`.
#   RUNNER_PACKAGE empty (the default): from the action's own checkout, GITHUB_ACTION_PATH: what
#     GitHub downloaded of this repository at the ref the workflow names (tracked files only, no
#     dist/). `npm ci` there (the lockfile's exact dependencies, from the npm registry; the step
#     before restores ~/.npm, keyed on the lockfile's hash, and --prefer-offline takes what is cached
#     without asking again: the lockfile pins each version and its integrity), `npm pack` (its
#     prepack builds dist/), and that tarball installed: the files a published release would ship,
#     no registry release needed.
#   RUNNER_PACKAGE set: what `npm install -g` takes, a published version (guarded-runner@0.1.0) or a tarball.
# test/integration/action-install.test.ts runs this step from a clean copy of the repository.
set -euo pipefail
fail() {
  echo "${GITHUB_ACTIONS:+::error::}$1" >&2
  exit 1
}
if [ -n "${RUNNER_PACKAGE:-}" ]; then
  npm install -g --no-audit --no-fund "$RUNNER_PACKAGE" ||
    fail "npm install -g $RUNNER_PACKAGE failed (npm says why above); give the package input a published version (guarded-runner@0.1.0) or a tarball, or leave it empty to install from the action's own checkout."
else
  source="${GITHUB_ACTION_PATH:-}"
  [ -f "$source/package-lock.json" ] ||
    fail "GITHUB_ACTION_PATH (${source:-unset}) holds no package-lock.json; this step installs the runner from the action's own checkout, so run it as the action's step (or give the package input)."
  cd "$source"
  npm ci --prefer-offline --no-audit --no-fund || fail "npm ci in the action's checkout ($source) failed (npm says why above); check that the npm registry is reachable, or give the package input a published version or a tarball."
  packed="$(mktemp -d "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/runner-package-XXXXXX")"
  npm pack --silent --pack-destination "$packed" >/dev/null || fail "npm pack in the action's checkout ($source) failed (its build says why above)."
  npm install -g --prefer-offline --no-audit --no-fund "$packed"/*.tgz || fail "npm install -g of the runner built from the action's checkout failed (npm says why above)."
fi
runner --version
