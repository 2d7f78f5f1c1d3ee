import { errorMessage, isWorldlineError } from "../errors";
import type { BoardCard, EventEnvelope, EventType } from "../protocol";
import type { EventLog, Session, Sessions } from "../sessions";
import * as store from "../store";
import { NO_ACTIVITY, nextActivity, type Activity } from "./activity";

/** A tab on the board: what it may see, and where its messages go. */
export interface BoardViewer {
  visible(sessionId: string): Promise<boolean>;
  card(card: BoardCard): void;
  removed(id: string): void;
}

/** Events after which a card may look different; deltas and progress lines are not among them. */
const CARD_EVENTS = new Set<EventType>([
  "session.updated",
  "turn.started",
  "turn.completed",
  "turn.error",
  "turn.stage",
  "tool.call",
  "approval.requested",
  "approval.decided",
  "notice",
]);
/** Events read back to find a session's last activity when the board starts following it. */
const ACTIVITY_LOOKBACK = 60;
/** Sessions the board follows at most (the session list's own cap). */
const BOARD_SESSIONS = 200;

/**
 * The board's live cards. While a tab watches, every session's log is followed, so
 * the bus (the database tail, or Redis in team mode) brings other bridges' events too; each event
 * that can change a card rebuilds it from the store, and every viewer that may see the session
 * and has not seen that exact card gets it. A session made on another bridge is heard of through
 * the bus's `elsewhere`. Nothing polls.
 */
export class Board {
  private readonly viewers = new Map<BoardViewer, Map<string, string>>();
  private readonly followed = new Map<string, () => void>();
  private readonly activity = new Map<string, Activity>();
  private readonly building = new Map<string, { again: boolean }>();
  private stops: (() => void)[] = [];

  constructor(
    private readonly deps: {
      db: store.Db;
      sessions: Sessions;
      log: EventLog;
    },
  ) {}

  /** Starts sending cards to `viewer`: one per session it may see now, then each change. */
  async watch(viewer: BoardViewer): Promise<() => void> {
    if (this.viewers.size === 0) this.start();
    this.viewers.set(viewer, new Map());
    const sessions = await this.deps.sessions.list();
    await Promise.all(sessions.slice(0, BOARD_SESSIONS).map((session) => this.follow(session.id)));
    const cards = await this.cards(sessions.slice(0, BOARD_SESSIONS));
    for (const card of cards) await this.offer(viewer, card);
    return () => this.unwatch(viewer);
  }

  /** A session was deleted here: its card goes from every board. */
  removed(sessionId: string): void {
    this.unfollow(sessionId);
    for (const [viewer, sent] of this.viewers) {
      if (sent.delete(sessionId)) viewer.removed(sessionId);
    }
  }

  close(): void {
    for (const viewer of [...this.viewers.keys()]) this.unwatch(viewer);
  }

  private start(): void {
    this.stops = [
      this.deps.log.onEvery((sessionId, event) => this.heard(sessionId, event)),
      this.deps.log.onElsewhere((sessionId) => {
        if (!this.followed.has(sessionId)) void this.follow(sessionId).then(() => this.rebuild(sessionId));
      }),
    ];
  }

  private unwatch(viewer: BoardViewer): void {
    if (!this.viewers.delete(viewer) || this.viewers.size > 0) return;
    for (const stop of this.stops) stop();
    this.stops = [];
    for (const id of [...this.followed.keys()]) this.unfollow(id);
    this.activity.clear();
  }

  private heard(sessionId: string, event: EventEnvelope): void {
    if (this.viewers.size === 0 || !CARD_EVENTS.has(event.type)) return;
    const before = this.activity.get(sessionId) ?? NO_ACTIVITY;
    const after = nextActivity(before, event);
    if (after !== before) this.activity.set(sessionId, after);
    if (!this.followed.has(sessionId)) void this.follow(sessionId);
    this.rebuild(sessionId);
  }

