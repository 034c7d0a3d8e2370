# The project's own guard: `just ci` is what the runner runs after an EXECUTE iteration.
set shell := ["bash", "-cu"]

bin := "node_modules/.bin"

# typecheck + build + lint + tests. tsc only type-checks (src, machines, tests, benchmarks); the
# build bundles the CLI into dist/runner.cjs (and its chunks), which the CLI tests run through bin/runner.js.
ci: typecheck build format lint layers test

typecheck:
    {{bin}}/tsc -p tsconfig.json

build:
    node scripts/bundle.mjs

# The formatter (Biome) in check mode: `npm run fmt` writes its fixes.
format:
    {{bin}}/biome format .

lint:
    {{bin}}/eslint .

# The layers of the code and no cycles (.dependency-cruiser.cjs): every import points down.
layers:
    {{bin}}/depcruise src machines --config .dependency-cruiser.cjs --output-type err

test:
    {{bin}}/vitest run
