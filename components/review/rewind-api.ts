import * as z from "zod";
import { CheckpointDiff, CheckpointView, RewindResult } from "@/server/protocol";
import { api, BridgeError } from "@/components/transport/client";

/** What to put back: the conversation, the files, or both. */
export type RewindMode = "both" | "conversation" | "files";

export type RewindOutcome = { ok: true; result: RewindResult } | { ok: false; conflict: string[] };

const sessionPath = (sessionId: string) => `/api/v1/sessions/${encodeURIComponent(sessionId)}`;

export function listCheckpoints(sessionId: string): Promise<CheckpointView[]> {
  return api(`${sessionPath(sessionId)}/checkpoints`, z.array(CheckpointView));
}

export function checkpointDiff(sessionId: string, checkpointId: string): Promise<CheckpointDiff> {
  return api(`${sessionPath(sessionId)}/checkpoints/${encodeURIComponent(checkpointId)}/diff`, CheckpointDiff);
}

/** Rewinds; a 409 (files edited outside the agent) comes back as the conflicting paths instead of an error. */
export async function rewindTo(
  sessionId: string,
  checkpoint: string,
  mode: RewindMode,
  force = false,
): Promise<RewindOutcome> {
  try {
    const result = await api(`${sessionPath(sessionId)}/rewind`, RewindResult, {
      method: "POST",
      body: { checkpoint, conversation: mode !== "files", files: mode !== "conversation", force },
    });
    return { ok: true, result };
  } catch (err) {
    if (err instanceof BridgeError && err.code === "checkpoint:conflict") {
      return { ok: false, conflict: (err.details as { paths?: string[] } | undefined)?.paths ?? [] };
    }
    throw err;
  }
}

export function undoRewind(sessionId: string): Promise<RewindResult> {
  return api(`${sessionPath(sessionId)}/rewind/undo`, RewindResult, { method: "POST", body: {} });
}

export function describeRewind(result: RewindResult): string {
  const parts = [
    result.conversation ? "conversation" : null,
    result.files ? `files (${result.written.length} written, ${result.deleted.length} deleted)` : null,
  ].filter(Boolean);
  const untouched = result.untouched.length ? `; left alone: ${result.untouched.join(", ")}` : "";
  return `Rewound ${parts.join(" and ")}${untouched}.`;
}

/** The checkpoint taken as turn `number` started: "just before its message was sent". */
export function turnStart(checkpoints: CheckpointView[], number: number): CheckpointView | undefined {
  return checkpoints.find((checkpoint) => checkpoint.turn === number && checkpoint.reason === "turn");
}
