"use client";

import { useSyncExternalStore } from "react";
import type { ApprovalView } from "@/server/protocol";
import { command, getSocket, onMessage } from "@/components/transport/client";

/**
 * The pending queue across all sessions, shared by every component of a tab
 * (nav badge, /approvals page): one socket subscription, refreshed after each
 * reconnect, kept live by `approvals.changed`.
 */

type Listener = () => void;

let pending: ApprovalView[] = [];
/** Bumped on every decision, so the history tab knows to reload. */
let decidedVersion = 0;
let started = false;
const listeners = new Set<Listener>();
const requestListeners = new Set<(approval: ApprovalView) => void>();

function publish(next: ApprovalView[]): void {
  pending = next
    .slice()
    .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.approval_id.localeCompare(b.approval_id));
  for (const listener of listeners) listener();
}

function start(): void {
  if (started || typeof window === "undefined") return;
  started = true;
  const socket = getSocket();
  const subscribe = () => {
    command("approvals.subscribe", {}).then(
      (result) => publish(result.pending),
      // A failed subscribe is retried at the next reconnect; the page shows what it has.
      () => undefined,
    );
  };
  onMessage("approvals.changed", (message) => {
    const others = pending.filter((approval) => approval.approval_id !== message.approval.approval_id);
    if (message.change === "requested") {
      publish([...others, message.approval]);
      for (const listener of requestListeners) listener(message.approval);
    } else {
      decidedVersion += 1;
      publish(others);
    }
  });
  socket.on("connect", subscribe);
  if (socket.connected) subscribe();
}

function subscribeStore(listener: Listener): () => void {
  start();
  listeners.add(listener);
  return () => listeners.delete(listener);
}

const EMPTY: ApprovalView[] = [];

/** Every pending request, oldest first, live. */
export function usePendingApprovals(): ApprovalView[] {
  return useSyncExternalStore(
    subscribeStore,
    () => pending,
    () => EMPTY,
  );
}

/** Changes whenever some request is decided anywhere. */
export function useDecidedVersion(): number {
  return useSyncExternalStore(
    subscribeStore,
    () => decidedVersion,
    () => 0,
  );
}

/** Calls `listener` for each new request (browser notifications). */
export function onNewRequest(listener: (approval: ApprovalView) => void): () => void {
  start();
  requestListeners.add(listener);
  return () => requestListeners.delete(listener);
}
