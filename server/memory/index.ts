export { MemoryService } from "./service";
export type { MemoryReader, TurnEnd } from "./service";
export { decideMemory } from "./policy";
export { contentWords, isDirectQuestion, rankMemories } from "./ranking";
export { ruleCandidate } from "./rules";
