// Types for scripts/install-test-agents.mjs (imported by test/real-agents/).
export interface AgentPin {
  package: string;
  version: string;
  bin: string;
}
export interface InstallOptions {
  cacheDir?: string;
  log?: (line: string) => void;
}
export const VERSIONS_FILE: string;
export function agentPins(): Record<string, AgentPin>;
export function agentsCacheDir(env?: NodeJS.ProcessEnv): string;
export function installTestAgent(kind: string, options?: InstallOptions): string;
export function installTestAgents(options?: InstallOptions): Record<string, string>;
