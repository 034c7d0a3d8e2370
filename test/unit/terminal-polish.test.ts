// The terminal polish of src/cli: when colour is used (style.ts), the guard's own lines after a red
// guard (guard-tail.ts, the views of progress.ts), the live block's progress line, and a live block
// that never leaves stale copies on the screen however wide its characters are.
import { describe, expect, it } from "vitest";
import { guardOutputOf, guardTail } from "../../src/cli/guard-tail.js";
import { plainView, terminalView } from "../../src/cli/progress.js";
import { formatDuration } from "../../src/core/step/durations.js";
import { colourWanted, makeStyle } from "../../src/cli/style.js";
import { guardFailure } from "../../src/core/step/iteration.js";
import type { IterationRecord } from "../../src/core/step/iteration-record.js";
import type { TaskTree } from "../../src/core/tree/tree.js";
import type { StepResult } from "../../src/step/run-step.js";

const NOW = 1_790_000_000_000;
const ESC = String.fromCharCode(27);
const GUARD_OUTPUT = [
  "ok 1 - a",
  "ok 2 - b",
  "not ok 3 - c",
  "  expected ok",
  "  got bad",
  "FAIL: src/b.txt lacks ok",
  "1 of 3 tests failed",
  "",
].join("\n");

function tree(passedLeaves: number, leaves: number): TaskTree {
  const children = Array.from({ length: leaves }, (_, i) => ({
    id: `l${i}`,
    order: i,
    title: `Leaf ${i}`,
    goal: "g",
    acceptance: [],
    passes: i < passedLeaves,
    attempts: 0,
    max_attempts: 3,
    children: [],
  }));
  return {
    version: 1,
    root: { id: "root", order: 0, title: "Root", goal: "g", acceptance: [], passes: false, attempts: 0, max_attempts: 3, children },
  } as unknown as TaskTree;
}

function guardFailedStep(iteration = 2): StepResult {
  const failure = guardFailure({ outcome: "fail", command: ["just", "ci"], exitCode: 1, output: GUARD_OUTPUT });
  const record = {
    runId: "r1",
    iteration,
    stepKind: "leaf",
    nodeId: "b",
    kind: "execute",
    status: "done",
    guard: "fail",
    attemptsBefore: 0,
    attemptsAfter: 1,
    maxAttempts: 3,
    passesAfter: false,
    summary: "wrote b",
    failure,
    runnerError: undefined,
    treeToWrite: tree(1, 3),
    treeProblems: [],
    changedPaths: ["src/b.txt"],
    derivedPasses: [],
    protectedChanged: [],
    agentGit: undefined,
    progressed: true,
  } as unknown as IterationRecord;
  return {
    outcome: "committed",
    message: "",
    record,
    commit: "0123456789abcdef",
    runId: "r1",
    iteration,
    path: [],
    durations: { agentMs: 1, guardMs: 1, totalMs: 2 },
  };
}

/**
 * A terminal of `columns` columns as far as the live block needs one: text advancing the cursor by
 * each character's columns (CJK and emoji 2: the characters these tests use), wrapping at the right
 * edge, `\n`, cursor up (ESC [ n A) and erase below (ESC [ J). Colour codes take no room.
 */
function virtualTerminal(columns: number) {
  const rows: string[][] = [[]];
  let row = 0;
  let col = 0;
  const wide = (ch: string) => /[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\uff00-\uff60]|\p{Emoji_Presentation}/u.test(ch);
  const put = (ch: string, width: number) => {
    if (col + width > columns) {
      row++;
      col = 0;
    }
    rows[row] ??= [];
    rows[row]![col] = ch;
    if (width === 2) rows[row]![col + 1] = "";
    col += width;
  };
  const stream = {
    columns,
    write(text: string) {
      const tokens = text.match(new RegExp(`${ESC}\\[\\d*[A-Za-z]|\\n|[\\s\\S]`, "gu")) ?? [];
      for (const token of tokens) {
        if (token === "\n") {
          row++;
          col = 0;
          rows[row] ??= [];
        } else if (token.startsWith("\x1b[")) {
          const n = Number(token.slice(2, -1) || "1");
          if (token.endsWith("A")) row = Math.max(0, row - n);
          else if (token.endsWith("J")) {
            rows.length = row + 1;
            rows[row] = rows[row]!.slice(0, col);
          }
          // (m: colour, no room)
        } else put(token, wide(token) ? 2 : 1);
      }
      return true;
    },
  } as unknown as NodeJS.WriteStream;
  return { stream, screen: () => rows.map((cells) => cells.join("")) };
}

