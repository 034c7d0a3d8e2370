// The layers of the code, checked by `just ci` (npm test): every arrow points down, and nothing
// depends on itself round a cycle — type-only imports included, since a type loop is a design loop.
//
//   cli ─┬─► run ─► step ─► machines
//        ├─► report, mcp, watch, diagram, demo
//        └─► adapters ─► agents ─► core ─► schemas (generated)
//
// Inside core and adapters, one folder per concept, and the concepts' arrows form no cycle.
// core and agents are pure (eslint forbids their I/O); core knows no agent module (the executor
// kinds and their keys are core's own table, src/core/config/executor-kinds.ts).
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    { name: "no-circular", severity: "error", comment: "A cycle: one of the modules should not know the other.", from: {}, to: { circular: true } },
    {
      name: "no-circular-concepts",
      severity: "error",
      comment:
        "src/core and src/adapters are grouped by concept (tree, commit, audit, plan, guard, …; git, process, files, …): the concepts form no cycle either, so each can be read knowing only those below it.",
      scope: "folder",
      from: { path: "^src/(core|adapters)/" },
      to: { circular: true },
    },
    {
      name: "core-is-the-floor",
      severity: "error",
      comment: "src/core is pure and at the bottom: it imports only itself and the generated schemas.",
      from: { path: "^src/core/" },
      to: { path: "^src/", pathNot: ["^src/core/", "^src/schemas/", "^src/errors\\.ts$", "^src/exit-codes\\.ts$"] },
    },
    {
      name: "agents-above-core-only",
      severity: "error",
      comment: "An agent module is pure: core and the schemas only.",
      from: { path: "^src/agents/" },
      to: { path: "^src/", pathNot: ["^src/agents/", "^src/core/", "^src/schemas/", "^src/errors\\.ts$"] },
    },
    {
      name: "adapters-below-the-step",
      severity: "error",
      comment: "Adapters do I/O for the layers above; they never reach up into the step, the run, the CLI or the report.",
      from: { path: "^src/adapters/" },
      to: { path: ["^src/(cli|step|run|report|mcp|watch|demo|diagram)/", "^machines/"] },
    },
    {
      name: "machines-know-only-core",
      severity: "error",
      comment: "The machines decide with core; their actors are provided from above.",
      from: { path: "^machines/" },
      to: { path: ["^src/(adapters|cli|step|run|report|mcp|watch|agents)/"] },
    },
    {
      name: "step-below-the-run",
      severity: "error",
      from: { path: "^src/step/" },
      to: { path: ["^src/(cli|run|report|mcp|watch)/"] },
    },
    {
      name: "run-below-the-cli",
      severity: "error",
      from: { path: "^src/(run|report|diagram)/" },
      to: { path: ["^src/(cli|mcp|watch)/"] },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    exclude: { path: "\\.generated\\.ts$" },
  },
};
