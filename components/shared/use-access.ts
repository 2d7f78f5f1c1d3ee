"use client";

import { useEffect, useState } from "react";
import { AccessView } from "@/server/protocol";
import { api } from "@/components/transport/client";

/**
 * This page's access: the owner, a share link's scope, or (on a hub) the person's level on a
 * session. Asked once per page load and session, and shared by every component that renders
 * from it (approval cards, the terminal, notifications), so a page never shows a control that
 * the bridge would refuse.
 */
const asked = new Map<string, Promise<AccessView | null>>();
/** An access that could not be read (the bridge restarting) is asked again after this long. */
const RETRY_MS = 2_000;

function askAccess(sessionId = ""): Promise<AccessView | null> {
  const query = sessionId ? `?session_id=${encodeURIComponent(sessionId)}` : "";
  let answer = asked.get(sessionId);
  if (!answer) {
    // A failed ask (offline) is asked again by the next component that mounts.
    answer = api(`/api/v1/access${query}`, AccessView).catch(() => {
      asked.delete(sessionId);
      return null;
    });
    asked.set(sessionId, answer);
  }
  return answer;
}

/** Null until known: render no control that acts on the session until then. */
export function useAccess(sessionId?: string): AccessView | null {
  const [access, setAccess] = useState<AccessView | null>(null);
  useEffect(() => {
    let live = true;
    let retry: ReturnType<typeof setTimeout> | undefined;
    const ask = () =>
      void askAccess(sessionId).then((value) => {
        if (!live) return;
        if (value) setAccess(value);
        else retry = setTimeout(ask, RETRY_MS);
      });
    ask();
    return () => {
      live = false;
      clearTimeout(retry);
    };
  }, [sessionId]);
  return access;
}

/** This page's access on a session, outside a component (a notification deciding whether to speak). */
export function accessOf(sessionId: string): Promise<AccessView | null> {
  return askAccess(sessionId);
}

/**
 * Which of these sessions this page may drive (decide their approvals): for a list across sessions,
 * such as the /approvals queue. Null until every access is known; one that could not be read counts as not.
 */
export function useDrivenSessions(sessionIds: readonly string[]): ReadonlySet<string> | null {
  const key = [...new Set(sessionIds)].sort().join("\n");
  const [driven, setDriven] = useState<{ key: string; sessions: ReadonlySet<string> } | null>(null);
  useEffect(() => {
    let live = true;
    const ids = key ? key.split("\n") : [];
    void Promise.all(ids.map(askAccess)).then((accesses) => {
      if (live) setDriven({ key, sessions: new Set(ids.filter((_id, i) => canDrive(accesses[i]))) });
    });
    return () => {
      live = false;
    };
  }, [key]);
  return driven?.key === key ? driven.sessions : null;
}

/** Whether this page may act on the session: prompt, decide approvals, type in terminals. */
export function canDrive(access: AccessView | null): boolean {
  return access !== null && access.access !== "view";
}

/**
 * Whether this page may change the session itself (its mode), review its changes (accept, revert)
 * or fork it: only its owner. Drive access (a link, or a person's level on a hub) may prompt,
 * decide, rewind and undo, not these (server/sharing/policy.ts).
 */
export function owns(access: AccessView | null): boolean {
  return access?.access === "owner";
}

/** Who decides an approval that a page with view access sees waiting. */
export const DECIDED_BY_OTHERS = "the session's owner or someone with drive access";
