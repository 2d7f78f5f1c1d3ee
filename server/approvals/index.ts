/** The approval gate, the durable request queue and the rules (ARCHITECTURE.md, Invariants). */
export { ApprovalService } from "./service";
export { matchRules } from "./rule-engine";
export type { RuleLike } from "./rule-engine";