describe("colour: only on a terminal, never with NO_COLOR, FORCE_COLOR as Node reads it", () => {
  it.each([
    [true, {}, true],
    [false, {}, false],
    [true, { NO_COLOR: "1" }, false],
    [true, { NO_COLOR: "" }, false],
    [true, { NO_COLOR: "1", FORCE_COLOR: "1" }, false],
    [false, { FORCE_COLOR: "1" }, true],
    [false, { FORCE_COLOR: "" }, true],
    [false, { FORCE_COLOR: "3" }, true],
    [false, { FORCE_COLOR: "true" }, true],
    [true, { FORCE_COLOR: "0" }, false],
    [true, { FORCE_COLOR: "false" }, false],
    [true, { TERM: "dumb" }, false],
    [true, { NODE_DISABLE_COLORS: "1" }, false],
  ] as const)("a TTY: %s, env %j → colour %s", (tty, env, expected) => {
    expect(colourWanted(tty, env)).toBe(expected);
  });

  it("a style that is off writes no escape code; one that is on does, whatever stdout is here", () => {
    expect(makeStyle(false).failed("x")).toBe("x");
    expect(makeStyle(true).failed("x")).toBe("\x1b[31mx\x1b[39m");
    expect(makeStyle(true).passed("x")).toBe("\x1b[32mx\x1b[39m");
    expect(makeStyle(true).warning("x")).toBe("\x1b[33mx\x1b[39m");
    expect(makeStyle(true).dim("x")).toBe("\x1b[2mx\x1b[22m");
  });
});

describe("the guard's own lines", () => {
  it("are read back from the failure the next iteration is told, also when it was truncated (CONTRACT §9)", () => {
    const failure = guardFailure({ outcome: "fail", command: ["just", "ci"], exitCode: 1, output: GUARD_OUTPUT })!;
    expect(guardOutputOf(failure)).toBe(GUARD_OUTPUT);
    expect(guardTail(failure, 5)).toEqual(["not ok 3 - c", "  expected ok", "  got bad", "FAIL: src/b.txt lacks ok", "1 of 3 tests failed"]);
    const long = guardFailure({ outcome: "fail", command: ["just", "ci"], exitCode: 2, output: `${"noise\n".repeat(2000)}FAIL: the very end\n` })!;
    expect(guardTail(long, 2)).toEqual(["noise", "FAIL: the very end"]);
    expect(guardTail("The agent left the task tree invalid.", 5)).toEqual([]);
    // node --test ends with its counters: the failing test's own line comes first.
    const tap = [
      "TAP version 13",
      "# Subtest: multiply",
      "not ok 2 - multiply",
      "  ---",
      "  error: 'Expected values to be strictly equal:\n\n9 !== 20\n'",
      "  ...",
      "1..3",
      "# tests 3",
      "# pass 2",
      "# fail 1",
      "error: Recipe `ci` failed on line 3 with exit code 1",
    ].join("\n");
    expect(guardTail(guardFailure({ outcome: "fail", command: ["just", "ci"], exitCode: 1, output: tap }), 5)).toEqual([
      "not ok 2 - multiply",
      "…",
      "1..3",
      "# tests 3",
      "# pass 2",
      "# fail 1",
      "error: Recipe `ci` failed on line 3 with exit code 1",
    ]);
    expect(guardTail(undefined, 5)).toEqual([]);
  });

  it("follow the iteration's line in the plain view, indented, at most 5", () => {
    let out = "";
    plainView((line) => (out += line)).step(guardFailedStep());
    const lines = out.trimEnd().split("\n");
    expect(lines[0]).toMatch(
      /^Iteration 2: node b execute, agent said done, guard=fail; b open, attempts 1\/3 \(commit 0123456\) — The guard `just ci` exited with code 1\.$/,
    );
    expect(lines.slice(1)).toEqual([
      "    not ok 3 - c",
      "      expected ok",
      "      got bad",
      "    FAIL: src/b.txt lacks ok",
      "    1 of 3 tests failed",
    ]);
  });

  it("follow the iteration's line in the terminal view", () => {
    const { stream, screen } = virtualTerminal(200);
    const view = terminalView(stream, () => NOW, "r1");
    view.progress({ type: "phase", phase: "guard", iteration: 2, nodeId: "b", title: "Leaf b" });
    view.step(guardFailedStep());
    view.close();
    const shown = screen().filter((line) => line !== "");
    expect(shown[0]).toMatch(/^Iteration 2: node b execute/);
    expect(shown.slice(1)).toEqual([
      "    not ok 3 - c",
      "      expected ok",
      "      got bad",
      "    FAIL: src/b.txt lacks ok",
      "    1 of 3 tests failed",
    ]);
  });
});

