// Round trips of the runner's codecs (issue 29, "one codec per artifact"): what is written is read
// back as it was — a person's edit subject and its trailers (src/core/commit/commit-message.ts), every
// Runner-Change line (src/core/edit/edit-changes.ts) and config.toml edited key by key
// (src/core/edit/config-edit.ts, read back by edit-changes' configValues). Tree.json's and the loop
// subject's round trips are in properties.test.ts.
import fc from "fast-check";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  commitKindOf,
  EDIT_VERBS,
  NODE_ID,
  formatPersonEditMessage,
  parsePersonEditSubject,
  splitTrailers,
  type PersonEditSubject,
} from "../../src/core/commit/commit-message.js";
import { editConfig } from "../../src/core/edit/config-edit.js";
import { configValues, formatChange, parseChange, type EditChange } from "../../src/core/edit/edit-changes.js";
import { PROJECT_ROOT } from "../helpers/sandbox.js";

const RUNS = { numRuns: 300 } as const;
const nodeId = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,20}$/);
const runId = fc.stringMatching(/^[A-Za-z0-9._-]{1,20}$/);
const configKey = fc.constantFrom("limits.max_iterations", "limits.iteration_timeout_seconds", "guard.command", "executor.model", "hooks.bell");

const subjectArb: fc.Arbitrary<PersonEditSubject> = fc.oneof(
  fc.record({ runId: fc.option(runId, { nil: undefined }), verb: fc.constantFrom(...EDIT_VERBS), target: nodeId }),
  fc.record({
    runId: fc.option(runId, { nil: undefined }),
    verb: fc.constant("config" as const),
    target: fc.uniqueArray(configKey, { minLength: 1, maxLength: 3 }).map((keys) => keys.join(", ")),
  }),
);

const changeArb: fc.Arbitrary<EditChange> = fc.oneof(
  fc.record({ kind: fc.constant("added" as const), node: nodeId, parent: nodeId }),
  fc.record({ kind: fc.constant("removed" as const), node: nodeId, parent: nodeId }),
  fc.record({ kind: fc.constant("moved" as const), node: nodeId, from: nodeId, to: nodeId }),
  fc.record({ kind: fc.constant("field" as const), node: nodeId, field: fc.constantFrom("title" as const, "goal" as const, "acceptance" as const) }),
  fc.record({
    kind: fc.constant("field" as const),
    node: nodeId,
    field: fc.constantFrom("order" as const, "max_attempts" as const),
    from: fc.integer({ min: -50, max: 50 }),
    to: fc.integer({ min: -50, max: 50 }),
  }),
  fc.record({ kind: fc.constant("new-root" as const), node: nodeId, over: nodeId }),
  fc.record({ kind: fc.constant("finished" as const), count: fc.nat(1000) }),
  fc.record({ kind: fc.constant("config" as const), key: configKey, value: fc.jsonValue() }),
  fc.record({ kind: fc.constant("config-unset" as const), key: configKey }),
);

describe("the commit message codec (properties)", () => {
  it("a person's edit: its subject parses back, and it is read as a runner-made edit with every trailer in order", () => {
    fc.assert(
      // (the changes as the runner writes them: its vocabulary, never an empty or blank line)
      fc.property(subjectArb, fc.array(changeArb.map(formatChange), { maxLength: 4 }), (subject, changes) => {
        const message = formatPersonEditMessage(subject, "A Person <a@example.com>", changes);
        const [head, ...rest] = message.split("\n");
        expect(parsePersonEditSubject(head!)).toEqual(subject);
        const kind = commitKindOf(head!, rest.join("\n"), subject.runId ?? "any");
        expect(kind).toEqual({ kind: "person-edit", subject, made: "runner" });
        const { trailers } = splitTrailers(rest.join("\n"));
        expect(trailers.first("edit")).toBe(subject.verb);
        expect(trailers.all("change")).toEqual(changes.map((change) => change.replace(/\s+/g, " ")));
      }),
      RUNS,
    );
  });
});

describe("the Runner-Change vocabulary (properties)", () => {
  it("parseChange(formatChange(c)) is c", () => {
    fc.assert(
      fc.property(changeArb, (change) => {
        const back = parseChange(formatChange(change));
        // (a JSON value round-trips as JSON does: -0 as 0)
        expect(back).toEqual(JSON.parse(JSON.stringify(change)));
      }),
      RUNS,
    );
  });
});

describe("config.toml, edited key by key (properties)", () => {
  const BASE =
    '# the runner\'s config\n[executor]\nkind = "command" # the agent\ncommand = ["sh", "agent.sh"]\n\n[guard]\ncommand = ["true"]\n\n[limits]\nmax_iterations = 7\n';
  it("what an edit sets and unsets is what the file then holds; every other key and every comment stays", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 100_000 }), fc.integer({ min: 1, max: 86_400 }), fc.boolean(), (iterations, timeout, unsetBell) => {
        const withBell = editConfig(BASE, [{ key: "hooks.bell", value: true }]).text;
        const edit = editConfig(withBell, [
          { key: "limits.max_iterations", value: iterations === 7 ? 8 : iterations },
          { key: "limits.iteration_timeout_seconds", value: timeout },
          ...(unsetBell ? [{ key: "hooks.bell", unset: true as const }] : []),
        ]);
        const values = configValues(edit.text)!;
        expect(values["limits.max_iterations"]).toBe(iterations === 7 ? 8 : iterations);
        expect(values["limits.iteration_timeout_seconds"]).toBe(timeout);
        expect(values["hooks.bell"]).toBe(unsetBell ? undefined : true);
        expect(values["guard.command"]).toEqual(["true"]);
        expect(edit.text).toContain("# the runner's config");
        expect(edit.text).toContain("# the agent");
      }),
      { numRuns: 100 },
    );
  });
});

describe("one node-id pattern", () => {
  it("the tree schema's id pattern is the codec's", () => {
    const schema = JSON.parse(readFileSync(path.join(PROJECT_ROOT, "schemas", "task_tree", "v1.schema.json"), "utf8")) as unknown;
    const patterns = JSON.stringify(schema).match(/"pattern":"([^"]+)"/g) ?? [];
    expect(patterns).toContain(`"pattern":"^${NODE_ID}$"`);
  });
});
