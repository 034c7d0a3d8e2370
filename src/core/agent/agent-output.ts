// The agent's answer (CONTRACT §6): output.json parsed and checked against the agent output schema.
import type { AgentOutput } from "../../schemas/types.generated.js";
import { formatProblem, jsonSyntaxMessage } from "../base/problems.js";
import { validateAgentOutputSchema } from "../base/schema.js";

export type AgentOutputCheck = { ok: true; output: AgentOutput } | { ok: false; reason: string };

/** The output file's text checked; `file` (repository-relative) names the file in the reason. */
export function parseAgentOutput(text: string | undefined, file?: string): AgentOutputCheck {
  if (text === undefined) return { ok: false, reason: `the agent wrote no output file${file ? ` (${file})` : ""}` };
  const name = file ? `the output file ${file}` : "the output file";
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    return { ok: false, reason: `${name} ${jsonSyntaxMessage(text, error)}` };
  }
  const result = validateAgentOutputSchema(data);
  if (!result.ok) return { ok: false, reason: `${name} does not match the agent output schema: ${result.problems.map(formatProblem).join("; ")}` };
  return { ok: true, output: result.value };
}
