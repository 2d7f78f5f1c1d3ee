"use client";

import * as z from "zod";
import { useCallback, useEffect, useState, type FormEvent } from "react";
import { ApiTokenView, CreatedApiToken, CreatedUser, type Role, UserView } from "@/server/protocol";
import { api } from "@/components/transport/client";
import { useMe } from "./use-me";
import { Button } from "@/components/shared/button";
import { MyBudget, PersonBudgetInput } from "./budget-controls";

const ROLES: Role[] = ["admin", "member", "viewer"];

/** Settings on a hub: your daily budget, your personal API tokens, and (admins) the people, their roles and budgets. */
export function PeopleSettings() {
  const me = useMe();
  if (!me?.person) return null;
  return (
    <>
      <MyBudget />
      <ApiTokens />
      {me.person.role === "admin" ? <People /> : null}
    </>
  );
}

function ApiTokens() {
  const [tokens, setTokens] = useState<ApiTokenView[]>([]);
  const [created, setCreated] = useState<CreatedApiToken | null>(null);
  const [error, setError] = useState<string | null>(null);
  const refresh = useCallback(() => {
    api("/api/v1/me/tokens", z.array(ApiTokenView)).then(setTokens, (err: Error) => setError(err.message));
  }, []);
  useEffect(refresh, [refresh]);

  const create = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const name = String(new FormData(event.currentTarget).get("name") ?? "").trim();
    try {
      setCreated(await api("/api/v1/me/tokens", CreatedApiToken, { method: "POST", body: { name } }));
      refresh();
    } catch (err) {
      setError((err as Error).message);
    }
  };
  const revoke = async (id: string) => {
    await api(`/api/v1/me/tokens/${encodeURIComponent(id)}`, ApiTokenView, { method: "DELETE" }).catch((err: Error) =>
      setError(err.message),
    );
    refresh();
  };

  return (
    <section className="flex flex-col gap-2" aria-labelledby="api-tokens" data-testid="api-tokens">
      <h2 id="api-tokens" className="text-xs font-semibold uppercase tracking-wider text-muted">
        Personal API tokens
      </h2>
      <p className="text-xs text-muted">
        For scripts and <code>worldline acp --hub</code>: send as <code>Authorization: Bearer …</code>. A token acts as
        you, with your role.
      </p>
      <form onSubmit={(e) => void create(e)} className="flex items-center gap-2 text-sm">
        <label htmlFor="token-name" className="sr-only">
          Token name
        </label>
        <input
          id="token-name"
          name="name"
          required
          placeholder="what it is for"
          className="min-w-0 flex-1 rounded border border-border bg-bg px-2 py-1"
        />
        <Button type="submit" look="primary">
          Create token
        </Button>
      </form>
      {created ? (
        <ShownOnce label="Copy it now, it is not shown again:" secret={created.token} testId="token-created" />
      ) : null}
      <ErrorLine error={error} />
      <ul className="space-y-1 text-sm">
        {tokens.map((token) => (
          <li key={token.id} className="flex items-center gap-2">
            <span className="flex-1">{token.name}</span>
            <span className="text-xs text-muted">
              {token.active
                ? token.last_used_at
                  ? `used ${new Date(token.last_used_at).toLocaleString()}`
                  : "never used"
                : "revoked"}
            </span>
            {token.active ? (
              <button
                type="button"
                onClick={() => void revoke(token.id)}
                className="rounded px-2 py-0.5 text-xs text-danger hover:bg-raised"
              >
                Revoke
              </button>
            ) : null}
          </li>
        ))}
      </ul>
    </section>
  );
}

function People() {
  const [people, setPeople] = useState<UserView[]>([]);
  const [added, setAdded] = useState<{ name: string; password: string } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const refresh = useCallback(() => {
    api("/api/v1/users", z.array(UserView)).then(setPeople, (err: Error) => setError(err.message));
  }, []);
  useEffect(refresh, [refresh]);

  const change = async (name: string, patch: { role?: Role; disabled?: boolean; budget_usd?: number | null }) => {
    setError(null);
    await api(`/api/v1/users/${encodeURIComponent(name)}`, UserView, { method: "PATCH", body: patch }).catch(
      (err: Error) => setError(err.message),
    );
    refresh();
  };
  const add = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setError(null);
    try {
      const result = await api("/api/v1/users", CreatedUser, {
        method: "POST",
        body: { name: String(form.get("name") ?? "").trim(), role: form.get("role") },
      });
      setAdded({ name: result.user.name, password: result.password });
      refresh();
    } catch (err) {
      setError((err as Error).message);
    }
  };

  return (
    <section className="flex flex-col gap-2" aria-labelledby="people" data-testid="people-settings">
      <h2 id="people" className="text-xs font-semibold uppercase tracking-wider text-muted">
        People
      </h2>
      <form onSubmit={(e) => void add(e)} className="flex items-center gap-2 text-sm">
        <label htmlFor="person-name" className="sr-only">
          Sign-in name
        </label>
        <input
          id="person-name"
          name="name"
          required
          placeholder="sign-in name"
          className="min-w-0 flex-1 rounded border border-border bg-bg px-2 py-1"
        />
        <label htmlFor="person-role" className="sr-only">
          Role
        </label>
        <select
          id="person-role"
          name="role"
          defaultValue="member"
          className="rounded border border-border bg-bg px-1 py-1"
        >
          {ROLES.map((role) => (
            <option key={role}>{role}</option>
          ))}
        </select>
        <Button type="submit" look="primary">
          Add person
        </Button>
      </form>
      {added ? <ShownOnce label={`${added.name}'s password (shown once):`} secret={added.password} /> : null}
      <ErrorLine error={error} />
      <ul className="space-y-1 text-sm">
        {people.map((person) => (
          <li key={person.id} className="flex items-center gap-2">
            <span className="flex-1">
              {person.name}
              {person.display_name ? <span className="text-muted"> · {person.display_name}</span> : null}
            </span>
            <label className="sr-only" htmlFor={`role-${person.id}`}>
              Role of {person.name}
            </label>
            <select
              id={`role-${person.id}`}
              value={person.role}
              onChange={(e) => void change(person.name, { role: e.target.value as Role })}
              className="rounded border border-border bg-bg px-1 py-0.5 text-xs"
            >
              {ROLES.map((role) => (
                <option key={role}>{role}</option>
              ))}
            </select>
            <PersonBudgetInput person={person} onChange={(budget) => change(person.name, { budget_usd: budget })} />
            <button
              type="button"
              onClick={() => void change(person.name, { disabled: !person.disabled })}
              className="rounded px-2 py-0.5 text-xs hover:bg-raised"
            >
              {person.disabled ? "Enable" : "Disable"}
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}

/** A secret the bridge returns once (a new token, a new person's password), ready to copy. */
function ShownOnce({ label, secret, testId }: { label: string; secret: string; testId?: string }) {
  return (
    <p className="text-xs" data-testid={testId}>
      {label} <code className="select-all break-all rounded bg-raised px-1">{secret}</code>
    </p>
  );
}

function ErrorLine({ error }: { error: string | null }) {
  if (!error) return null;
  return (
    <p className="text-xs text-danger" role="alert">
      {error}
    </p>
  );
}
