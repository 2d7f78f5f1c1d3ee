import type { PushDevice, PushSubscriptionBody } from "../protocol";
import type { EndedRun } from "../routines";
import type { EventLog } from "../sessions";
import * as store from "../store";
import { mintActionToken, useActionToken } from "./action-tokens";
import { addressed, decidable, noticeOf, routineNotice, type PendingNotice } from "./notices";
import { post, sendPush } from "./send";
import type { VapidKeys } from "./vapid";

/** A push service that does not answer within this is given up on for now, and tried again later. */
const DEFAULT_TIMEOUT_MS = 10_000;
/** Later tries after a timeout, a 429 or a 5xx: a push service's hiccup is usually over within minutes. */
const DEFAULT_RETRY_DELAYS_MS = [5_000, 30_000, 120_000];
/** A focused tab's row outlives its bridge by at most this (a bridge that died cannot clear it). */
const FOCUS_TTL_MS = 90_000;
/** Rows of tabs still focused are renewed this often, well inside their TTL. */
const FOCUS_REFRESH_MS = 30_000;
/** Old delivery claims and expired action tokens are cleared this often, keeping a day of claims. */
const MAINTENANCE_MS = 10 * 60_000;
const KEEP_DELIVERIES_MS = 24 * 3600_000;
/** Failures logged, by target and kind, each once; a bound so a flood of endpoints cannot grow it. */
const MAX_LOGGED = 1_000;

/** What an owner (`person:<id>` or `token:<name>`) may do on a session: decide, only see, or nothing. */
export type NoticeAccess = "drive" | "view" | null;

export interface NotifierOptions {
  db: store.Db;
  log: EventLog;
  /** The VAPID pair and contact, read (or made, once) on first need: a start makes none. */
  vapid(): Promise<VapidKeys & { subject: string }>;
  title(sessionId: string): Promise<string>;
  access(owner: string, sessionId: string): Promise<NoticeAccess>;
  /** Who a decision made from a notification is recorded as (`decided_by`). */
  decider(owner: string): Promise<string>;
  /** WORLDLINE_NOTIFY_WEBHOOK, and whether it gets action tokens (WORLDLINE_NOTIFY_ACTIONS=1). */
  webhook: { url: string; actions: boolean } | null;
  timeoutMs?: number;
  retryDelaysMs?: number[];
}

/** Whose a device, a tab or a decision is: a person on a hub, else the token's name. */
export function noticeOwner(who: { personId?: string; tokenName?: string | null }): string | null {
  if (who.personId) return `person:${who.personId}`;
  return who.tokenName ? `token:${who.tokenName}` : null;
}

/**
 * Reaches people away from the page: Web Push to each device of everyone who may
 * see the session, and the optional webhook, when a request starts waiting or a turn (or a
 * routine run) ends, never to a person who has the session in a focused tab. Every event is
 * handled off the turn's path: the log's listener only starts the work, so a slow push service
 * never slows a turn. Each (event, device) pair is claimed in the store first, so a deployment's
 * bridges, which all may hear the event, send it once.
 */
export class Notifier {
  private readonly pending = new Set<Promise<void>>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly logged = new Set<string>();
  /** Tabs of this bridge that show a session focused, by viewer (socket id). */
  private readonly focused = new Map<string, { owner: string; sessionId: string }>();
  private focusWrites: Promise<unknown> = Promise.resolve();
  private stopListening: () => void = () => undefined;
  private closed = false;

  private vapid?: Promise<VapidKeys & { subject: string }>;

  constructor(private readonly options: NotifierOptions) {}

  private keys(): Promise<VapidKeys & { subject: string }> {
    // A pair that could not be read is asked for again next time (the error goes to its caller).
    this.vapid ??= this.options.vapid().catch((error: unknown) => {
      this.vapid = undefined;
      throw error;
    });
    return this.vapid;
  }

  async publicKey(): Promise<string> {
    return (await this.keys()).publicKey;
  }

  start(): void {
    this.stopListening = this.options.log.onEvery((sessionId, event) => {
      const notice = noticeOf(event);
      if (notice) this.track(this.dispatch(sessionId, notice));
    });
    this.every(FOCUS_REFRESH_MS, () => this.refreshFocus());
    this.every(MAINTENANCE_MS, () => this.maintain());
  }

