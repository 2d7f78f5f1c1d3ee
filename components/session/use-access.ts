"use client";

import { useEffect, useState } from "react";
import { AccessView } from "@/server/protocol";
import { api } from "@/components/transport/client";

/**
 * This page's access: the owner, or a share link's scope. Asked once per page load and shared
 * by every component that renders from it (approval cards, the terminal, notifications), so a
 * view link never shows a control that the bridge would refuse.
 */
let asked: Promise<AccessView | null> | null = null;
/** An access that could not be read (the bridge restarting) is asked again after this long. */
const RETRY_MS = 2_000;

function askAccess(): Promise<AccessView | null> {
  // A failed ask (offline) is asked again by the next component that mounts.
  asked ??= api("/api/v1/access", AccessView).catch(() => {
    asked = null;
    return null;
  });
  return asked;
}

/** Null until known: render no control that acts on the session until then. */
export function useAccess(): AccessView | null {
  const [access, setAccess] = useState<AccessView | null>(null);
  useEffect(() => {
    let live = true;
    let retry: ReturnType<typeof setTimeout> | undefined;
    const ask = () =>
      void askAccess().then((value) => {
        if (!live) return;
        if (value) setAccess(value);
        else retry = setTimeout(ask, RETRY_MS);
      });
    ask();
    return () => {
      live = false;
      clearTimeout(retry);
    };
  }, []);
  return access;
}

/** Whether this page may act on the session: prompt, decide approvals, type in terminals. */
export function canDrive(access: AccessView | null): boolean {
  return access !== null && access.access !== "view";
}

/** Who decides an approval a view link sees waiting. */
export const DECIDED_BY_OTHERS = "the session's owner or someone with a drive link";
