"use client";

import { useCallback, useEffect, useRef, useState } from "react";
import { type IdeLayout, LayoutAnswer } from "@/server/protocol";
import { api } from "@/components/transport/client";

export const DEFAULT_LAYOUT: IdeLayout = {
  treeWidth: 240,
  agentWidth: 460,
  bottomHeight: 220,
  treeOpen: true,
  bottomOpen: false,
  theme: "dark",
};
const LOCAL_KEY = "worldline.layout";
/** Dragging a splitter changes sizes many times a second; the server gets the settled value. */
const SAVE_DEBOUNCE_MS = 400;

/**
 * The IDE layout, per user on the server (so another tab or device opens the same),
 * mirrored in localStorage so the first paint doesn't jump.
 */
export function useLayout() {
  const [layout, setLayout] = useState<IdeLayout>(DEFAULT_LAYOUT);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);

  useEffect(() => {
    const local = readLocal();
    if (local) setLayout(local);
    api("/api/v1/settings/layout", LayoutAnswer).then(
      ({ layout: remote }) => {
        if (remote) {
          setLayout(remote);
          writeLocal(remote);
        }
      },
      () => undefined, // offline: the local copy is the best we have
    );
  }, []);

  useEffect(() => {
    document.documentElement.dataset.theme = layout.theme ?? "dark";
  }, [layout.theme]);

  const update = useCallback((patch: Partial<IdeLayout>) => {
    setLayout((current) => {
      const next = { ...current, ...patch };
      writeLocal(next);
      if (timer.current) clearTimeout(timer.current);
      timer.current = setTimeout(
        // Not saved (offline): localStorage keeps it, and the next change sends the whole layout again.
        () => void api("/api/v1/settings/layout", LayoutAnswer, { method: "PUT", body: next }).catch(() => undefined),
        SAVE_DEBOUNCE_MS,
      );
      return next;
    });
  }, []);

  return { layout, update };
}

function readLocal(): IdeLayout | null {
  try {
    const text = localStorage.getItem(LOCAL_KEY);
    return text ? { ...DEFAULT_LAYOUT, ...(JSON.parse(text) as Partial<IdeLayout>) } : null;
  } catch {
    // unavailable or corrupt storage: the default layout
    return null;
  }
}

function writeLocal(layout: IdeLayout): void {
  try {
    localStorage.setItem(LOCAL_KEY, JSON.stringify(layout));
  } catch {
    // Private mode or a full quota: the server copy still holds it.
  }
}
