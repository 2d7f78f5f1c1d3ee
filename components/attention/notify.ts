"use client";

/**
 * System notifications through the Web Notifications API. Permission is only ever asked
 * from a click on a visible control (askPermission), never on page load. One event shown in
 * several tabs (the same session twice, or a session and /approvals) notifies once: the first
 * tab to claim its tag wins, and the tag itself makes the browser replace rather than stack.
 */

export type Permission = NotificationPermission | "unsupported";

/** Claims older than this are forgotten (they only need to outlive the other tabs' reaction). */
const CLAIM_TTL_MS = 60_000;
const CLAIMS_KEY = "worldline.attention.claims";

export function notificationPermission(): Permission {
  if (typeof window === "undefined" || !("Notification" in window)) return "unsupported";
  return Notification.permission;
}

/** Call from a click handler only. */
export async function askPermission(): Promise<Permission> {
  if (notificationPermission() === "unsupported") return "unsupported";
  if (Notification.permission !== "default") return Notification.permission;
  return Notification.requestPermission();
}

/** True while the person is looking elsewhere: the tab is hidden or the window has no focus. */
export function isAway(): boolean {
  return document.visibilityState === "hidden" || !document.hasFocus();
}

/**
 * True for the first tab of this browser to claim `tag`; false if another did already. Tabs
 * hear the same event within a millisecond or two, so the read-and-write runs under a Web Lock
 * (one at a time across the origin's tabs), where the browser has them.
 */
export async function claim(tag: string): Promise<boolean> {
  if (typeof navigator !== "undefined" && navigator.locks)
    return navigator.locks.request("worldline-attention-claims", () => claimInStorage(tag));
  return claimInStorage(tag);
}

function claimInStorage(tag: string): boolean {
  const now = Date.now();
  let claims: Record<string, number> = {};
  try {
    claims = JSON.parse(localStorage.getItem(CLAIMS_KEY) ?? "{}") as Record<string, number>;
  } catch {
    claims = {}; // a damaged entry is replaced below
  }
  for (const [key, at] of Object.entries(claims)) if (now - at > CLAIM_TTL_MS) delete claims[key];
  if (claims[tag]) return false;
  claims[tag] = now;
  try {
    localStorage.setItem(CLAIMS_KEY, JSON.stringify(claims));
  } catch {
    // Without storage every tab notifies; the shared tag still collapses them into one.
  }
  return true;
}

export interface AttentionNotice {
  title: string;
  body: string;
  /** Same tag, same notification: e.g. `approval:<id>`, `turn:<id>`. */
  tag: string;
  onClick?: () => void;
}

/** Shows the notice if allowed and not already shown by another tab; resolves to whether it did. */
export async function showNotification(notice: AttentionNotice): Promise<boolean> {
  if (notificationPermission() !== "granted" || !(await claim(notice.tag))) return false;
  const notification = new Notification(notice.title, {
    body: notice.body,
    tag: notice.tag,
    icon: "/icons/icon-192.png",
  });
  notification.onclick = () => {
    window.focus();
    notification.close();
    notice.onClick?.();
  };
  return true;
}
