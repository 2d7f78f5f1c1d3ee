export { BudgetGuard } from "./guard";
export type { BudgetDeps, TurnSpend } from "./guard";
