// The views of `runner run` (src/cli/progress.ts): on a terminal the live block shows the agent's
// readable lines (not its raw JSON events) and its turns and tokens in the head line; the summary of
// every view carries the run's usage.
import { describe, expect, it } from "vitest";
import { localClock } from "../../src/adapters/executors/agent-session.js";
import { jsonView, plainView, summaryLines, terminalView } from "../../src/cli/progress.js";
import { AgentEventReader } from "../../src/agents/event-reader.js";
import type { RunSummary } from "../../src/run/run-loop.js";

const NOW = 1_790_000_000_000;

function fakeTerminal(): { stream: NodeJS.WriteStream; screen: () => string } {
  let written = "";
  const stream = { columns: 200, write: (text: string) => ((written += text), true) } as unknown as NodeJS.WriteStream;
  // The last block drawn: everything after the last erase sequence.
  return { stream, screen: () => written.split("\x1b[J").at(-1)! };
}

const SUMMARY: RunSummary = {
  exitCode: 0,
  reason: "Done: the root passes (run r1).",
  runId: "r1",
  iterations: 2,
  passes: 1,
  failures: { total: 0, guard: 0, retry: 0, runner_error: 0, invalid_tree: 0, other: 0 },
  agentMs: 1200,
  guardMs: 300,
  runnerMs: 100,
  totalMs: 1600,
  waitMs: 0,
  usage: { input_tokens: 3600, cached_input_tokens: 900, output_tokens: 240, reasoning_tokens: null, cost_usd: 0.0105 },
};

describe("runner run views", () => {
  it("the live block shows what the agent does and its turns and tokens, never its JSON events", () => {
    const { stream, screen } = fakeTerminal();
    const view = terminalView(stream, () => NOW, "r1");
    const reader = new AgentEventReader(
      "claude",
      localClock(() => NOW),
    );
    view.progress({ type: "phase", phase: "agent", iteration: 3, nodeId: "b", title: "Leaf b" });
    const events = [
      { type: "system", subtype: "init", session_id: "s", model: "claude-opus-5-5", permissionMode: "acceptEdits" },
      {
        type: "assistant",
        message: {
          id: "m1",
          model: "claude-opus-5-5",
          content: [{ type: "tool_use", id: "t1", name: "Bash", input: { command: "just ci" } }],
          usage: { input_tokens: 900, cache_read_input_tokens: 300, output_tokens: 80 },
        },
      },
      {
        type: "assistant",
        message: {
          id: "m2",
          model: "claude-opus-5-5",
          content: [{ type: "tool_use", id: "t2", name: "Edit", input: { file_path: "/r/src/b.ts" } }],
          usage: { input_tokens: 900, cache_read_input_tokens: 300, output_tokens: 80 },
        },
      },
    ];
    for (const event of events) {
      for (const line of reader.push(`${JSON.stringify(event)}\n`))
        view.progress({ type: "output", phase: "agent", iteration: 3, text: `${line}\n` });
    }
    const block = screen();
    view.close();
    expect(block).toContain("▶ run r1 · iteration 3 · agent · 0.0s · turn 2 · 2.4k tokens in (600 cached) · 160 out · b “Leaf b”");
    expect(block).toContain("  │ $ just ci\n");
    expect(block).toContain("  │ ✎ /r/src/b.ts (edit)\n");
    expect(block).not.toContain("{");
    expect(block).not.toContain("\u0001");
  });

  it("the summary carries the run's usage: plain lines, and --json", () => {
    expect(summaryLines(SUMMARY)).toEqual([
      "Done: the root passes (run r1).",
      "2 iterations, 1 passed, 0 failed; time: agent 1.2s, guard 0.3s, runner 0.1s (total 1.6s)",
      "usage: tokens 3,600 in (900 cached), 240 out; cost $0.0105",
    ]);
    expect(summaryLines({ ...SUMMARY, usage: undefined })).toHaveLength(2);
    let plain = "";
    plainView((line) => (plain += line)).summary(SUMMARY);
    expect(plain).toContain("usage: tokens 3,600 in");
    let json = "";
    jsonView(
      (line) => (json += line),
      () => NOW,
    ).summary(SUMMARY);
    expect(JSON.parse(json)).toMatchObject({
      type: "summary",
      usage: { input_tokens: 3600, cached_input_tokens: 900, output_tokens: 240, reasoning_tokens: null, cost_usd: 0.0105 },
    });
  });
});
