export { AgentRuntime, DEFAULT_MAX_STEPS } from "./runtime";
export type { RuntimeDeps, StartedTurn } from "./runtime";
export type { TurnResult } from "./loop";
export { createOpenAIProvider } from "./openai-provider";
export { ProviderError } from "./provider";
export type { ChatMessage, ChatProvider, ChatRequest, ProviderChunk } from "./provider";
export type { AgentTool, ApprovalGate, GateRequest } from "./tools-port";
export { DEFAULT_RETRY_POLICY } from "./retry";
export type { RetryPolicy } from "./retry";
