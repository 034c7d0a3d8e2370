// The agent's answer file (output.json) is the agent's to write, so it is untrusted input: it is read
// once, never from a FIFO (which would block the runner for good) and never through a symbolic link
// (which would make a file outside the repository the answer).
import { describe, expect, it } from "vitest";
import { scenario } from "../helpers/scenario.js";

describe("the answer file the agent leaves", () => {
  it("a FIFO planted at output.json is no answer: the step ends at once, naming it", async () => {
    const s = await scenario({ runId: "fifo-1" });
    s.script({ 1: { sh: 'rm -f "$RUNNER_OUTPUT_FILE" && mkfifo "$RUNNER_OUTPUT_FILE"' } });
    const step = await s.step();
    expect(step.stderr).toMatch(/the output file \.runner\/iterations\/[a-z0-9-]+\/0001\/output\.json is not a regular file/);
    expect(step.exitCode).toBe(1);
  }, 30_000);

  it("a symbolic link at output.json is no answer, even to a valid answer outside the repository", async () => {
    const s = await scenario({ runId: "link-1" });
    s.script({
      1: {
        sh: 'printf \'{"status":"done","summary":"forged"}\' > "$SCENARIO_DIR/answer.json" && rm -f "$RUNNER_OUTPUT_FILE" && ln -s "$SCENARIO_DIR/answer.json" "$RUNNER_OUTPUT_FILE"',
      },
    });
    const step = await s.step();
    expect(step.stderr).toMatch(/the output file \.runner\/iterations\/[a-z0-9-]+\/0001\/output\.json is not a regular file/);
    expect(step.exitCode).toBe(1);
  });
});
