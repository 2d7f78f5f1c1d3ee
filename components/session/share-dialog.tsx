"use client";

import * as z from "zod";
import { useCallback, useEffect, useState } from "react";
import { CreatedShareLink, ShareLinkView } from "@/server/protocol";
import { api } from "@/components/transport/client";
import { usePopover } from "@/components/shared/use-popover";
import { useAccess } from "@/components/shared/use-access";
import { SessionPeople } from "@/components/people/session-people";

const EXPIRIES = [
  { label: "1 hour", seconds: 3600 },
  { label: "1 day", seconds: 24 * 3600 },
  { label: "7 days", seconds: 7 * 24 * 3600 },
];

/** Share button + dialog: create view/drive links with an expiry, copy them, revoke them. Owner only. */
export function ShareDialog({ sessionId }: { sessionId: string }) {
  const access = useAccess(sessionId);
  const { open, toggle, root, panel, trigger } = usePopover();
  const [scope, setScope] = useState<"view" | "drive">("view");
  const [expiry, setExpiry] = useState(EXPIRIES[1].seconds);
  const [links, setLinks] = useState<ShareLinkView[]>([]);
  const [created, setCreated] = useState<(CreatedShareLink & { lan_urls?: string[] }) | null>(null);
  const [error, setError] = useState<string | null>(null);

  const refresh = useCallback(() => {
    api(`/api/v1/sessions/${sessionId}/share-links`, z.array(ShareLinkView)).then(setLinks, (err: Error) =>
      setError(err.message),
    );
  }, [sessionId]);
  useEffect(() => {
    if (open) refresh();
  }, [open, refresh]);

  if (access && access.access !== "owner") {
    return (
      <span className="rounded bg-raised px-1.5 py-0.5 text-xs text-fg" data-testid="shared-access">
        {access.access === "view" ? "Shared · view only" : "Shared · can drive"}
      </span>
    );
  }
  if (!access) return null;

  const create = async () => {
    setError(null);
    try {
      const link = await api(`/api/v1/sessions/${sessionId}/share-links`, CreatedShareLink, {
        method: "POST",
        body: { scope, expires_in: expiry },
      });
      setCreated(link);
      refresh();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    }
  };
  const revoke = async (id: string) => {
    await api(`/api/v1/sessions/${sessionId}/share-links/${id}`, ShareLinkView, { method: "DELETE" }).catch(
      (err: Error) => setError(err.message),
    );
    if (created?.id === id) setCreated(null);
    refresh();
  };
  const urls = created
    ? created.lan_urls && created.lan_urls.length > 0
      ? created.lan_urls
      : [`${window.location.origin}${created.path}`]
    : [];

  return (
    <span className="relative" ref={root}>
      <button
        ref={trigger}
        type="button"
        className="rounded px-2 py-0.5 hover:bg-raised hover:text-fg max-md:min-h-[44px] max-md:min-w-[44px]"
        onClick={toggle}
        data-testid="share-button"
        aria-expanded={open}
        aria-haspopup="dialog"
      >
        Share
      </button>
      {open ? (
        <div
          ref={panel as React.RefObject<HTMLDivElement>}
          role="dialog"
          aria-label="Share this session"
          className="absolute right-0 top-7 z-30 w-96 max-w-[95vw] rounded-md border border-border bg-raised p-3 text-fg shadow-lg"
          data-testid="share-dialog"
        >
          <div className="mb-2 flex items-center gap-2">
            <select
              value={scope}
              onChange={(e) => setScope(e.target.value as "view" | "drive")}
              className="rounded border border-border bg-panel px-1 py-0.5"
              aria-label="What the link allows"
              data-testid="share-scope"
            >
              <option value="view">View only</option>
              <option value="drive">Can drive (prompt, approve, terminals)</option>
            </select>
            <select
              value={expiry}
              onChange={(e) => setExpiry(Number(e.target.value))}
              className="rounded border border-border bg-panel px-1 py-0.5"
              aria-label="Link expires after"
              data-testid="share-expiry"
            >
              {EXPIRIES.map((option) => (
                <option key={option.seconds} value={option.seconds}>
                  {option.label}
                </option>
              ))}
            </select>
            <button
              type="button"
              onClick={() => void create()}
              className="ml-auto rounded bg-accent px-2 py-0.5 font-medium text-bg"
              data-testid="share-create"
            >
              Create link
            </button>
          </div>
          {created ? (
            <div className="mb-2 space-y-1" data-testid="share-created">
              {urls.map((url) => (
                <div key={url} className="flex items-center gap-1">
                  <input
                    readOnly
                    value={url}
                    className="min-w-0 flex-1 rounded border border-border bg-panel px-1 py-0.5 font-mono text-xs"
                    aria-label="Share link"
                    data-testid="share-url"
                    onFocus={(e) => e.target.select()}
                  />
                  <button
                    type="button"
                    className="rounded px-1.5 py-0.5 text-xs hover:bg-panel"
                    onClick={() => void navigator.clipboard?.writeText(url)}
                  >
                    Copy
                  </button>
                </div>
              ))}
              {!created.lan_urls?.length ? (
                <p className="text-xs text-muted">
                  Only this machine can open it. For a phone or another computer, start Worldline with
                  WORLDLINE_ALLOW_LAN=1 and HOST set to a LAN address.
                </p>
              ) : null}
            </div>
          ) : null}
          {error ? (
            <p className="mb-2 text-xs text-danger" role="alert">
              {error}
            </p>
          ) : null}
          <ul className="max-h-48 space-y-1 overflow-y-auto text-xs" data-testid="share-links">
            {links.map((link) => (
              <li key={link.id} className="flex items-center gap-2" data-testid="share-link" data-active={link.active}>
                <span className="w-12">{link.scope}</span>
                <span className="flex-1 text-muted">
                  {link.revoked_at
                    ? "revoked"
                    : !link.active
                      ? "expired"
                      : `until ${new Date(link.expires_at ?? "").toLocaleString()}`}
                </span>
                {link.active ? (
                  <button
                    type="button"
                    className="rounded px-1.5 py-0.5 text-danger hover:bg-panel"
                    onClick={() => void revoke(link.id)}
                    data-testid="share-revoke"
                  >
                    Revoke
                  </button>
                ) : null}
              </li>
            ))}
          </ul>
          <SessionPeople sessionId={sessionId} />
        </div>
      ) : null}
    </span>
  );
}
