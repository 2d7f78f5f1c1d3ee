export { BudgetGuard, personBudgetToday } from "./guard";
