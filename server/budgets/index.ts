export { BudgetGuard } from "./guard";
