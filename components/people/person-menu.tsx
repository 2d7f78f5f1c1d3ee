"use client";

import { useEffect, useState } from "react";
import { MeView } from "@/server/protocol";
import { api } from "@/components/transport/client";

/** On a hub: who is signed in, their role, and signing out. Nothing in single-token mode. */
export function PersonMenu() {
  const [me, setMe] = useState<MeView | null>(null);

  useEffect(() => {
    api("/api/v1/me", MeView).then(setMe, () => setMe(null));
  }, []);

  if (!me?.person) return null;
  const { person } = me;

  async function signOut() {
    // The hub answers only same-origin JSON posts; the cookie is HttpOnly, so the hub clears it.
    await fetch("/auth/logout", {
      method: "POST",
      credentials: "same-origin",
      headers: { "content-type": "application/json" },
      body: "{}",
    }).catch(() => undefined); // Signed out or not, the sign-in page is where to go next.
    window.location.assign("/signin");
  }

  return (
    <div className="ml-2 flex items-center gap-2 text-xs text-muted" data-testid="person-menu">
      <span>
        <span className="text-fg" data-testid="person-name">
          {person.display_name ?? person.name}
        </span>{" "}
        ({person.role})
      </span>
      <button type="button" onClick={signOut} className="rounded px-2 py-1 hover:bg-raised hover:text-fg">
        Sign out
      </button>
    </div>
  );
}
