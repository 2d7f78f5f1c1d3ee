"use client";

import { useCallback, useEffect, useState } from "react";
import { type CheckpointView, ReviewActionResult, ReviewChanges } from "@/server/protocol";
import { api } from "@/components/transport/client";
import { listCheckpoints } from "./rewind-api";

export interface BaseOption {
  value: string;
  label: string;
}

/**
 * The Changes view's data: the changes against the chosen base, the bases to choose from
 * (the session's start and the start of every turn), and accept/revert. `version` changes
 * whenever the session's log says something moved (a checkpoint, a review action in any tab).
 */
export function useChanges(sessionId: string, base: string, version: string, prompts: Record<number, string>) {
  const path = `/api/v1/sessions/${encodeURIComponent(sessionId)}`;
  const [changes, setChanges] = useState<ReviewChanges | null>(null);
  const [checkpoints, setCheckpoints] = useState<CheckpointView[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const reload = useCallback(() => {
    api(`${path}/changes?base=${encodeURIComponent(base)}`, ReviewChanges).then(
      (next) => {
        setChanges(next);
        setError(null);
      },
      (err: Error) => {
        setChanges(null);
        setError(err.message);
      },
    );
    listCheckpoints(sessionId).then(setCheckpoints, () => undefined);
  }, [path, base, sessionId]);

  useEffect(() => reload(), [reload, version]);

  const act = async (action: "accept" | "revert", body: { path?: string; hunk?: string }) => {
    setBusy(true);
    try {
      await api(`${path}/changes/${action}`, ReviewActionResult, {
        method: "POST",
        body: { base, ...body },
      });
      setError(null);
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
      reload();
    }
  };

  const bases: BaseOption[] = [
    { value: "start", label: "Session start" },
    ...checkpoints
      .filter((checkpoint) => checkpoint.reason === "turn" && checkpoint.has_snapshot)
      .reverse()
      .map((checkpoint) => ({
        value: String(checkpoint.number),
        label: `Before turn ${checkpoint.turn}${prompts[checkpoint.turn] ? `: ${prompts[checkpoint.turn].slice(0, 40)}` : ""}`,
      })),
  ];

  return {
    changes,
    bases,
    error,
    busy,
    accept: (body: { path?: string; hunk?: string }) => act("accept", body),
    revert: (body: { path: string; hunk?: string }) => act("revert", body),
  };
}
