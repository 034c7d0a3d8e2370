# The project's own guard: `just ci` is what the runner runs after an EXECUTE iteration.
set shell := ["bash", "-cu"]

bin := "node_modules/.bin"

# typecheck + lint + tests (the build comes first: CLI tests run the built binary)
ci: build typecheck lint test

build:
    {{bin}}/tsc -p tsconfig.build.json

typecheck:
    {{bin}}/tsc -p tsconfig.json --noEmit

lint:
    {{bin}}/eslint .

test:
    {{bin}}/vitest run
