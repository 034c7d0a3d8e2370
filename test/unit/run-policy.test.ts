// What `runner run` does after a runner error (src/core/step/run-policy.ts): a failed login stops the run
// (no retry cures it), in every agent's own words; a crash or a model API's failure is retried.
import { describe, expect, it } from "vitest";
import { afterRunnerError } from "../../src/core/step/run-policy.js";

describe("after a runner error", () => {
  const failed = (message: string) => afterRunnerError({ kind: "agent_failed", message });

  it.each([
    "codex failed (exit code 1): unexpected status 401 Unauthorized",
    "claude failed: Invalid API key · Please run /login",
    "gemini failed (exit code 41): Please set an Auth method",
    "copilot exited with code 1: No authentication information found. / Copilot can be authenticated with GitHub using …",
    "copilot exited with code 1: Authentication token found but could not be validated.",
    "pi failed (exit code 1): No API key found for anthropic",
  ])("a failed login stops the run: %s", (message) => {
    expect(failed(message)).toBe("stop");
  });

  it.each(["claude failed: API Error: 529 Overloaded", "codex exited with code 1: stream disconnected before completion"])(
    "a crash or the model API's failure is retried: %s",
    (message) => {
      expect(failed(message)).toBe("retry");
    },
  );
});
