import type { MyBudgetView } from "../protocol";
import * as store from "../store";

/** What a turn has spent so far (its finished steps, every billed attempt), not yet in the store. */
export interface TurnSpend {
  usd: number | null;
  tokens: number;
}

export interface BudgetDeps {
  db: store.Db;
  sessionId: string;
  /** WORLDLINE_DAILY_BUDGET_USD; null = none. */
  dailyUsd: number | null;
  /** Told the session's new budget after an allow raised it (the header and the board show it). */
  sessionBudgetRaised?: (budgetUsd: number) => void;
  /** Asks a person (the approvals queue); true = raise and go on. Absent: a budget simply stops the turn. */
  ask?: (request: { description: string; args: Record<string, unknown>; raise: BudgetRaise }) => Promise<boolean>;
  now?: () => Date;
}

type Scope = "session" | "session_tokens" | "person" | "deployment";

/** What allowing a budget request raises: kept with a turn that waits on it across a restart. */
export interface BudgetRaise {
  scope: Scope;
  step: number;
  personId?: string;
}

interface Over {
  scope: Scope;
  label: string;
  spent: number;
  limit: number;
  /** What "allow" adds. */
  step: number;
  unit: "usd" | "tokens";
  personId?: string;
}

/**
 * Budgets: before each step, the turn's session, its owner's day and the
 * deployment's day are checked against their limits. A step that would start past one waits on a
 * `budget` request; allowing raises that budget by its own size, once, and the same turn goes on.
 */
export class BudgetGuard {
  constructor(private readonly deps: BudgetDeps) {}

  /** "go", or "stop" when a person rejected going past a budget (the turn ends with `stop_reason: "budget"`). */
  async beforeStep(turn: TurnSpend): Promise<"go" | "stop"> {
    for (;;) {
      const over = await this.firstOver(turn);
      if (!over) return "go";
      if (!this.deps.ask) return "stop";
      const raise = { scope: over.scope, step: over.step, ...(over.personId ? { personId: over.personId } : {}) };
      const allowed = await this.deps.ask({ description: describe(over), args: argsOf(over), raise });
      if (!allowed) return "stop";
      await this.raise(raise);
    }
  }

  private async firstOver(turn: TurnSpend): Promise<Over | null> {
    const { db, sessionId } = this.deps;
    const { session, person } = await store.budgetsOfSession(db, sessionId);
    const needsUsage = session?.budgetUsd != null || session?.budgetTokens != null;
    const usage = needsUsage ? await store.sessionUsage(db, sessionId) : null;
    if (session?.budgetUsd != null && usage) {
      const spent = (usage.cost_usd ?? 0) + (turn.usd ?? 0);
      const priced = usage.cost_usd !== null || turn.usd !== null;
      if (priced && spent >= session.budgetUsd) {
        const step = session.budgetStepUsd ?? session.budgetUsd;
        return { scope: "session", label: "The session's budget", spent, limit: session.budgetUsd, step, unit: "usd" };
      }
    }
    if (session?.budgetTokens != null && usage && usage.cost_usd === null && turn.usd === null) {
      const spent = usage.input_tokens + usage.output_tokens + turn.tokens;
      if (spent >= session.budgetTokens) {
        const limit = session.budgetTokens;
        return {
          scope: "session_tokens",
          label: "The session's token budget",
          spent,
          limit,
          step: limit,
          unit: "tokens",
        };
      }
    }
    const day = startOfDay(this.deps.now?.() ?? new Date());
    if (person?.budgetUsd != null) {
      const today = await dayOf(db, person.id, person.budgetUsd, day);
      const spent = (today.spent_usd ?? 0) + (turn.usd ?? 0);
      const limit = today.limit_usd ?? person.budgetUsd;
      if (spent >= limit) {
        const label = "Your budget for today";
        return { scope: "person", label, spent, limit, step: person.budgetUsd, unit: "usd", personId: person.id };
      }
    }
    if (this.deps.dailyUsd !== null) {
      const extra = await raisedToday(db, "deployment", day);
      const spent = ((await store.usageSince(db, day)).cost_usd ?? 0) + (turn.usd ?? 0);
      const limit = this.deps.dailyUsd + extra;
      if (spent >= limit) {
        const label = "The deployment's budget for today";
        return { scope: "deployment", label, spent, limit, step: this.deps.dailyUsd, unit: "usd" };
      }
    }
    return null;
  }

  /** Raises the budget by its own size, as a person allowed. */
  async raise(over: BudgetRaise): Promise<void> {
    const { db, sessionId } = this.deps;
    if (over.scope === "session") {
      const raised = await store.raiseSessionBudget(db, sessionId, over.step);
      if (raised.budgetUsd !== null) this.deps.sessionBudgetRaised?.(raised.budgetUsd);
    } else if (over.scope === "session_tokens") await store.raiseSessionTokenBudget(db, sessionId, over.step);
    else {
      const day = startOfDay(this.deps.now?.() ?? new Date());
      const key = over.scope === "person" ? personKey(over.personId ?? "") : "deployment";
      await store.putSetting(db, raiseKey(key, day), (await raisedToday(db, key, day)) + over.step);
    }
  }
}

/**
 * A person's daily budget today, as the guard counts it: its size, that plus what allowing a `budget`
 * request added today, and what their sessions spent since midnight (GET /api/v1/me/budget).
 */
export async function personBudgetToday(db: store.Db, personId: string, now = new Date()): Promise<MyBudgetView> {
  const { budgetUsd } = (await store.userBudget(db, personId)) ?? { budgetUsd: null };
  if (budgetUsd === null) return { budget_usd: null, limit_usd: null, spent_usd: null };
  return dayOf(db, personId, budgetUsd, startOfDay(now));
}

async function dayOf(db: store.Db, personId: string, budgetUsd: number, day: Date): Promise<MyBudgetView> {
  const [raised, usage] = await Promise.all([
    raisedToday(db, personKey(personId), day),
    store.usageSince(db, day, personId),
  ]);
  return { budget_usd: budgetUsd, limit_usd: budgetUsd + raised, spent_usd: usage.cost_usd };
}

function personKey(personId: string): string {
  return `person.${personId}`;
}

/** What allows added to a daily budget today. */
async function raisedToday(db: store.Db, key: string, day: Date): Promise<number> {
  const value = await store.getSetting(db, raiseKey(key, day));
  return typeof value === "number" ? value : 0;
}

function raiseKey(key: string, day: Date): string {
  return `budget.raised.${key}.${day.toISOString().slice(0, 10)}`;
}

/** Midnight in the bridge's time zone. */
function startOfDay(now: Date): Date {
  return new Date(now.getFullYear(), now.getMonth(), now.getDate());
}

function money(usd: number): string {
  return `$${usd < 1 ? usd.toFixed(4) : usd.toFixed(2)}`;
}

function describe(over: Over): string {
  if (over.unit === "tokens") {
    return (
      `${over.label} is reached: ${over.spent} of ${over.limit} tokens (the model has no known price, so tokens ` +
      `are counted). Allow to raise it by ${over.step} tokens and go on.`
    );
  }
  return `${over.label} is reached: ${money(over.spent)} of ${money(over.limit)}. Allow to raise it by ${money(over.step)} and go on.`;
}

function argsOf(over: Over): Record<string, unknown> {
  const round = (n: number) => Math.round(n * 1e6) / 1e6;
  return over.unit === "tokens"
    ? { budget: over.scope, spent_tokens: over.spent, limit_tokens: over.limit, raise_by_tokens: over.step }
    : { budget: over.scope, spent_usd: round(over.spent), limit_usd: round(over.limit), raise_by_usd: over.step };
}