describe("the live block", () => {
  it("has a progress line: leaves passed / total, iteration n of max, the run's elapsed time", () => {
    let now = NOW;
    const { stream, screen } = virtualTerminal(200);
    const view = terminalView(stream, () => now, "r1", { facts: { startedAt: NOW, maxIterations: 50, leaves: { passed: 0, total: 3 } } });
    view.progress({ type: "phase", phase: "agent", iteration: 1, nodeId: "b", title: "Leaf b" });
    expect(screen()).toContain("  0/3 leaves passed · iteration 1 of 50 · 0s elapsed");
    now += 65_000;
    view.step(guardFailedStep(1));
    view.progress({ type: "phase", phase: "agent", iteration: 2, nodeId: "b", title: "Leaf b" });
    expect(screen()).toContain("  1/3 leaves passed · iteration 2 of 50 · 1m 05s elapsed");
    view.close();
    expect(formatDuration(3_725_000, "clock")).toBe("1h 02m");
  });

  it("never leaves stale copies on the screen, however wide the title's characters are", () => {
    for (const title of ["日本語のとても長いタスクのタイトルです、".repeat(6), "🚀 launch ".repeat(20), "한국어 제목 ".repeat(20)]) {
      const columns = 80;
      const { stream, screen } = virtualTerminal(columns);
      let now = NOW;
      const view = terminalView(stream, () => now, "r1", { facts: { startedAt: NOW, maxIterations: 5 } });
      for (let i = 0; i < 20; i++) {
        now += 100;
        view.progress({ type: "phase", phase: i < 10 ? "agent" : "guard", iteration: 1, nodeId: "wide", title });
        view.progress({ type: "output", phase: "agent", iteration: 1, text: `${title} line ${i}\n` });
      }
      const lines = screen().filter((line) => line !== "");
      expect(
        lines.filter((line) => line.startsWith("▶ run r1")),
        title,
      ).toHaveLength(1);
      // The head, the progress line and three lines of output: nothing more.
      expect(lines, title).toHaveLength(5);
      view.close();
      expect(
        screen().filter((line) => line !== ""),
        title,
      ).toEqual([]);
    }
  });
});

describe("durations, written by one formatter (src/core/step/durations.ts)", () => {
  it("clock for the terminal's counters, timer for phases and the summary, words for sentences and the report", () => {
    const cases: [number, string, string, string][] = [
      [850, "0s", "0.8s", "850 ms"],
      [4_200, "4s", "4.2s", "4.2 s"],
      [42_000, "42s", "42.0s", "42 s"],
      [65_000, "1m 05s", "1m 05s", "1 min 05 s"],
      [3_725_000, "1h 02m", "1h 02m", "1 h 02 min"],
    ];
    for (const [ms, clock, timer, words] of cases)
      expect([formatDuration(ms, "clock"), formatDuration(ms, "timer"), formatDuration(ms)]).toEqual([clock, timer, words]);
  });
});
