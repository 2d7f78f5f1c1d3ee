"use client";

import { useEffect, useState, type FormEvent } from "react";
import { formatCost, MyBudgetView, PersonBudgetUsd, type UserView } from "@/server/protocol";
import { api } from "@/components/transport/client";

/** Settings on a hub: your own daily budget (set by an admin) and what your sessions spent today. */
export function MyBudget() {
  const [budget, setBudget] = useState<MyBudgetView | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    api("/api/v1/me/budget", MyBudgetView).then(setBudget, (err: Error) => setError(err.message));
  }, []);
  if (error) return <p className="text-xs text-danger">{error}</p>;
  if (!budget) return null;
  return (
    <section className="flex flex-col gap-1" aria-labelledby="my-budget" data-testid="my-budget">
      <h2 id="my-budget" className="text-xs font-semibold uppercase tracking-wider text-muted">
        Your daily budget
      </h2>
      <p className="text-sm">
        {budget.limit_usd === null
          ? "No daily budget: your sessions' spend is not capped by one."
          : `${formatCost(budget.spent_usd ?? 0)} spent of ${formatCost(budget.limit_usd)} today.`}
      </p>
      {budget.budget_usd !== null && budget.limit_usd !== null && budget.limit_usd > budget.budget_usd ? (
        <p className="text-xs text-muted">
          Your budget is {formatCost(budget.budget_usd)} a day; allowing past it added the rest for today.
        </p>
      ) : null}
    </section>
  );
}

/**
 * An admin's control for one person's daily budget in USD: empty means none. Sent on Enter or
 * when the field loses focus, only if it changed and parses as a budget.
 */
export function PersonBudgetInput({
  person,
  onChange,
}: {
  person: UserView;
  onChange: (budgetUsd: number | null) => Promise<void>;
}) {
  const saved = person.budget_usd === null ? "" : String(person.budget_usd);
  const [draft, setDraft] = useState(saved);
  const [invalid, setInvalid] = useState(false);
  useEffect(() => setDraft(saved), [saved]);

  const commit = async () => {
    if (draft.trim() === saved) return;
    const parsed = PersonBudgetUsd.safeParse(draft.trim() === "" ? null : Number(draft));
    setInvalid(!parsed.success);
    if (parsed.success) await onChange(parsed.data);
  };
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    void commit();
  };

  const id = `budget-${person.id}`;
  return (
    <form onSubmit={submit} className="flex items-center gap-1 text-xs">
      <label htmlFor={id} className="sr-only">
        Daily budget of {person.name} in USD (empty for none)
      </label>
      <span aria-hidden className="text-muted">
        $
      </span>
      <input
        id={id}
        inputMode="decimal"
        value={draft}
        placeholder="no budget"
        aria-invalid={invalid}
        onChange={(e) => setDraft(e.target.value)}
        onBlur={() => void commit()}
        className="w-20 rounded border border-border bg-bg px-1 py-0.5"
        data-testid={`person-budget-${person.name}`}
      />
      <span className="text-muted">/ day</span>
    </form>
  );
}
