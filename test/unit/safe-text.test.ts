// safeText: what the agent or the guard printed, made safe for a commit message (issue 19).
import { describe, expect, it } from "vitest";
import { formatCommitMessage } from "../../src/core/commit/loop-history.js";
import { LINE_LIMIT, safeText } from "../../src/core/base/text-limits.js";

describe("safeText", () => {
  it("writes NUL and other control bytes as \\xNN, drops ANSI sequences, makes \\r a line end, keeps tabs and text", () => {
    expect(safeText("FAIL\u0000 \u0001x\u001b[31mred\u001b[0m\tA\r\nB\rC\u007f")).toBe("FAIL\\x00 \\x01xred\tA\nB\nC\\x7f");
  });

  it("makes a lone surrogate U+FFFD and keeps a pair whole", () => {
    expect(safeText("a\ud800b\udc00c 😀")).toBe("a\ufffdb\ufffdc 😀");
  });

  it("clips a line over the limit with …, and is idempotent", () => {
    const long = `${"x".repeat(LINE_LIMIT + 50)}\nshort`;
    const once = safeText(long);
    expect(once.split("\n")[0]).toHaveLength(LINE_LIMIT);
    expect(once.split("\n")[0]!.endsWith("…")).toBe(true);
    expect(safeText(once)).toBe(once);
  });

  it("is what the commit message builder applies: no control byte reaches a message", () => {
    const message = formatCommitMessage(
      { kind: "execute", runId: "r1", iteration: 1, nodeId: "a", guard: "fail" },
      { summary: "did\u0000it", failure: "The guard `x` exited with code 1.\nIts output:\nFAIL\u0000\ufffd", runnerError: "e\u0007" },
    );
    // eslint-disable-next-line no-control-regex
    expect(message).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/);
    expect(message).toContain("did\\x00it");
  });
});
