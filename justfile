# The project's own guard: `just ci` is what the runner runs after an EXECUTE iteration.
set shell := ["bash", "-cu"]

bin := "node_modules/.bin"

# typecheck + lint + tests. The build is the typecheck: one strict tsc pass over src, machines,
# tests and benchmarks that also emits dist/, then dist/ bundled into dist/runner.cjs (CLI tests
# run the built binary, bin/runner.js, which loads that bundle).
ci: build lint test

build:
    {{bin}}/tsc -p tsconfig.json
    node scripts/bundle.mjs

typecheck:
    {{bin}}/tsc -p tsconfig.json --noEmit

lint:
    {{bin}}/eslint .

test:
    {{bin}}/vitest run
