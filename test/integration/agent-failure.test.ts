// An agent (any kind) that ends without an answer and with a non-zero exit is reported in its own
// words — its exit code and the last lines of its stderr — not as "no output file"; an agent that
// answered is judged on its answer, whatever its exit code.
import { describe, expect, it } from "vitest";
import { scenario, subject } from "../helpers/scenario.js";

describe("a command agent's failure", () => {
  it("no answer and exit 3: the runner error names the exit code and the last stderr lines, in stderr, meta.json and the commit", async () => {
    const s = await scenario({ runId: "fail-1" });
    s.script({ 1: { printErr: "connecting to the model\nfatal: the model API answered 401 (invalid key)", exit: 3 } });
    const step = await s.step();
    expect(step.exitCode).toBe(1);
    const sentence = "node exited with code 3: connecting to the model / fatal: the model API answered 401 (invalid key)";
    expect(step.stderr.trim()).toBe(
      `Iteration 1 ended in a runner error: ${sentence}. It was recorded and committed as a retry without using an attempt (its logs: .runner/iterations/fail-1/0001/); fix the cause and run \`runner step\` again.`,
    );
    expect(s.meta(1).executor).toMatchObject({ exit_code: 3, error: sentence });
    expect(s.meta(1).runner_error).toEqual({ kind: "agent_failed", message: sentence });
    expect(await s.subjects()).toEqual([subject("fail-1", 1, "root", "decompose", "skipped")]);
    expect(await s.message()).toContain(`Runner-Error: agent_failed: ${sentence}`);
  });

  it("no answer, exit 0: still the missing answer; an answer with exit 3: judged on the answer", async () => {
    const s = await scenario({ runId: "fail-2" });
    s.script({ 1: { printErr: "nothing to say" }, 2: { write: { "src/a.txt": "a\n" }, status: "done", exit: 3 } });
    const first = await s.step();
    expect(first.exitCode).toBe(1);
    expect(first.stderr).toContain("the agent wrote no output file");
    const second = await s.step();
    expect(second.stderr).toBe("");
    expect(second.exitCode).toBe(0);
    expect(s.meta(2).executor).toMatchObject({ exit_code: 3, error: null });
    expect(s.readTree().root.passes).toBe(true);
  });
});
