// A scripted stand-in for an OpenAI-compatible Chat Completions API, as OpenCode 1.18.33 calls it
// through its bundled @ai-sdk/openai-compatible provider: POST /v1/chat/completions with
// `stream: true` and `stream_options.include_usage`, answered with server-sent `data:` chunks
// (chat.completion.chunk objects, a usage chunk without choices, then `data: [DONE]`). OpenCode
// also asks the model for a session title first: a request without tools, answered with a short
// text. OpenCode is pointed here by a custom provider in OPENCODE_CONFIG_CONTENT (opencodeMockConfig).
// The wire format is mock-openai-chat.ts's (chatCompletionsProtocol); OpenCode's dialect: shell turns
// call its `bash` tool {command, description}, write turns its `write` tool {filePath, content} (a
// relative path is resolved against OpenCode's working directory), and a request without tools is
// the side request.
import { chatCompletionsProtocol, type ChatDialect, offersNoTools } from "./mock-openai-chat.js";
import { type MockServerHandle, type ScriptedModelOptions, startScriptedModel } from "./mock-model-script.js";

/** The provider id and model id the mock is configured under in OpenCode. */
export const OPENCODE_MOCK_PROVIDER = "runner_mock";
export const OPENCODE_MOCK_MODEL = "mock-model";

/**
 * An OpenCode config (the text of OPENCODE_CONFIG_CONTENT) with one custom provider at the mock.
 * The API key is read from the env var MOCK_OPENAI_API_KEY ("{env:…}" substitution).
 */
export function opencodeMockConfig(url: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    $schema: "https://opencode.ai/config.json",
    model: `${OPENCODE_MOCK_PROVIDER}/${OPENCODE_MOCK_MODEL}`,
    small_model: `${OPENCODE_MOCK_PROVIDER}/${OPENCODE_MOCK_MODEL}`,
    provider: {
      [OPENCODE_MOCK_PROVIDER]: {
        name: "runner mock",
        npm: "@ai-sdk/openai-compatible",
        options: { baseURL: `${url}/v1`, apiKey: "{env:MOCK_OPENAI_API_KEY}" },
        models: { [OPENCODE_MOCK_MODEL]: { name: "Mock model", cost: { input: 1, output: 2 }, limit: { context: 200000, output: 8192 } } },
      },
    },
    ...extra,
  };
}

/** OpenCode's tools; its session title is asked without tools. */
const OPENCODE_DIALECT: ChatDialect = {
  toolCall: (turn) =>
    turn.kind === "shell"
      ? { name: "bash", arguments: { command: turn.command, description: `Run ${turn.command}` } }
      : { name: "write", arguments: { filePath: turn.path, content: turn.content } },
  isSide: offersNoTools,
  sideText: "Mock session title",
};

export function startMockOpenCode(options: ScriptedModelOptions): Promise<MockServerHandle> {
  return startScriptedModel(chatCompletionsProtocol(OPENCODE_DIALECT), options);
}
