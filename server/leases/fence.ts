import { FencedError } from "../store";

/**
 * The claim a running turn's writes are fenced on (ARCHITECTURE.md, "Fencing"): its session, the
 * turn, and the epoch the claim was taken at. The runtime registers one with the event log while
 * the turn runs (`EventLog.fence`); the turn's events, checkpoint rows and approval requests are
 * then written only while the session is still at that epoch. The first write the store refuses
 * calls `lose`: the turn is told once (it logs and stops), and later writes for it are dropped.
 */
export class TurnFence {
  private lostTo: FencedError | null = null;

  constructor(
    readonly sessionId: string,
    readonly turnId: string,
    readonly epoch: number,
    private readonly onLost: (error: FencedError) => void,
  ) {}

  get lost(): boolean {
    return this.lostTo !== null;
  }

  /** The store refused a write on this claim (or a heartbeat saw the epoch move): tells the turn, once. */
  lose(error: FencedError = new FencedError(this.sessionId, this.epoch)): void {
    if (this.lostTo) return;
    this.lostTo = error;
    this.onLost(error);
  }
}
