# The project's own guard: `just ci` is what the runner runs after an EXECUTE iteration.
set shell := ["bash", "-cu"]

bin := "node_modules/.bin"

# typecheck + build + lint + tests. tsc only type-checks (src, machines, tests, benchmarks); the
# build bundles the CLI into dist/runner.mjs, which the CLI tests run through bin/runner.js.
ci: typecheck build format lint test

typecheck:
    {{bin}}/tsc -p tsconfig.json

build:
    node scripts/bundle.mjs

# The formatter (Biome) in check mode: `npm run fmt` writes its fixes.
format:
    {{bin}}/biome format .

lint:
    {{bin}}/eslint .

test:
    {{bin}}/vitest run