  /** A routine run ended (server/routines): its owner's devices and the webhook hear it like a turn's end. */
  routineRun(run: EndedRun): void {
    const notice = routineNotice(run);
    this.track(run.sessionId ? this.dispatch(run.sessionId, notice) : this.dispatchToOwner(run.ownerId, notice));
  }

  async subscribe(owner: string, body: PushSubscriptionBody): Promise<PushDevice> {
    const row = await store.savePushSubscription(this.options.db, {
      owner,
      endpoint: body.endpoint,
      p256dh: body.keys.p256dh,
      auth: body.keys.auth,
      device: body.device,
    });
    return deviceView(row);
  }

  async devices(owner: string): Promise<PushDevice[]> {
    return (await store.listPushSubscriptions(this.options.db, owner)).map(deviceView);
  }

  unsubscribe(owner: string, endpoint: string): Promise<boolean> {
    return store.deletePushSubscription(this.options.db, endpoint, owner);
  }

  /** Who decides with a notification's action token for `approvalId`, using it up; null when it may not. */
  useActionToken(token: string, approvalId: string): Promise<string | null> {
    return useActionToken(this.options.db, token, approvalId);
  }

  /** A tab (`viewer`) shows the session in a focused, visible window, or stopped doing so (or left). */
  focus(viewer: string, owner: string | null, sessionId: string, focused: boolean): Promise<void> {
    const { db } = this.options;
    if (focused && owner) this.focused.set(viewer, { owner, sessionId });
    else this.focused.delete(viewer);
    const write = async (): Promise<void> => {
      if (focused && owner)
        await store.putFocus(db, { viewer, owner, sessionId, expiresAt: new Date(Date.now() + FOCUS_TTL_MS) });
      else await store.deleteFocus(db, viewer);
    };
    // In order per bridge: a blur right after a focus must not be overtaken by it.
    const done = this.focusWrites.then(write, write).then(() => undefined);
    this.focusWrites = done.catch((error: unknown) =>
      this.logOnce("focus", `could not record a focused tab: ${String(error)}`),
    );
    return done;
  }

  /** Resolves when everything started so far has been handled (tests; shutdown). */
  async idle(): Promise<void> {
    await this.focusWrites;
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.stopListening();
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    await this.idle();
    await Promise.allSettled([...this.focused.keys()].map((viewer) => store.deleteFocus(this.options.db, viewer)));
  }

  /**
   * A notice of no session (a routine run that failed before it had one): to the routine owner's
   * devices (a person's, or every token owner's when the token's owner made it) and the webhook;
   * Open lands on the Routines page, where the run says why.
   */
  private async dispatchToOwner(personId: string | null, notice: PendingNotice): Promise<void> {
    const { db, webhook } = this.options;
    const ours = (owner: string) => (personId ? owner === `person:${personId}` : owner.startsWith("token:"));
    const body = JSON.stringify({ ...addressed(notice, "", "Worldline"), url: "/routines" });
    for (const subscription of (await store.listPushSubscriptions(db)).filter((row) => ours(row.owner))) {
      if (await store.claimDelivery(db, notice.key, subscription.id)) this.push(subscription, body, 0);
    }
    if (webhook && (await store.claimDelivery(db, notice.key, "webhook"))) this.hook(webhook.url, body, 0);
  }

  private async dispatch(sessionId: string, notice: PendingNotice): Promise<void> {
    const { db, webhook } = this.options;
    const subscriptions = await store.listPushSubscriptions(db);
    if (subscriptions.length === 0 && !webhook) return;
    const title = await this.options.title(sessionId);
    const focused = await store.focusedOwners(db, sessionId);
    const access = new Map<string, NoticeAccess>();
    for (const owner of new Set(subscriptions.map((subscription) => subscription.owner)))
      access.set(owner, await this.options.access(owner, sessionId));
    const sends = subscriptions
      .filter((subscription) => access.get(subscription.owner) && !focused.has(subscription.owner))
      .map(async (subscription) => {
        if (!(await store.claimDelivery(db, notice.key, subscription.id))) return;
        const token =
          decidable(notice) && notice.approval_id && access.get(subscription.owner) === "drive"
            ? await mintActionToken(db, notice.approval_id, await this.options.decider(subscription.owner))
            : undefined;
        this.push(subscription, JSON.stringify(addressed(notice, sessionId, title, token)), 0);
      });
    // The webhook is the deployment's: nobody watching the session in a focused tab is its rule too.
    if (webhook && focused.size === 0)
      sends.push(
        (async () => {
          if (!(await store.claimDelivery(db, notice.key, "webhook"))) return;
          const token =
            webhook.actions && decidable(notice) && notice.approval_id
              ? await mintActionToken(db, notice.approval_id, "webhook")
              : undefined;
          this.hook(webhook.url, JSON.stringify(addressed(notice, sessionId, title, token)), 0);
        })(),
      );
    await Promise.all(sends);
  }

