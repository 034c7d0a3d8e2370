// A scripted stand-in for the model provider GitHub Copilot CLI 1.0.102 talks to in BYOK mode
// (`copilot help providers`): COPILOT_PROVIDER_BASE_URL=http://127.0.0.1:PORT/v1 with
// COPILOT_PROVIDER_TYPE "openai" (the default) and wire API "completions" (the default) is the
// OpenAI Chat Completions API — POST /v1/chat/completions with `stream: true` and
// `stream_options.include_usage`, sent by the OpenAI JS SDK inside Copilot. No GitHub sign-in and no
// token exchange happen in this mode. The wire format is mock-openai-chat.ts's; Copilot's dialect:
// shell turns call its `bash` tool {command, description}, write turns its `create` tool {path,
// file_text}, whose path must be absolute (resolved against the "Current working directory: …" its
// system prompt names). A request without tools would be a side request (none was seen in prompt mode).
import path from "node:path";
import { chatCompletionsProtocol, type ChatDialect } from "./mock-openai-chat.js";
import { type MockServerHandle, type ScriptedModelOptions, startScriptedModel } from "./mock-model-script.js";

/** The model name the tests give Copilot (COPILOT_MODEL): BYOK needs one. */
export const COPILOT_MOCK_MODEL = "mock-model";

/** The environment that points Copilot CLI at the mock (BYOK), with the key it sends as a bearer token. */
export function copilotMockEnv(url: string, key: string): Record<string, string> {
  return {
    COPILOT_PROVIDER_BASE_URL: `${url}/v1`,
    COPILOT_PROVIDER_API_KEY: key,
    COPILOT_MODEL: COPILOT_MOCK_MODEL,
  };
}

/** The working directory Copilot's system prompt names ("* Current working directory: /tmp/…"). */
function workingDirectory(body: unknown): string | undefined {
  return /Current working directory: (\S+?)(?:\\n|\s|$)/.exec(JSON.stringify(body))?.[1];
}

const COPILOT_DIALECT: ChatDialect = {
  toolCall: (turn, body) => {
    if (turn.kind === "shell") return { name: "bash", arguments: { command: turn.command, description: `Run ${turn.command}` } };
    const root = workingDirectory(body);
    return { name: "create", arguments: { path: root ? path.resolve(root, turn.path) : turn.path, file_text: turn.content } };
  },
  isSide: (body) => {
    const tools = (body as { tools?: unknown } | undefined)?.tools;
    return !(Array.isArray(tools) && tools.length > 0);
  },
  sideText: "mock side answer",
};

export function startMockCopilot(options: ScriptedModelOptions): Promise<MockServerHandle> {
  return startScriptedModel(chatCompletionsProtocol(COPILOT_DIALECT), options);
}
