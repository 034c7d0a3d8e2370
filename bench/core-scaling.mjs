// 3. Core scaling, in process: select, validate (schema + invariants on the parsed JSON, and
// passed-node immutability against the previous tree), apply state updates and serialize, on trees
// of growing size; time per node shows any non-linear growth. Imports the core modules of the build
// under test (bench/lib/core-modules.mjs).
import { log, median } from "./lib/common.mjs";
import { coreModules } from "./lib/core-modules.mjs";
import { makeTree, treeText } from "./lib/fixtures.mjs";

// With --expose-gc (npm run bench passes it), garbage left by the previous operation or fixture is
// collected before each timed operation: the figure is the operation's own work (its allocations and
// the collections they cause), not the debt of whatever ran before it, which made the per-node growth
// swing between 1.4× and 2.7× from one run to the next.
const collect = typeof globalThis.gc === "function" ? () => globalThis.gc() : () => undefined;

function timeMs(fn) {
  collect();
  const start = process.hrtime.bigint();
  const value = fn();
  return { ms: Number(process.hrtime.bigint() - start) / 1e6, value };
}

export async function coreScaling(sizes, repsFor, { warmups = 30 } = {}) {
  // (older builds updated the step's own parse in place: that is what they ran and what is measured)
  const { selectLeftmostOpenLeaf, checkTreeShape, checkPassedImmutable, applyStateUpdates: update, serializeTree } = await coreModules();

  // Each operation on fresh inputs as a step sees them: `previous` is the tree the step loaded,
  // `text` the agent's tree file (unchanged here), parsed anew for every run.
  const operations = {
    parse: ({ text }) => JSON.parse(text),
    select: ({ previous }) => selectLeftmostOpenLeaf(previous),
    validate: ({ previous, data }) => {
      const shape = checkTreeShape(data);
      if (!shape.tree) throw new Error(`invalid tree: ${JSON.stringify(shape.problems[0])}`);
      const problems = checkPassedImmutable(previous, shape.tree);
      if (problems.length > 0) throw new Error(`immutability: ${JSON.stringify(problems[0])}`);
      return shape.tree;
    },
    update: ({ previous, next, selectedId }) => update(previous, next, selectedId, { status: "done", guard: "pass" }),
    serialize: ({ updated }) => serializeTree(updated),
  };
  const names = Object.keys(operations);

  function once(fixture) {
    const times = {};
    const data = timeMs(() => operations.parse(fixture));
    times.parse = data.ms;
    const selection = timeMs(() => operations.select(fixture));
    times.select = selection.ms;
    const next = timeMs(() => operations.validate({ ...fixture, data: data.value }));
    times.validate = next.ms;
    const updated = timeMs(() => operations.update({ ...fixture, next: next.value, selectedId: selection.value.leaf.id }));
    times.update = updated.ms;
    const text = timeMs(() => operations.serialize({ updated: updated.value.tree }));
    times.serialize = text.ms;
    if (text.value.length < fixture.text.length / 2) throw new Error("serialized tree is too short");
    return times;
  }

  const fixtures = new Map();
  for (const nodes of sizes) {
    const text = treeText(makeTree(nodes));
    fixtures.set(nodes, { nodes, text, previous: JSON.parse(text) });
  }
  // Warm-up: every operation on the smallest tree until the JIT has settled, then once per size.
  for (let i = 0; i < warmups; i++) once(fixtures.get(sizes[0]));
  for (const nodes of sizes) once(fixtures.get(nodes));

  const rows = [];
  for (const nodes of sizes) {
    const reps = repsFor(nodes);
    log(`  core scaling: ${nodes} nodes, ${reps} runs`);
    const samples = Object.fromEntries(names.map((name) => [name, []]));
    const totals = [];
    for (let i = 0; i < reps; i++) {
      const times = once(fixtures.get(nodes));
      for (const name of names) samples[name].push(times[name]);
      totals.push(times.select + times.validate + times.update + times.serialize);
    }
    const ms = Object.fromEntries(names.map((name) => [name, Number(median(samples[name]).toFixed(3))]));
    const usPerNode = Object.fromEntries(names.map((name) => [name, Number(((median(samples[name]) * 1000) / nodes).toFixed(3))]));
    const total = median(totals);
    rows.push({
      nodes,
      reps,
      bytes: fixtures.get(nodes).text.length,
      ms,
      usPerNode,
      totalMs: Number(total.toFixed(3)),
      totalUsPerNode: Number(((total * 1000) / nodes).toFixed(3)),
    });
  }
  const first = rows[0];
  const last = rows[rows.length - 1];
  const growth = Object.fromEntries(
    [...names, "total"].map((name) => {
      const a = name === "total" ? first.totalUsPerNode : first.usPerNode[name];
      const b = name === "total" ? last.totalUsPerNode : last.usPerNode[name];
      return [name, Number((b / a).toFixed(2))];
    }),
  );
  return { rows, growth, from: first.nodes, to: last.nodes, collectedBefore: typeof globalThis.gc === "function" };
}