  /** Follows a session's log (its bus watch), and finds its last activity once. */
  private async follow(sessionId: string): Promise<void> {
    if (this.followed.has(sessionId)) return;
    this.followed.set(sessionId, () => undefined);
    try {
      await this.deps.log.open(sessionId);
    } catch {
      this.followed.delete(sessionId); // deleted meanwhile: nothing to follow
      return;
    }
    this.followed.set(
      sessionId,
      this.deps.log.subscribe(sessionId, () => undefined),
    );
    if (this.activity.has(sessionId)) return;
    const last = this.deps.log.lastSeq(sessionId);
    const events = await this.deps.log.read(sessionId, Math.max(0, last - ACTIVITY_LOOKBACK));
    const activity = events.reduce(nextActivity, NO_ACTIVITY);
    if (!this.activity.has(sessionId)) this.activity.set(sessionId, activity);
  }

  private unfollow(sessionId: string): void {
    this.followed.get(sessionId)?.();
    this.followed.delete(sessionId);
    this.activity.delete(sessionId);
  }

  /** Rebuilds a card, at most one build per session at a time (a change during one builds once more after it). */
  private rebuild(sessionId: string): void {
    const running = this.building.get(sessionId);
    if (running) {
      running.again = true;
      return;
    }
    const state = { again: false };
    this.building.set(sessionId, state);
    void (async () => {
      do {
        state.again = false;
        await this.send(sessionId);
      } while (state.again);
    })()
      .catch((error: unknown) => console.error(`[worldline] board card of ${sessionId} failed: ${errorMessage(error)}`)) // the next event rebuilds it
      .finally(() => this.building.delete(sessionId));
  }

  private async send(sessionId: string): Promise<void> {
    const session = await store.getSession(this.deps.db, sessionId);
    if (!session) return this.removed(sessionId);
    const [card] = await this.cards([session]);
    for (const viewer of this.viewers.keys()) await this.offer(viewer, card);
  }

  private async offer(viewer: BoardViewer, card: BoardCard): Promise<void> {
    const sent = this.viewers.get(viewer);
    if (!sent) return;
    const json = JSON.stringify(card);
    if (sent.get(card.id) === json) return;
    const may = await viewer.visible(card.id).catch((error: unknown) => {
      if (!isWorldlineError(error)) console.error(`[worldline] board access check failed: ${errorMessage(error)}`);
      return false; // fails closed: no card rather than one the viewer may not see
    });
    if (!may) return;
    sent.set(card.id, json);
    viewer.card(card);
  }

  private async cards(sessions: Session[]): Promise<BoardCard[]> {
    const views = await this.deps.sessions.fleet(sessions);
    return Promise.all(
      sessions.map(async (session) => {
        const view = views.get(session.id);
        const [usage, approval] = await Promise.all([
          this.deps.sessions.usage(session.id),
          view?.state === "needs_you" ? this.waitingApproval(session.id) : null,
        ]);
        return {
          id: session.id,
          title: session.title,
          workspace: session.workspace.path,
          runner: session.runner ?? null,
          group: view?.worktree?.repo ?? session.workspace.path,
          state: view?.state ?? "idle",
          worktree: view?.worktree ?? null,
          changes: view?.changes ?? null,
          cost_usd: usage.cost_usd,
          budget_usd: session.budgetUsd,
          turn_started_at: view?.turnStartedAt ?? null,
          updated_at: session.updatedAt.toISOString(),
          last_activity: this.activity.get(session.id)?.line ?? null,
          approval,
        };
      }),
    );
  }

  private async waitingApproval(sessionId: string): Promise<BoardCard["approval"]> {
    const [row] = await store.listApprovals(this.deps.db, { status: ["pending"], sessionId, limit: 1 });
    if (!row) return null;
    return { approval_id: row.id, tool: row.tool, description: row.description, risk_level: row.riskLevel };
  }
}
