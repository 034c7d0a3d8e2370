// A scripted stand-in for an OpenAI-compatible Chat Completions API, as Cline CLI 3.0.65 calls it
// through its `openai-compatible` provider (the AI SDK's openai-compatible client): POST
// {baseUrl}/chat/completions with `stream: true` and `stream_options.include_usage`, answered with
// server-sent `data:` chunks. The wire format is mock-openai-chat.ts's (chatCompletionsProtocol);
// Cline's dialect: shell turns call its `run_commands` tool {commands: [command]}, write turns its
// `editor` tool {path, new_text} with an absolute path (a relative one is resolved against the
// "Working Directory:" its system prompt names). Cline makes no side request; a request without
// tools would be one.
//
// Cline is pointed here by what `cline auth --provider openai-compatible --apikey … --modelid …
// --baseurl …` saves (clineProviderSettings): `<CLINE_DIR>/data/settings/providers.json`.
import path from "node:path";
import { chatCompletionsProtocol, type ChatDialect } from "./mock-openai-chat.js";
import { type MockServerHandle, type ScriptedModelOptions, startScriptedModel } from "./mock-model-script.js";

export const CLINE_MOCK_PROVIDER = "openai-compatible";
export const CLINE_MOCK_MODEL = "mock-model";

/** providers.json as `cline auth --provider openai-compatible --apikey <key> --modelid mock-model --baseurl <url>/v1` writes it (observed, 3.0.65). */
export function clineProviderSettings(url: string, key: string): Record<string, unknown> {
  return {
    version: 1,
    lastUsedProvider: CLINE_MOCK_PROVIDER,
    modes: {},
    providers: {
      [CLINE_MOCK_PROVIDER]: {
        settings: { provider: CLINE_MOCK_PROVIDER, apiKey: key, model: CLINE_MOCK_MODEL, baseUrl: `${url}/v1` },
        updatedAt: "2026-11-26T22:48:38.209Z",
        tokenSource: "manual",
      },
    },
  };
}

/** The working directory Cline's system prompt names ("4. Working Directory: /tmp/…"). */
function workingDirectory(body: unknown): string | undefined {
  return /Working Directory: (\S+?)(?:\\n|\s|$)/.exec(JSON.stringify(body))?.[1];
}

const CLINE_DIALECT: ChatDialect = {
  toolCall: (turn, body) => {
    if (turn.kind === "shell") return { name: "run_commands", arguments: { commands: [turn.command] } };
    const root = workingDirectory(body);
    return { name: "editor", arguments: { path: root ? path.resolve(root, turn.path) : turn.path, new_text: turn.content } };
  },
  isSide: (body) => {
    const tools = (body as { tools?: unknown } | undefined)?.tools;
    return !(Array.isArray(tools) && tools.length > 0);
  },
  sideText: "mock side answer",
};

export function startMockCline(options: ScriptedModelOptions): Promise<MockServerHandle> {
  return startScriptedModel(chatCompletionsProtocol(CLINE_DIALECT), options);
}
