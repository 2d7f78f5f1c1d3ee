export { AgentRuntime, DEFAULT_MAX_STEPS } from "./runtime";
export type { ExternalAgentPort, PromptOptions, RuntimeDeps, StartedTurn } from "./runtime";
export { layerTools, type SessionToolSource, type SessionToolsInput } from "./session-tools";
export type { TurnEmitter } from "./turn-emitter";
export { runTurn, runCompactionTurn } from "./loop";
export type { TurnOptions, TurnResult } from "./loop";
export { Context, checkpointMarkerText } from "./context";
export type { HistoryRecord } from "./context";
export { storeCheckpoints } from "./checkpoint-port";
export type { CheckpointInput, CheckpointPort, CheckpointReason } from "./checkpoint-port";
export { DEFAULT_COMPACTION_THRESHOLD, compactContext } from "./compaction";
export { DMailBox } from "./dmail";
export { LoopGuard, LOOP_STOP_AFTER, LOOP_WARN_AFTER } from "./loop-guard";
export {
  buildSystemPrompt,
  collectAgentsMd,
  DEFAULT_SYSTEM_PROMPT_TEMPLATE,
  SYSTEM_PROMPT_OVERRIDE,
} from "./system-prompt";
export { SUBAGENT_TOOL_NAMES } from "./subagent";
export { createAgentTools } from "./tools";
export { createOpenAIProvider } from "./openai-provider";
export { ProviderError } from "./provider";
export type { ChatMessage, ChatProvider, ChatRequest, ProviderChunk } from "./provider";
export type { AgentTool, ApprovalGate, GateRequest } from "./tools-port";
export type { TitlePort } from "./title-port";
export { DEFAULT_RETRY_POLICY } from "./retry";
export type { RetryPolicy } from "./retry";
export { defaultPrices, priceFor, costUsd } from "./pricing";