  private push(subscription: store.PushSubscriptionRow, payload: string, attempt: number): void {
    const { db } = this.options;
    this.track(
      (async () => {
        const result = await sendPush(subscription, payload, await this.keys(), this.timeoutMs);
        if (result.kind === "sent") return;
        if (result.kind === "gone") {
          await store.deletePushSubscription(db, subscription.endpoint);
          return;
        }
        const where = new URL(subscription.endpoint).origin;
        if (result.kind === "refused")
          return this.logOnce(
            `${where}:${result.status}`,
            `a push service (${where}) refused a push: HTTP ${result.status}`,
          );
        this.retry(
          attempt,
          () => this.push(subscription, payload, attempt + 1),
          `${where}:retry`,
          () => `a push service (${where}) did not take a push after ${attempt + 1} tries: ${result.reason}`,
        );
      })(),
    );
  }

  private hook(url: string, body: string, attempt: number): void {
    this.track(
      (async () => {
        const headers = { "content-type": "application/json", "content-length": Buffer.byteLength(body) };
        const status = await post(url, headers, body, this.timeoutMs).catch((error: Error) => error.message);
        if (typeof status === "number" && status >= 200 && status < 300) return;
        const reason = typeof status === "number" ? `HTTP ${status}` : status;
        this.retry(
          attempt,
          () => this.hook(url, body, attempt + 1),
          "webhook",
          () => `WORLDLINE_NOTIFY_WEBHOOK did not take a notice after ${attempt + 1} tries: ${reason}`,
        );
      })(),
    );
  }

  /** Tries again after the next delay, or, out of tries, logs it (once per kind). */
  private retry(attempt: number, again: () => void, logKey: string, message: () => string): void {
    const delays = this.options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS;
    if (attempt >= delays.length) return this.logOnce(logKey, message());
    if (this.closed) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      again();
    }, delays[attempt]);
    timer.unref();
    this.timers.add(timer);
  }

  private get timeoutMs(): number {
    return this.options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  private async refreshFocus(): Promise<void> {
    if (this.focused.size === 0) return;
    await store.refreshFocus(this.options.db, [...this.focused.keys()], new Date(Date.now() + FOCUS_TTL_MS));
  }

  private async maintain(): Promise<void> {
    const { db } = this.options;
    const now = Date.now();
    await store.pruneDeliveries(db, new Date(now - KEEP_DELIVERIES_MS));
    await store.pruneActionTokens(db, new Date(now));
    await store.pruneFocus(db, new Date(now));
  }

  private every(ms: number, task: () => Promise<void>): void {
    const timer = setInterval(() => this.track(task()), ms);
    timer.unref();
    this.timers.add(timer);
  }

  /** Work off the turn's path: a failure is logged once, never thrown into the event log. */
  private track(work: Promise<void>): void {
    const tracked = work.catch((error: unknown) => this.logOnce(`error:${String(error)}`, `notices: ${String(error)}`));
    this.pending.add(tracked);
    void tracked.finally(() => this.pending.delete(tracked));
  }

  private logOnce(key: string, message: string): void {
    if (this.logged.has(key) || this.logged.size >= MAX_LOGGED) return;
    this.logged.add(key);
    process.stderr.write(`[worldline] ${message}\n`);
  }
}

function deviceView(row: store.PushSubscriptionRow): PushDevice {
  return { id: row.id, device: row.device, endpoint: row.endpoint, created_at: row.createdAt.toISOString() };
}
