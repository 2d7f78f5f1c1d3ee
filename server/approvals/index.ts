/** The approval gate, the durable request queue and the rules (DESIGN.md §5). */
export { ApprovalService } from "./service";
export type { ApprovalServiceDeps, DecideInput, PasswordRequest } from "./service-types";
export { RuleBook } from "./rules";
export { matchRules } from "./rule-engine";
export type { RuleAction, RuleLike, RuleMatch, RuleSubject } from "./rule-engine";
