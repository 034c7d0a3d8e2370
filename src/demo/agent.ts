#!/usr/bin/env node
// The built-in deterministic demo agent (`[executor] kind = "demo"`): no network, no model. It
// follows the executor protocol (CONTRACT §6) for the demo project the `runner demo` command
// creates: it decomposes the goal into three leaves, writes each module with its test, and — when
// `fail_once` is on — writes a wrong `multiply` on its first attempt, so the guard fails once and
// the retry shows. Its choices depend only on the tree and the node, never on time or chance.
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import path from "node:path";
import type { TaskNode, TaskTree } from "../schemas/types.generated.js";

const LEAVES: Omit<TaskNode, "passes" | "attempts" | "children">[] = [
  {
    id: "add",
    order: 1,
    title: "Add two numbers",
    goal: "src/add.js exports add(a, b)",
    acceptance: ["add(2, 3) === 5", "test/add.test.js passes"],
    max_attempts: 3,
  },
  {
    id: "multiply",
    order: 2,
    title: "Multiply two numbers",
    goal: "src/multiply.js exports multiply(a, b)",
    acceptance: ["multiply(4, 5) === 20", "test/multiply.test.js passes"],
    max_attempts: 3,
  },
  {
    id: "calc",
    order: 3,
    title: "Evaluate sums of products",
    goal: 'src/calc.js exports calc(expr) for expressions like "2 + 3 * 4"',
    acceptance: ['calc("2 + 3 * 4") === 14', "test/calc.test.js passes"],
    max_attempts: 3,
  },
];

const FILES: Record<string, Record<string, string>> = {
  add: {
    "src/add.js": "export function add(a, b) {\n  return a + b;\n}\n",
    "test/add.test.js":
      'import test from "node:test";\nimport assert from "node:assert/strict";\nimport { add } from "../src/add.js";\n\ntest("add", () => {\n  assert.equal(add(2, 3), 5);\n  assert.equal(add(-1, 1), 0);\n});\n',
  },
  multiply: {
    "src/multiply.js": "export function multiply(a, b) {\n  return a * b;\n}\n",
    "test/multiply.test.js":
      'import test from "node:test";\nimport assert from "node:assert/strict";\nimport { multiply } from "../src/multiply.js";\n\ntest("multiply", () => {\n  assert.equal(multiply(4, 5), 20);\n  assert.equal(multiply(0, 7), 0);\n});\n',
  },
  calc: {
    "src/calc.js":
      'import { add } from "./add.js";\nimport { multiply } from "./multiply.js";\n\n/** Evaluates sums of products of numbers, e.g. "2 + 3 * 4". */\nexport function calc(expr) {\n  return expr\n    .split("+")\n    .map((term) => term.split("*").map(Number).reduce(multiply, 1))\n    .reduce(add, 0);\n}\n',
    "test/calc.test.js":
      'import test from "node:test";\nimport assert from "node:assert/strict";\nimport { calc } from "../src/calc.js";\n\ntest("calc", () => {\n  assert.equal(calc("2 + 3 * 4"), 14);\n  assert.equal(calc("7"), 7);\n});\n',
  },
};

/** The deliberate mistake of the first attempt on `multiply`. */
const WRONG_MULTIPLY = "export function multiply(a, b) {\n  return a + b; // wrong on purpose: the demo shows a failing guard and a retry\n}\n";

function findNode(node: TaskNode, id: string): TaskNode | undefined {
  if (node.id === id) return node;
  for (const child of node.children) {
    const found = findNode(child, id);
    if (found) return found;
  }
  return undefined;
}

function writeFiles(root: string, files: Record<string, string>): void {
  for (const [relative, text] of Object.entries(files)) {
    const file = path.join(root, relative);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, text);
  }
}

function answer(status: "done" | "retry" | "decomposed", summary: string): void {
  writeFileSync(process.env.RUNNER_OUTPUT_FILE!, `${JSON.stringify({ status, summary })}\n`);
}

function main(): void {
  const root = process.cwd();
  const treeFile = path.join(root, ".runner", "state", "tree.json");
  const tree = JSON.parse(readFileSync(treeFile, "utf8")) as TaskTree;
  const nodeId = process.env.RUNNER_NODE_ID ?? "";
  const failOnce = process.env.RUNNER_DEMO_FAIL_ONCE !== "0";
  readFileSync(0); // the prompt, on stdin; the demo agent needs only the node id

  if (process.env.RUNNER_STEP_KIND === "repair") {
    answer("done", "The demo agent never breaks the tree, so there is nothing to repair.");
    return;
  }
  const node = findNode(tree.root, nodeId);
  if (!node) {
    answer("retry", `The demo agent does not know node ${nodeId}.`);
    return;
  }
  if (node.id === tree.root.id) {
    node.children = LEAVES.map((leaf) => ({ ...leaf, passes: false, attempts: 0, children: [] }));
    writeFileSync(treeFile, `${JSON.stringify(tree, null, 2)}\n`);
    console.log(`decomposing ${node.id} into ${LEAVES.map((leaf) => leaf.id).join(", ")}`);
    answer("decomposed", `Split the goal into ${LEAVES.length} leaves: ${LEAVES.map((leaf) => leaf.id).join(", ")}.`);
    return;
  }
  const files = FILES[node.id];
  if (!files) {
    answer("retry", `The demo agent has no plan for ${node.id}.`);
    return;
  }
  if (node.id === "multiply" && failOnce && node.attempts === 0) {
    writeFiles(root, { ...files, "src/multiply.js": WRONG_MULTIPLY });
    console.log("writing src/multiply.js and its test (with a deliberate bug)");
    answer("done", "Wrote src/multiply.js and test/multiply.test.js.");
    return;
  }
  writeFiles(root, files);
  for (const file of Object.keys(files)) console.log(`writing ${file}`);
  answer("done", `Wrote ${Object.keys(files).join(" and ")}.`);
}

main();
