"use client";

import { useEffect, useState, type FormEvent } from "react";
import { useSearchParams } from "next/navigation";
import * as z from "zod";
import { sameOriginPath, signInErrorText, SignInOptions, WireError } from "@/server/protocol";

/**
 * A hub's sign-in page: a name and password, and a button for the OpenID Connect provider when
 * one is set up. The cookie it gets is HttpOnly; this page never sees it.
 */
/** A refused sign-in's answer (any other body: the status says enough). */
const FailureAnswer = z.object({ error: WireError.pick({ message: true }) });

export function SignInForm() {
  const params = useSearchParams();
  const next = afterSignIn(params.get("next"));
  const [options, setOptions] = useState<SignInOptions | null>(null);
  const [error, setError] = useState<string | null>(signInErrorText(params.get("error")));
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    fetch("/auth/options", { credentials: "same-origin" })
      .then(async (response) => (response.ok ? SignInOptions.parse(await response.json()) : null))
      .then(setOptions, () => setOptions(null));
  }, []);

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setBusy(true);
    setError(null);
    try {
      const response = await fetch("/auth/login", {
        method: "POST",
        credentials: "same-origin",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: form.get("name"), password: form.get("password") }),
      });
      if (!response.ok) {
        // A body that is not JSON: the status says enough.
        const body = FailureAnswer.safeParse(await response.json().catch(() => null));
        setError(body.success ? body.data.error.message : `Sign-in failed (${response.status}).`);
        return;
      }
      window.location.assign(next);
    } catch {
      // the request itself failed: there is no answer to show
      setError("The hub did not answer. Check your connection and try again.");
    } finally {
      setBusy(false);
    }
  }

  return (
    <div className="flex min-h-full items-center justify-center p-6">
      <div className="w-full max-w-sm rounded-lg border border-border bg-panel p-6 shadow-lg">
        <h1 className="mb-1 text-lg font-semibold">Sign in to Worldline</h1>
        <p className="mb-5 text-sm text-muted">This Worldline is shared: sign in as yourself.</p>
        {options?.oidc ? (
          <>
            <a
              href={`/auth/oidc/start?next=${encodeURIComponent(next)}`}
              data-testid="signin-oidc"
              className="block min-h-9 w-full rounded bg-accent px-3 py-2 text-center font-medium text-bg"
            >
              Sign in with your organization
            </a>
            <div className="my-4 flex items-center gap-3 text-xs text-muted" aria-hidden="true">
              <span className="h-px flex-1 bg-border" />
              or with a password
              <span className="h-px flex-1 bg-border" />
            </div>
          </>
        ) : null}
        <form onSubmit={submit} className="flex flex-col gap-3" aria-describedby={error ? "signin-error" : undefined}>
          <label className="flex flex-col gap-1 text-sm">
            Name
            <input
              name="name"
              required
              autoComplete="username"
              autoCapitalize="none"
              spellCheck={false}
              className="rounded border border-border bg-bg px-2 py-1.5 text-fg"
            />
          </label>
          <label className="flex flex-col gap-1 text-sm">
            Password
            <input
              name="password"
              type="password"
              required
              autoComplete="current-password"
              className="rounded border border-border bg-bg px-2 py-1.5 text-fg"
            />
          </label>
          <p id="signin-error" role="alert" aria-live="assertive" className="min-h-5 text-sm text-danger">
            {error ?? ""}
          </p>
          <button
            type="submit"
            disabled={busy}
            className={`min-h-9 rounded px-3 py-1.5 font-medium disabled:opacity-50 ${
              options?.oidc ? "bg-raised text-fg" : "bg-accent text-bg"
            }`}
          >
            {busy ? "Signing in…" : "Sign in"}
          </button>
        </form>
      </div>
    </div>
  );
}

/** Where to go after signing in: a path of this site (never another host, never back here). */
function afterSignIn(next: string | null): string {
  // Pre-rendered without a window: any origin does, only the path is kept.
  const origin = typeof window === "undefined" ? "http://localhost" : window.location.origin;
  const path = sameOriginPath(next, origin);
  return path.startsWith("/signin") ? "/" : path;
}
