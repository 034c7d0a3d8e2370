// What `runner run` writes to its status file for `runner watch` (src/cli/live-status-view.ts): a new
// phase at once when the file has been quiet, but an iteration of a fast agent — five phase changes
// and its end within a few ms — one write and one a moment later, not six renames of the file.
import { afterEach, describe, expect, it, vi } from "vitest";
import type { LiveStatusFile } from "../../src/adapters/records/live-status.js";
import type { LiveStatus } from "../../src/core/step/live-status.js";
import { liveStatusView } from "../../src/cli/live-status-view.js";
import type { StepResult } from "../../src/step/run-step.js";

afterEach(() => void vi.useRealTimers());

function view() {
  vi.useFakeTimers({ now: 1_000_000 });
  const written: LiveStatus[] = [];
  const file = { write: (status: LiveStatus) => written.push(structuredClone(status)), remove: () => undefined } as unknown as LiveStatusFile;
  const live = liveStatusView(file, Date.now, { runId: "r", startedAt: Date.now(), maxIterations: undefined, budgets: null as never });
  return { live, written };
}

const phases = ["prompt", "agent", "guard", "commit"] as const;
const ended = { path: [], durations: { agentMs: 1, guardMs: 1, totalMs: 5 } } as unknown as StepResult;

describe("the status file of a run", () => {
  it("is written once for a fast iteration's phases, and with its end a moment later", () => {
    const { live, written } = view();
    for (const phase of phases) {
      live.progress({ type: "phase", phase, iteration: 1, nodeId: "a" });
      vi.advanceTimersByTime(2);
    }
    live.step(ended);
    expect(written.map((status) => status.phase)).toEqual(["prompt"]);
    vi.advanceTimersByTime(250);
    expect(written.map((status) => status.phase)).toEqual(["prompt", null]);
    expect(written.at(-1)?.iteration).toBe(1);
  });

  it("is written at once for a phase that comes after a quiet moment", () => {
    const { live, written } = view();
    live.progress({ type: "phase", phase: "prompt", iteration: 1, nodeId: "a" });
    vi.advanceTimersByTime(300);
    live.progress({ type: "phase", phase: "agent", iteration: 1, nodeId: "a" });
    expect(written.map((status) => status.phase)).toEqual(["prompt", "agent"]);
  });
});
