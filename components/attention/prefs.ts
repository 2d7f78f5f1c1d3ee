"use client";

import { useCallback, useEffect, useState } from "react";

/**
 * What should call for attention: a system notification and a short sound. Kept in this
 * browser's localStorage, not on the bridge: the notification permission itself is per
 * browser, and a phone may want alerts that the desktop beside it does not. A session can
 * override either choice; unset fields follow the global one.
 */
export interface AttentionPrefs {
  notify: boolean;
  sound: boolean;
}
export type SessionOverride = Partial<AttentionPrefs>;

export const DEFAULT_PREFS: AttentionPrefs = { notify: true, sound: false };
const GLOBAL_KEY = "worldline.attention";
const SESSION_PREFIX = "worldline.attention.session.";
/** Same-tab writes: the `storage` event only reaches other tabs. */
const CHANGED = "worldline:attention-prefs";

function read<T>(key: string, fallback: T): T {
  try {
    const text = localStorage.getItem(key);
    return text ? { ...fallback, ...(JSON.parse(text) as T) } : fallback;
  } catch {
    return fallback; // unreadable or blocked storage: the defaults apply
  }
}

function write(key: string, value: unknown): void {
  try {
    if (value === null) localStorage.removeItem(key);
    else localStorage.setItem(key, JSON.stringify(value));
  } catch {
    // Private mode or a full quota: the choice lasts for this page only.
  }
  window.dispatchEvent(new Event(CHANGED));
}

export function readGlobalPrefs(): AttentionPrefs {
  return read(GLOBAL_KEY, DEFAULT_PREFS);
}

export function readSessionOverride(sessionId: string): SessionOverride {
  return read<SessionOverride>(SESSION_PREFIX + sessionId, {});
}

/** The prefs in force for a session (its override over the global choice), or the global ones. */
export function effectivePrefs(sessionId?: string): AttentionPrefs {
  const global = readGlobalPrefs();
  if (!sessionId) return global;
  const override = readSessionOverride(sessionId);
  return { notify: override.notify ?? global.notify, sound: override.sound ?? global.sound };
}

/** Live prefs for the settings controls; every tab follows a change made in any of them. */
export function useAttentionPrefs(sessionId?: string) {
  const [global, setGlobalState] = useState<AttentionPrefs>(DEFAULT_PREFS);
  const [override, setOverrideState] = useState<SessionOverride>({});

  useEffect(() => {
    const sync = () => {
      setGlobalState(readGlobalPrefs());
      setOverrideState(sessionId ? readSessionOverride(sessionId) : {});
    };
    sync();
    window.addEventListener("storage", sync);
    window.addEventListener(CHANGED, sync);
    return () => {
      window.removeEventListener("storage", sync);
      window.removeEventListener(CHANGED, sync);
    };
  }, [sessionId]);

  const setGlobal = useCallback(
    (patch: Partial<AttentionPrefs>) => write(GLOBAL_KEY, { ...readGlobalPrefs(), ...patch }),
    [],
  );
  const setOverride = useCallback(
    (patch: SessionOverride) => {
      if (!sessionId) return;
      const next: SessionOverride = { ...readSessionOverride(sessionId), ...patch };
      for (const key of Object.keys(next) as (keyof SessionOverride)[]) if (next[key] === undefined) delete next[key];
      write(SESSION_PREFIX + sessionId, Object.keys(next).length ? next : null);
    },
    [sessionId],
  );
  const effective: AttentionPrefs = {
    notify: override.notify ?? global.notify,
    sound: override.sound ?? global.sound,
  };
  return { global, override, effective, setGlobal, setOverride };
}
