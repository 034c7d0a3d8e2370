// A scripted stand-in for an OpenAI-compatible Chat Completions API as pi 0.73.1 calls it (through
// the OpenAI SDK of its pi-ai package: POST /v1/chat/completions with `stream: true` and
// `stream_options.include_usage`), pointed at by a custom provider in pi's documented
// ~/.pi/agent/models.json (`"api": "openai-completions"`, `baseUrl`, `apiKey` naming an environment
// variable) and chosen by ~/.pi/agent/settings.json (`defaultProvider`, `defaultModel`): piHome.
// The wire format is mock-openai-chat.ts's (chatCompletionsProtocol); pi's dialect: shell turns call
// its `bash` tool {command}, write turns its `write` tool {path, content} (a relative path is
// resolved against pi's working directory). pi makes no side requests (every request offers its
// tools).
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { chatCompletionsProtocol, type ChatDialect, offersNoTools } from "./mock-openai-chat.js";
import { type MockServerHandle, type ScriptedModelOptions, startScriptedModel } from "./mock-model-script.js";
import { tempDir } from "./sandbox.js";

/** The provider and model the mock is configured under in pi. */
export const PI_MOCK_PROVIDER = "runner_mock";
export const PI_MOCK_MODEL = "mock-model";
/** The environment variable models.json names for the mock's API key. */
export const PI_MOCK_KEY_ENV = "MOCK_OPENAI_API_KEY";

/** The mock's price (USD per million tokens): 900 uncached in, 300 cached in and 80 out cost 0.00121. */
const PRICE = { input: 1, output: 2, cacheRead: 0.5, cacheWrite: 0 };

/** A HOME whose ~/.pi/agent has the mock as a custom provider (models.json) and the default model (settings.json, plus `settings`). */
export function piHome(url: string, settings: Record<string, unknown> = {}): string {
  const home = tempDir("runner-pi-home-");
  const agentDir = path.join(home, ".pi", "agent");
  mkdirSync(agentDir, { recursive: true });
  const provider = {
    baseUrl: `${url}/v1`,
    api: "openai-completions",
    apiKey: PI_MOCK_KEY_ENV,
    models: [{ id: PI_MOCK_MODEL, name: "Mock model", cost: PRICE, contextWindow: 200000, maxTokens: 8192 }],
  };
  writeFileSync(path.join(agentDir, "models.json"), JSON.stringify({ providers: { [PI_MOCK_PROVIDER]: provider } }, null, 2));
  writeFileSync(
    path.join(agentDir, "settings.json"),
    JSON.stringify({ defaultProvider: PI_MOCK_PROVIDER, defaultModel: PI_MOCK_MODEL, ...settings }, null, 2),
  );
  return home;
}

const PI_DIALECT: ChatDialect = {
  toolCall: (turn) =>
    turn.kind === "shell"
      ? { name: "bash", arguments: { command: turn.command } }
      : { name: "write", arguments: { path: turn.path, content: turn.content } },
  isSide: offersNoTools,
  sideText: "mock side answer",
};

export function startMockPi(options: ScriptedModelOptions): Promise<MockServerHandle> {
  return startScriptedModel(chatCompletionsProtocol(PI_DIALECT), options);
}
