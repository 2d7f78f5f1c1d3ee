export { MemoryService, RECALL_LIMIT } from "./service";
export type { Recall, TurnEnd } from "./service";
export type { CompleteText } from "./policy";
export { decideMemory, MEMORY_DECISION_PROMPT } from "./policy";
export { REFLECTION_PROMPT } from "./reflection";
export { contentWords, isDirectQuestion, rankMemories } from "./ranking";
export { ruleCandidate } from "./rules";
