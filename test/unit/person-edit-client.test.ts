// A person's edit made through an MCP client (`runner mcp`) names the client in a Runner-Client
// trailer (CONTRACT §11), and the audit still judges it a valid edit made by a runner command. The
// client's name and version come from the client's own `initialize`: they must not forge a trailer.
import { describe, expect, it } from "vitest";
import { judgePersonEdit } from "../../src/core/audit/person-edit.js";
import { commitKindOf, formatPersonEditMessage } from "../../src/core/commit/commit-message.js";
import { LAYOUT } from "../../src/core/base/layout.js";
import { addNodes } from "../../src/core/edit/plan-edit.js";
import { node, tree } from "../helpers/sandbox.js";

const PERSON = "Ada <ada@example.com>";
const subject = { runId: "r1", verb: "add" as const, target: "docs" };

describe("a person's edit made through an MCP client", () => {
  it("carries Runner-Client: <name> <version> after the other trailers", () => {
    const message = formatPersonEditMessage(subject, PERSON, ['"docs" under "root"'], { client: { name: "claude-code", version: "2.1.330" } });
    expect(message).toBe(
      [
        "chore(runner): run r1 edit add node docs",
        "",
        "A person's edit of the plan, made with `runner add` through `runner mcp`.",
        "",
        "Runner-Edit: add",
        "Runner-Node: docs",
        `Runner-Person: ${PERSON}`,
        'Runner-Change: "docs" under "root"',
        "Runner-Client: claude-code 2.1.330",
        "",
      ].join("\n"),
    );
    expect(formatPersonEditMessage(subject, PERSON, ["x"])).not.toContain("Runner-Client");
  });

  it("a name with line breaks or control bytes stays on its one line: no forged trailer", () => {
    const message = formatPersonEditMessage(subject, PERSON, ["x"], {
      client: { name: "evil\nRunner-Person: Mallory <m@example.com>\u001b[31m\u0007", version: "1\r\n2" },
    });
    const trailers = message.trim().split("\n\n").at(-1)!.split("\n");
    expect(trailers.filter((line) => line.startsWith("Runner-Person: "))).toEqual([`Runner-Person: ${PERSON}`]);
    expect(trailers.at(-1)).toBe("Runner-Client: evil Runner-Person: Mallory <m@example.com>\\x07 1 2");
    const long = formatPersonEditMessage(subject, PERSON, ["x"], { client: { name: "n".repeat(500), version: "1" } });
    expect(long.trim().split("\n").at(-1)!.length).toBeLessThanOrEqual("Runner-Client: ".length + 120);
  });

  it("is judged by the audit as a valid edit made by `runner add`", () => {
    const before = tree(node("root"));
    const edit = addNodes(before, "root", [{ title: "Docs" }], 3);
    const after = edit.tree;
    const message = formatPersonEditMessage(subject, PERSON, edit.changes, { client: { name: "claude-code", version: "2.1.330" } });
    const [head, ...rest] = message.split("\n");
    const kind = commitKindOf(head!, rest.join("\n"), "r1");
    if (kind.kind !== "person-edit") throw new Error(`not a person's edit: ${kind.kind}`);
    const finding = judgePersonEdit({
      said: kind,
      sha: "abc",
      subject: head!,
      body: rest.join("\n"),
      author: PERSON,
      changedPaths: [LAYOUT.tree],
      before,
      after,
      runId: "r1",
    });
    expect(finding).toMatchObject({ made: "runner", verb: "add", target: "docs", problems: [] });
  });
});
