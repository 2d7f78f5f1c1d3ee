"use client";

import { useCallback, useState } from "react";

/**
 * One request a control makes: busy while it runs (the control is disabled, so a double press
 * does not act twice), and its error kept to show, with the error itself for the callers that
 * read its code (a conflict, what an archive would lose).
 */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  const run = useCallback(async <T>(action: () => Promise<T>): Promise<T | undefined> => {
    setBusy(true);
    setError(null);
    try {
      return await action();
    } catch (err) {
      setError(err);
      return undefined;
    } finally {
      setBusy(false);
    }
  }, []);

  const message = error === null ? null : error instanceof Error ? error.message : String(error);
  return { busy, error, message, run, clear: () => setError(null) };
}
