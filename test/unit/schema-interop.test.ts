// The generated ajv validators must work wherever the runner's modules are loaded: under Node (the
// CLI) and under vitest (every unit test). This file deliberately does NOT mock anything.
import { describe, expect, it } from "vitest";
import { validateConfigSchema, validateTreeSchema } from "../../src/core/base/schema.js";
import { node, tree } from "../helpers/sandbox.js";

describe("schema validators load without a loader-specific CommonJS interop", () => {
  // The generated file defines its own `require` (createRequire), so it needs no loader interop.
  it("validateTreeSchema accepts a valid tree whose nodes have titles", () => {
    expect(validateTreeSchema(tree(node("root"))).ok).toBe(true);
  });

  it("validateConfigSchema checks the minLength of executor.command items", () => {
    expect(validateConfigSchema({ executor: { kind: "command", command: [""] } })).toMatchObject({
      ok: false,
      problems: [{ path: "$.executor.command[0]", message: "must not be empty" }],
    });
  });
});
