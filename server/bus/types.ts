/** How another process's appends to a session's event log become known here (server/sessions/event-log.ts). */
export interface LogBus {
  /** This process has written the session's log up to `seq` (committed). */
  published(sessionId: string, seq: number): void;
  /**
   * Starts telling `ended` when another process wrote past what this one knows, for the
   * sessions `watching` lists (session id → last seq known here).
   */
  start(hooks: LogBusHooks): void;
  /** This process created or decided an approval request (committed). */
  approvalsChanged(): void;
  close(): Promise<void>;
}

export interface LogBusHooks {
  ended(sessionId: string, seq: number): void;
  /** Another process wrote to a session this one does not watch (Redis only: the board learns of new sessions). */
  elsewhere?(sessionId: string): void;
  watching(): Map<string, number>;
  /** Another process created or decided an approval request; told only while `watchingApprovals()`. */
  approvalsChanged(): void;
  watchingApprovals(): boolean;
}
