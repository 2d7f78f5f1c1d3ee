/** The approval gate, the durable request queue and the rules (DESIGN.md §5). */
export { ApprovalService } from "./service";
export { matchRules } from "./rule-engine";
export type { RuleLike } from "./rule-engine";
